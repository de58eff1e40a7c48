/**
 * The limits on what an MCP client may send, checked before anything of a
 * request reaches the SDK, a tool or the audit log.
 *
 * @module
 */

/** The deepest a JSON-RPC message (or batch) may nest; MCP messages nest a handful of levels. */
export const MAX_MESSAGE_DEPTH = 32;

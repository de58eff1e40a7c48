/**
 * The audit entry of one MCP call: an `McpCalled` event on the key's stream,
 * appended before the call is answered.
 *
 * @module
 */
import { type EventStore, RateRefusedError, type TokenTake } from "../../events/store.ts";
import type { AgentKey } from "../../projections/key_scopes.ts";
import type { OAuthVia } from "../auth/mcp_auth.ts";
import { AUDIT_ACTIONS } from "./texts.ts";

/** Who made a call: the key, its masked value and the end user it named. */
export interface Caller {
  key: AgentKey;
  maskedKey: string;
  /** The `X-Sergo-End-User` value, if sent. */
  endUser: string | null;
  /** The app, when the call came with an OAuth access token acting as the key. */
  oauth?: OAuthVia;
  /** The console's address as the caller reached it (no trailing slash), for links in answers. */
  consoleUrl?: string;
}

/** One call to audit. */
export interface AuditedCall {
  tool: string;
  arguments: Record<string, unknown>;
  details: Record<string, unknown>;
  isError: boolean;
  durationMs: number;
  /** The server shape that answered, when not the reference's (see `shape.ts`). */
  shape?: "chatgpt";
  /** The audit action, when not the reference's for the tool (see {@linkcode auditAction}). */
  action?: string;
}

/** The error raised when a call's audit entry could not be written. */
export class AuditError extends Error {
  override name = "AuditError";
}

/** The audit action of a tool, such as `mcp search`. */
export function auditAction(tool: string): string {
  return Object.hasOwn(AUDIT_ACTIONS, tool)
    ? AUDIT_ACTIONS[tool as keyof typeof AUDIT_ACTIONS]
    : "mcp unknown tool";
}

/**
 * Appends the call's `McpCalled` event and resolves once it is durable;
 * rejects with an {@linkcode AuditError}. With `token` (replicas' shared rate
 * buckets) the call's rate-limit token is taken in the same statement: an
 * empty bucket writes nothing and rejects with the store's
 * `RateRefusedError`.
 */
export async function appendAudit(
  store: EventStore,
  caller: Caller,
  call: AuditedCall,
  now: Date,
  token: TokenTake | null = null,
): Promise<void> {
  const key = caller.key;
  try {
    await store.append(`key-${key.key_id}`, [{
      type: "McpCalled",
      data: {
        key_id: key.key_id,
        person_id: key.person_id,
        key_name: key.name,
        masked_key: caller.maskedKey,
        end_user: caller.endUser,
        tool: call.tool.slice(0, 200),
        arguments: call.arguments,
        action: call.action ?? auditAction(call.tool),
        details: caller.oauth
          ? { ...call.details, oauth_app: caller.oauth.client_name, oauth_grant: caller.oauth.grant_id }
          : call.details,
        is_error: call.isError,
        duration_ms: Math.max(0, Math.round(call.durationMs * 1000) / 1000),
        // Left out for the reference's shape, so its entries are the same bytes as before shapes existed.
        ...(call.shape ? { shape: call.shape } : {}),
      },
      metadata: {
        time: now.toISOString(),
        actor: `key-${key.key_id}`,
        ...(caller.endUser !== null ? { end_user: caller.endUser } : {}),
      },
    }], { expectedVersion: "any", ...(token ? { takeToken: token } : {}) });
  } catch (error) {
    if (error instanceof RateRefusedError) throw error;
    throw new AuditError(
      `This call could not be written to the audit log, so it was not answered: ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
  }
}

/**
 * The limits on what an MCP client may send, checked before anything of a
 * request reaches the SDK, a tool or the audit log.
 *
 * @module
 */
import { nestsDeeperThan } from "../../events/json_depth.ts";

/** The deepest a JSON-RPC message (or batch) may nest; MCP messages nest a handful of levels. */
export const MAX_MESSAGE_DEPTH = 32;

/** The longest `search` query, in characters: a question or a few plain words fit many times over. */
export const MAX_QUERY_CHARS = 4_000;

/** The longest value of any other string argument (a document id, a format, a folder name), in characters. */
export const MAX_STRING_CHARS = 200;

/** The most folder names one call may list. */
export const MAX_FOLDERS = 50;

/** The most arguments one call may send, named or not. */
export const MAX_ARGUMENTS = 20;

/** The deepest the arguments object may nest (the object itself is 1, a list of folders in it 2). */
export const MAX_ARGUMENTS_DEPTH = 4;

/** The arguments each tool takes, as its input schema names them: all an audit entry keeps. */
const NAMED_ARGUMENTS: Readonly<Record<string, readonly string[]>> = {
  search: ["query", "limit", "offset", "folders"],
  list_documents: ["folders", "limit", "offset"],
  read_document: ["document_id", "page", "to_page"],
  view_page: ["document_id", "page", "format"],
};

function count(n: number): string {
  return n.toLocaleString("en-US");
}

function stringLimit(name: string): number {
  return name === "query" ? MAX_QUERY_CHARS : MAX_STRING_CHARS;
}

/**
 * Why a call's arguments are refused, in one sentence that names the limit;
 * null when they are within every limit. Checked before the tool runs, so
 * an oversized call is answered as a tool error and audited capped.
 */
export function argumentsProblem(args: Record<string, unknown>): string | null {
  const names = Object.keys(args);
  if (names.length > MAX_ARGUMENTS) {
    return `A call may send at most ${MAX_ARGUMENTS} arguments; this one sent ${count(names.length)}.`;
  }
  if (nestsDeeperThan(args, MAX_ARGUMENTS_DEPTH)) {
    return `The arguments may nest at most ${MAX_ARGUMENTS_DEPTH} levels deep.`;
  }
  for (const name of names) {
    const value = args[name];
    const limit = stringLimit(name);
    if (typeof value === "string" && value.length > limit) {
      return `\`${name}\` may be at most ${count(limit)} characters; this one has ${count(value.length)}.`;
    }
    if (!Array.isArray(value)) continue;
    if (value.length > MAX_FOLDERS) {
      return `\`${name}\` may list at most ${MAX_FOLDERS} names; this one lists ${count(value.length)}.`;
    }
    const long = value.find((item) => typeof item === "string" && item.length > MAX_STRING_CHARS);
    if (long !== undefined) {
      return `Each name in \`${name}\` may be at most ${MAX_STRING_CHARS} characters; one has ${
        count((long as string).length)
      }.`;
    }
  }
  return null;
}

function capped(name: string, value: unknown): unknown {
  if (typeof value === "string") return value.slice(0, stringLimit(name));
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (Array.isArray(value)) {
    return value.slice(0, MAX_FOLDERS).map((item) =>
      typeof item === "string" ? item.slice(0, MAX_STRING_CHARS) : `(${typeof item})`
    );
  }
  return `(${typeof value})`;
}

/**
 * What the audit entry keeps of a call's arguments: only those the tool
 * takes (none for an unknown tool), strings and lists cut to their limits,
 * anything else named by its type. An entry stays small whatever was sent.
 */
export function auditArguments(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const name of Object.hasOwn(NAMED_ARGUMENTS, tool) ? NAMED_ARGUMENTS[tool]! : []) {
    if (Object.hasOwn(args, name) && args[name] !== undefined) kept[name] = capped(name, args[name]);
  }
  return kept;
}

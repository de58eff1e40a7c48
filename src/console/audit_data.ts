/**
 * The audit page's data: the filters from the query string, checked, and the
 * page of entries they select from the audit view.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { AuditCalls } from "../../events/postgres/audit_calls.ts";
import {
  auditActionsFrom,
  type AuditEntry,
  auditKeyNames,
  queryAuditFrom,
  timeBound,
} from "../../projections/audit_view.ts";
import type { AuditQuery } from "./pages/audit_page.tsx";

/** Entries per page of the audit view. */
const PER_PAGE = 100;

/** What the audit page shows for a query string. */
export interface AuditPageData {
  query: AuditQuery;
  error?: string;
  entries: AuditEntry[];
  nextBefore?: number;
  keyNames: string[];
  actions: string[];
  paged?: boolean;
}

/** Checks the audit filters of a URL; returns the message of the first bad one, or null. */
export function checkAuditQuery(query: AuditQuery, before: string | null): string | null {
  for (const side of ["from", "to"] as const) {
    const value = query[side];
    if (value === "") continue;
    if (value.length > 40) {
      return `"${side === "from" ? "From" : "To"}" is too long: give a date such as 2025-01-31.`;
    }
    try {
      timeBound(value, side);
    } catch {
      return `"${
        side === "from" ? "From" : "To"
      }" must be a date such as 2025-01-31 or a time such as 2025-01-31T08:00Z, not "${value}".`;
    }
  }
  if (query.from !== "" && query.to !== "" && timeBound(query.from, "from") > timeBound(query.to, "to")) {
    return `"From" (${query.from}) is after "To" (${query.to}).`;
  }
  if (query.end_user.length > 200) return "The end user is too long: at most 200 characters.";
  if (query.key.length > 64 || query.action.length > 64) return "The key or action filter is too long.";
  if (before !== null && !/^\d{1,15}$/.test(before)) return `The page cursor "${before}" is not a number.`;
  return null;
}

/**
 * Reads the filters of a URL and the entries they select for a person (with
 * the shared log's MCP calls, `calls`, read from its database).
 */
export async function auditPageData(
  db: DatabaseSync,
  calls: AuditCalls | null,
  personId: string,
  url: URL,
): Promise<AuditPageData> {
  const param = (name: string) => (url.searchParams.get(name) ?? "").trim();
  const query: AuditQuery = {
    from: param("from"),
    to: param("to"),
    key: param("key"),
    end_user: param("end_user"),
    action: param("action"),
    system: param("system") === "1" ? "1" : "",
  };
  const before = url.searchParams.get("before");
  const keyNames = auditKeyNames(db, personId);
  const actions = await auditActionsFrom(db, calls, personId);
  const error = checkAuditQuery(query, before);
  if (error) return { query, error, entries: [], keyNames, actions };
  const page = await queryAuditFrom(db, calls, {
    personId,
    ...(query.from ? { from: query.from } : {}),
    ...(query.to ? { to: query.to } : {}),
    ...(query.key ? { keyName: query.key } : {}),
    ...(query.end_user ? { endUser: query.end_user } : {}),
    ...(query.action ? { action: query.action } : {}),
    // People's and agents' actions by default; the system's own work when asked for, or its action is.
    withoutSystem: query.system !== "1" && query.action === "",
    ...(before ? { before: Number(before) } : {}),
    limit: PER_PAGE,
  });
  return {
    query,
    entries: page.entries,
    nextBefore: page.next_before,
    keyNames,
    actions,
    paged: before !== null,
  };
}

/** @jsxImportSource preact */
/**
 * The audit view: a person's entries, newest first, filtered by time, key,
 * end user and action, with export buttons (JSONL and CSV).
 *
 * @module
 */
import type { VNode } from "preact";
import type { AuditEntry } from "../../../projections/audit_view.ts";
import { Alert, Layout, type PageContext, Time } from "./layout.tsx";

/** The filters as given in the query string. */
export interface AuditQuery {
  from: string;
  to: string;
  key: string;
  end_user: string;
  action: string;
}

/** Options of {@linkcode AuditPage}. */
export interface AuditPageProps {
  context: PageContext;
  query: AuditQuery;
  /** A message when the filters are not valid (then no entries are shown). */
  error?: string;
  entries: readonly AuditEntry[];
  /** The cursor of the next (older) page. */
  nextBefore?: number;
  keyNames: readonly string[];
  actions: readonly string[];
}

function detailText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** Builds a query string from the filters, leaving out the empty ones. */
export function auditSearch(query: AuditQuery, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, ...extra })) {
    if (value !== "") params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The audit page. */
export function AuditPage(props: AuditPageProps): VNode {
  const q = props.query;
  const exportQuery = { from: q.from, to: q.to, key: q.key, end_user: "", action: "" };
  return (
    <Layout context={props.context} title="Audit" scripts={["audit.js"]}>
      <header class="page-head">
        <div>
          <h1>Audit</h1>
          <p class="muted">Every MCP call and every change to your documents and keys, newest first.</p>
        </div>
        <div class="exports">
          <a
            class="button"
            href={`/api/audit/export${auditSearch(exportQuery, { format: "jsonl" })}`}
            download
          >
            Export JSONL
          </a>
          <a class="button" href={`/api/audit/export${auditSearch(exportQuery, { format: "csv" })}`} download>
            Export CSV
          </a>
        </div>
      </header>
      <form method="get" action="/audit" class="filters card" id="audit-filters" novalidate>
        <label>
          From
          <input type="text" name="from" value={q.from} placeholder="YYYY-MM-DD" />
        </label>
        <label>
          To
          <input type="text" name="to" value={q.to} placeholder="YYYY-MM-DD" />
        </label>
        <label>
          Key
          <select name="key">
            <option value="">Any key</option>
            {props.keyNames.map((name) => (
              <option key={name} value={name} selected={q.key === name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          End user
          <input type="text" name="end_user" value={q.end_user} placeholder="X-Sergo-End-User" />
        </label>
        <label>
          Action
          <select name="action">
            <option value="">Any action</option>
            {props.actions.map((a) => <option key={a} value={a} selected={q.action === a}>{a}</option>)}
          </select>
        </label>
        <div class="filter-buttons">
          <button type="submit" class="primary">Filter</button>
          <a href="/audit" class="button">Clear</a>
        </div>
        <Alert>{props.error}</Alert>
      </form>
      {props.error
        ? null
        : props.entries.length === 0
        ? <p class="empty">No entries match.</p>
        : (
          <div class="table-wrap">
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Action</th>
                  <th scope="col">Who</th>
                  <th scope="col">Key</th>
                  <th scope="col">End user</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {props.entries.map((e) => (
                  <tr key={e.position} data-action={e.action} data-position={String(e.position)}>
                    <td class="nowrap">
                      <Time iso={e.time} />
                    </td>
                    <td class="nowrap">
                      <span class="action">{e.action}</span>
                    </td>
                    <td>{e.actor}</td>
                    <td>
                      {e.key_name && <span class="key-name">{e.key_name}</span>}
                      {e.masked_key && <code class="masked">{e.masked_key}</code>}
                    </td>
                    <td>{e.end_user ?? ""}</td>
                    <td>
                      <dl class="details">
                        {Object.entries(e.details).map(([name, value]) => (
                          <div key={name}>
                            <dt>{name}</dt>
                            <dd>{detailText(value)}</dd>
                          </div>
                        ))}
                      </dl>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      {props.nextBefore !== undefined && (
        <p>
          <a class="button" href={`/audit${auditSearch(q, { before: String(props.nextBefore) })}`}>
            Older entries
          </a>
        </p>
      )}
    </Layout>
  );
}

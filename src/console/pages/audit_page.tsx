/** @jsxImportSource preact */
/**
 * The audit view: a person's entries, newest first, filtered by time, key,
 * end user and action, with export buttons (JSONL and CSV).
 *
 * @module
 */
import type { VNode } from "preact";
import type { AuditEntry } from "../../../projections/audit_view.ts";
import { auditError, auditSentence } from "../audit_sentences.ts";
import { Alert, Layout, type PageContext, Time } from "./layout.tsx";

/** The filters as given in the query string. */
export interface AuditQuery {
  from: string;
  to: string;
  key: string;
  end_user: string;
  action: string;
  /** "1" to show the system's own work (processing, PDF copies, lease renewals) too. */
  system: string;
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
  /** Whether this is an older page (a `before` cursor). */
  paged?: boolean;
}

/** A detail's value as a person reads it: lists joined, objects as "name: value" pairs, never raw JSON. */
export function detailText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map(detailText).join(", ");
  return Object.entries(value as Record<string, unknown>)
    .map(([name, inner]) => `${name.replaceAll("_", " ")}: ${detailText(inner)}`)
    .join("; ");
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
  const exportQuery = { from: q.from, to: q.to, key: q.key, end_user: "", action: "", system: "" };
  return (
    <Layout context={props.context} title="Audit" scripts={["audit.js"]}>
      <header class="page-head">
        <div>
          <h1>Audit</h1>
          <p class="muted">
            Every MCP call and every change to your documents and keys, newest first. {q.system === "1"
              ? "With the system's own work (processing, PDF copies, lease renewals)."
              : "People's and agents' actions; the system's own work is behind the filter below."}
          </p>
        </div>
        <div class="exports">
          <a
            class="button"
            href={`/api/audit/export${auditSearch(exportQuery, { format: "jsonl" })}`}
            download
            title="One .jsonl file: a record per line, the signed manifest on the last line"
          >
            Export JSONL (.jsonl file)
          </a>
          <a
            class="button"
            href={`/api/audit/export${auditSearch(exportQuery, { format: "csv" })}`}
            download
            title="A .zip holding the .csv and its signed manifest (.json)"
          >
            Export CSV (.zip: CSV + manifest)
          </a>
          <p class="hint">
            Exports hold the signed trail of the From, To and Key filters: who, which key and end user, which
            document (id, name, sha256) and pages, when — never the documents' text. Check one with{" "}
            <code>sergo audit verify FILE --public-key KEY.pem</code>, where KEY.pem is this install's key
            (<code>sergo audit public-key &gt; KEY.pem</code>).
          </p>
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
        <label class="check">
          <input type="checkbox" name="system" value="1" checked={q.system === "1"} />
          Show system work too (processing, PDF copies, lease renewals)
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
                  <th scope="col">What happened</th>
                  <th scope="col">Who</th>
                </tr>
              </thead>
              <tbody>
                {props.entries.map((e) => {
                  const error = auditError(e);
                  return (
                    <tr
                      key={e.position}
                      data-action={e.action}
                      data-position={String(e.position)}
                      class={error ? "error" : undefined}
                    >
                      <td class="nowrap" data-label="When">
                        <Time iso={e.time} />
                      </td>
                      <td data-label="What">
                        {error && <span class="badge bad">Error</span>}{" "}
                        <span class="sentence">{auditSentence(e)}</span>
                        {error?.reason && <span class="error-reason">{error.reason}</span>}
                        <details class="more">
                          <summary>Details</summary>
                          <dl class="details">
                            {Object.entries(e.details).map(([name, value]) => (
                              <div key={name}>
                                <dt>{name.replaceAll("_", " ")}</dt>
                                <dd>{detailText(value)}</dd>
                              </div>
                            ))}
                          </dl>
                        </details>
                      </td>
                      <td data-label="Who">
                        <span class="who-line">{e.actor}</span>
                        {e.end_user && <span class="end-user">for end user {e.end_user}</span>}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      <nav class="pager" aria-label="Audit pages">
        {props.paged && <a class="button" href={`/audit${auditSearch(q)}`}>Newest entries</a>}
        {props.entries.length > 0 && (
          <span class="muted">
            {props.entries.length} entries shown, positions{" "}
            {props.entries.at(-1)!.position}–{props.entries[0]!
              .position}
          </span>
        )}
        {props.nextBefore !== undefined && (
          <a class="button" rel="next" href={`/audit${auditSearch(q, { before: String(props.nextBefore) })}`}>
            Older entries
          </a>
        )}
      </nav>
    </Layout>
  );
}

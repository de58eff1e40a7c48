/**
 * The audit REST handlers, mounted by the API under `/api/audit`:
 * `GET /api/audit` (entries, filtered and paged), `GET /api/audit/export`
 * (a streamed JSONL download, or for CSV a zip of the CSV and its manifest),
 * and `GET /api/audit/public-key`.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { EventStore } from "../../events/store.ts";
import type { AuditCalls } from "../../events/postgres/audit_calls.ts";
import { queryAuditFrom, timeBound } from "../../projections/audit_view.ts";
import { exportAudit } from "./export.ts";
import { ensureSigningKey, publicKeyPem } from "./signing_key.ts";

/** What the audit handlers need. */
export interface AuditRouteDeps {
  projectionsDb: DatabaseSync;
  dataDir: string;
  /** The SQLite log's path (preferred), or … */
  eventsDbPath?: string;
  /** … the event store. */
  store?: EventStore;
  /** The shared log's MCP calls, which its audit view reads from its database (absent on the embedded log). */
  auditCalls?: AuditCalls | null;
}

/** A handler for an authenticated person. */
export type AuditHandler = (request: Request, personId: string, deps: AuditRouteDeps) => Promise<Response>;

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
  });

class BadRequest extends Error {}

function timeParam(params: URLSearchParams, side: "from" | "to"): string | undefined {
  const value = params.get(side) ?? undefined;
  if (value === undefined) return undefined;
  try {
    timeBound(value, side);
  } catch {
    throw new BadRequest(`Cannot read "${side}" "${value}": expected an ISO 8601 date or time`);
  }
  return value;
}

function intParam(params: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new BadRequest(`"${name}" must be a whole number from ${min} to ${max}, not "${value}"`);
  }
  return n;
}

/** `GET /api/audit`: the person's entries, newest first (`from`, `to`, `key`, `key_id`, `end_user`, `action`, `limit`, `before`). */
export async function listAudit(request: Request, personId: string, deps: AuditRouteDeps): Promise<Response> {
  try {
    const params = new URL(request.url).searchParams;
    const page = await queryAuditFrom(deps.projectionsDb, deps.auditCalls ?? null, {
      personId,
      from: timeParam(params, "from"),
      to: timeParam(params, "to"),
      keyName: params.get("key") ?? undefined,
      keyId: params.get("key_id") ?? undefined,
      endUser: params.get("end_user") ?? undefined,
      action: params.get("action") ?? undefined,
      limit: intParam(params, "limit", 1, 1000) ?? 50,
      before: intParam(params, "before", 1, Number.MAX_SAFE_INTEGER),
    });
    return json(page);
  } catch (error) {
    if (error instanceof BadRequest) return json({ error: error.message }, 400);
    throw error;
  }
}

/** `GET /api/audit/export?format=jsonl|csv&from=…&to=…&key=…`: a streamed, signed export. */
export async function exportAuditDownload(
  request: Request,
  personId: string,
  deps: AuditRouteDeps,
): Promise<Response> {
  let format: "jsonl" | "csv", from: string | undefined, to: string | undefined;
  const params = new URL(request.url).searchParams;
  try {
    const asked = params.get("format") ?? "jsonl";
    if (asked !== "jsonl" && asked !== "csv") {
      throw new BadRequest(`Unknown format "${asked}": use jsonl or csv`);
    }
    format = asked;
    from = timeParam(params, "from");
    to = timeParam(params, "to");
  } catch (error) {
    if (error instanceof BadRequest) return json({ error: error.message }, 400);
    throw error;
  }
  await ensureSigningKey(deps.dataDir);
  const source = deps.eventsDbPath ? { eventsDbPath: deps.eventsDbPath } : { store: deps.store };
  const base = {
    ...source,
    projectionsDb: deps.projectionsDb,
    dataDir: deps.dataDir,
    personId,
    from,
    to,
    keyName: params.get("key") ?? undefined,
    format,
  };
  const stamp = new Date().toISOString().slice(0, 10);
  const body = new TransformStream<Uint8Array, Uint8Array>();
  if (format === "jsonl") {
    exportAudit({ ...base, out: body.writable }).catch((error) => {
      console.error("An audit export failed:", error);
    });
    return new Response(body.readable, {
      headers: {
        "content-type": "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="sergo-audit-${stamp}.jsonl"`,
      },
    });
  }
  const name = `sergo-audit-${stamp}.csv`;
  const { Zip, ZipPassThrough } = await import("fflate"); // loaded by the first CSV export, not at start-up
  const writer = body.writable.getWriter();
  const zip = new Zip((error, chunk, final) => {
    if (error) {
      writer.abort(error).catch(() => {});
      return;
    }
    writer.write(chunk).catch(() => {});
    if (final) writer.close().catch(() => {});
  });
  const csv = new ZipPassThrough(name);
  zip.add(csv);
  const into = new WritableStream<Uint8Array>({
    async write(chunk) {
      await writer.ready;
      csv.push(chunk);
    },
    close() {
      csv.push(new Uint8Array(0), true);
    },
  });
  exportAudit({ ...base, out: into }).then((manifest) => {
    const side = new ZipPassThrough(`${name}.manifest.json`);
    zip.add(side);
    side.push(new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n"), true);
    zip.end();
  }).catch((error) => {
    console.error("An audit export failed:", error);
    writer.abort(error).catch(() => {});
  });
  return new Response(body.readable, {
    headers: {
      "content-type": "application/zip",
      "content-disposition": `attachment; filename="sergo-audit-${stamp}.zip"`,
    },
  });
}

/** `GET /api/audit/public-key`: the install's audit signing key (PEM). */
export async function auditPublicKey(
  _request: Request,
  _personId: string,
  deps: AuditRouteDeps,
): Promise<Response> {
  return new Response(await publicKeyPem(deps.dataDir), {
    headers: { "content-type": "application/x-pem-file; charset=utf-8" },
  });
}

/** The audit handlers by route, for the API to mount. */
export const auditRoutes: {
  readonly list: AuditHandler;
  readonly export: AuditHandler;
  readonly publicKey: AuditHandler;
} = {
  list: listAudit,
  export: exportAuditDownload,
  publicKey: auditPublicKey,
};

/**
 * Answers the audit paths under `/api/audit` (`GET` only) for an
 * authenticated person; null for any other path or method.
 */
export function routeAudit(
  request: Request,
  personId: string,
  deps: AuditRouteDeps,
): Promise<Response | null> {
  if (request.method !== "GET") return Promise.resolve(null);
  const path = new URL(request.url).pathname;
  if (path === "/api/audit") return auditRoutes.list(request, personId, deps);
  if (path === "/api/audit/export") return auditRoutes.export(request, personId, deps);
  if (path === "/api/audit/public-key") return auditRoutes.publicKey(request, personId, deps);
  return Promise.resolve(null);
}

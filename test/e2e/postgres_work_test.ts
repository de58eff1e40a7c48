/**
 * Work across real `serve` replicas on one PostgreSQL (test/helpers/replicas.ts):
 * documents uploaded at once while two replicas wait are each read once and
 * copied once (both replicas race for every one); and a replica SIGKILLed in
 * the middle of a Standard reading of a scan leaves its lease to run out, the
 * other replica claims the document and finishes it, and the log holds one
 * result. Leases are 3 s here (`SERGO_WORK_LEASE_S`), renewed every second.
 * The same replicas share each key's rate limit: a burst sent to both at once
 * is refused past the key's burst, not twice it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { type Replicas, testReplicas } from "../helpers/replicas.ts";
import { assertAll } from "../helpers/assert_all.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

/** The key's burst in the rate-limit step. */
const BURST = 10;

interface Row {
  stream: string;
  type: string;
  data: string;
  metadata: string;
}

/** A document's event as the tests read it: its type, data and the time it was decided. */
interface Recorded {
  type: string;
  data: Record<string, unknown>;
  time: string;
}

/** The shared log's events of each document, by document id. */
async function documentEvents(url: string): Promise<Map<string, Recorded[]>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<Row[]>`
      SELECT stream, type, data, metadata FROM sergo_events WHERE stream LIKE 'document-%' ORDER BY position`;
    const byDocument = new Map<string, Recorded[]>();
    for (const row of rows) {
      const id = row.stream.slice("document-".length);
      const event = { type: row.type, data: JSON.parse(row.data), time: JSON.parse(row.metadata).time };
      byDocument.set(id, [...(byDocument.get(id) ?? []), event]);
    }
    return byDocument;
  } finally {
    await sql.end();
  }
}

/** Each `PdfCopyStarted` after the first comes when the lease before it (its start or last renewal) had run out. */
function assertTakenOverOnlyWhenExpired(events: Recorded[], what: string): void {
  let leaseUntil: string | null = null;
  for (const event of events) {
    if (event.type === "PdfCopyStarted" && leaseUntil !== null) {
      assert.ok(Date.parse(event.time) >= Date.parse(leaseUntil), `taken over while the lease held: ${what}`);
    }
    if (event.type === "PdfCopyStarted" || event.type === "PdfCopyLeaseRenewed") {
      leaseUntil = String(event.data.lease_until);
    }
    if (event.type === "PdfCopyMade" || event.type === "PdfCopyFailed") leaseUntil = null;
  }
}

async function waitFor<T>(what: string, ms: number, check: () => Promise<T | null>): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function count(events: { type: string }[], type: string): number {
  return events.filter((e) => e.type === type).length;
}

/** Each replica's worker id (`serve-` and the id kept in its data directory). */
async function workerIds(cluster: Replicas): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const replica of cluster.replicas) {
    const id = (await Deno.readTextFile(join(replica.dataDir, "replica-id"))).trim();
    ids.set(`serve-${id}`, replica.index);
  }
  return ids;
}

Deno.test({
  name:
    "PostgreSQL replicas: work is claimed once across replicas, and a killed replica's job is finished by another",
  async fn(t) {
    await using cli = await tempDir();
    await using cluster = await testReplicas({
      count: 2,
      env: { SERGO_WORK_LEASE_S: "3", SERGO_RATE_LIMIT: "1", SERGO_RATE_BURST: String(BURST) },
    });
    const sergo = async (...args: string[]) => {
      const result = await runCli([...args, "--data", cli.path], {
        env: { SERGO_DATABASE_URL: cluster.databaseUrl },
      });
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    await sergo("person", "add", "--name", "Ava Bennett", "--email", "ava@example.com");
    const upload = async (preset: string, files: string[]) =>
      (await sergo("upload", "--person", "ava@example.com", "--preset", preset, "--no-wait", ...files))
        .trim().split("\n").map((line) => line.split("\t")[0]!);

    await t.step(
      "a key's burst split over both replicas is refused at the key's limit, not twice it",
      async () => {
        await sergo("folder", "add", "--person", "ava@example.com", "Docs");
        const created = await sergo(
          "key",
          "add",
          "--person",
          "ava@example.com",
          "--name",
          "burst",
          "--read",
          "Docs",
        );
        const key = created.trim().split("\n").at(-1)!;
        const call = async (url: string, id: number) => {
          const response = await fetch(`${url}/mcp`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              authorization: `Bearer ${key}`,
              "mcp-protocol-version": "2025-06-18",
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: { name: "list_documents", arguments: {} },
            }),
          });
          await response.body?.cancel();
          return { status: response.status, retryAfter: response.headers.get("retry-after") };
        };
        const started = performance.now();
        // Twice the burst, half to each replica directly (not through HAProxy), all at once.
        const answers = await Promise.all(
          Array.from({ length: 2 * BURST }, (_, i) => call(cluster.replicas[i % 2]!.url, i + 1)),
        );
        const seconds = (performance.now() - started) / 1000;
        const allowed = answers.filter((a) => a.status === 200).length;
        const refused = answers.filter((a) => a.status === 429);
        assert.equal(allowed + refused.length, 2 * BURST, JSON.stringify(answers));
        // The burst, and at most one more call per second the burst took to send (the key's rate refills it).
        assert.ok(
          allowed >= BURST && allowed <= BURST + Math.ceil(seconds),
          `${allowed} allowed in ${seconds} s`,
        );
        // Twice the burst sent at once: some are refused, each with a Retry-After of a second or more.
        assertAll(refused, (a) => Number(a.retryAfter) >= 1, "refused calls' Retry-After");
        // Each answered call has its audit entry and no refused one has any (their tokens went with the entries).
        const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
        try {
          const [row] = await sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM sergo_events WHERE type = 'McpCalled'`;
          assert.equal(row!.n, allowed);
        } finally {
          await sql.end();
        }
      },
    );

    await t.step("documents uploaded at once are each claimed, read and copied exactly once", async () => {
      const files = [
        "pdf/japanese-tex-notes.pdf",
        "pdf/hebrew-rtl-word365.pdf",
        "pdf/korean-card-benefits-tables.pdf",
        "text/" + [...Deno.readDirSync(`${CORPUS_DIR}/text`)].map((e) => e.name).sort()[0],
        "pptx/smartart-simple.pptx",
        "docx/docling-nested-lists.docx",
      ];
      const ids = await upload("basic", files.map((file) => `${CORPUS_DIR}/${file}`));
      assert.equal(ids.length, files.length);
      const office = new Set(ids.slice(-2));
      const events = await waitFor("every document read and every copy made", 180_000, async () => {
        const all = await documentEvents(cluster.databaseUrl);
        const done = ids.every((id) => {
          const of = all.get(id) ?? [];
          return count(of, "DocumentProcessed") + count(of, "ProcessingFailed") >= 1 &&
            (!office.has(id) || count(of, "PdfCopyMade") + count(of, "PdfCopyFailed") >= 1);
        });
        return done ? all : null;
      });
      // A moment more, in case a second result were on its way.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const settled = await documentEvents(cluster.databaseUrl);
      assert.deepEqual(settled, events);
      const claimedBy = new Set<unknown>();
      for (const id of ids) {
        const of = events.get(id)!;
        const what = `${files[ids.indexOf(id)]}: ${of.map((e) => e.type).join(", ")}`;
        assert.equal(count(of, "ProcessingStarted"), 1, what);
        assert.equal(count(of, "ProcessingFailed"), 0, what);
        claimedBy.add(of.find((e) => e.type === "ProcessingStarted")!.data.worker);
        if (office.has(id)) {
          // The copy's result is recorded once. Its lease may run out while LibreOffice is slow under load
          // and another worker take the copy over (by design: a stuck worker must not hold it), but never
          // while the lease still held.
          assert.ok(count(of, "PdfCopyStarted") >= 1, what);
          assertTakenOverOnlyWhenExpired(of, what);
          assert.equal(count(of, "PdfCopyMade"), 1, what);
          // A Word file takes its copy's pages: one more DocumentProcessed, recorded with the copy.
          assert.equal(count(of, "DocumentProcessed"), id === ids.at(-1) ? 2 : 1, what);
        } else {
          assert.equal(count(of, "DocumentProcessed"), 1, what);
        }
      }
      const workers = await workerIds(cluster);
      for (const worker of claimedBy) assert.ok(workers.has(String(worker)), `claimed by ${worker}`);
    });

    await t.step(
      "a replica SIGKILLed while it reads a scan: the other claims it when the lease runs out and finishes it once",
      async () => {
        const [id] = await upload("standard", [`${CORPUS_DIR}/pdf/scanned-ru-inspection-certificate.pdf`]);
        const workers = await workerIds(cluster);
        const first = await waitFor("a replica claims the scan", 30_000, async () => {
          const of = (await documentEvents(cluster.databaseUrl)).get(id!) ?? [];
          const claim = of.find((e) => e.type === "ProcessingStarted");
          return claim ? String(claim.data.worker) : null;
        });
        const killed = workers.get(first)!;
        assert.ok(killed, `claimed by ${first}`);
        await cluster.kill(killed);
        const events = await waitFor("the other replica finishes the scan", 180_000, async () => {
          const of = (await documentEvents(cluster.databaseUrl)).get(id!) ?? [];
          return count(of, "DocumentProcessed") + count(of, "ProcessingFailed") > 0 ? of : null;
        });
        const what = events.map((e) => e.type).join(", ");
        assert.equal(count(events, "DocumentProcessed"), 1, what);
        assert.equal(count(events, "ProcessingFailed"), 0, what);
        const claims = events.filter((e) => e.type === "ProcessingStarted").map((e) => String(e.data.worker));
        assert.equal(claims.length, 2, what);
        assert.equal(claims[0], first);
        assert.notEqual(claims[1], first);
        assert.ok(workers.has(claims[1]!));
        // The result is the survivor's, recorded after its claim, and it read the scan (Standard: Cyrillic text).
        const result = events.find((e) => e.type === "DocumentProcessed")!;
        assert.ok(events.indexOf(result) > events.findLastIndex((e) => e.type === "ProcessingStarted"));
        const text = (result.data.pages as { text: string }[]).map((p) => p.text).join("\n");
        assert.match(text, /[А-Яа-я]{4,}/);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const after = (await documentEvents(cluster.databaseUrl)).get(id!)!;
        assert.equal(count(after, "DocumentProcessed"), 1);
      },
    );
  },
});

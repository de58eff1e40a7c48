/**
 * Three real `serve` replicas on one PostgreSQL behind a real HAProxy (the
 * code of `deno task cluster`), started once for this file:
 *
 * - a document uploaded through one replica is found through the others (in
 *   English and Chinese); a key rolled, narrowed or deleted through one
 *   replica is so on every replica within a second;
 * - the replica that claimed a scan's Standard reading SIGKILLed during a burst
 *   of audited MCP calls and uploads through HAProxy: its lease (3 s) runs out
 *   and another replica reads the scan, one result in the log; every call
 *   answered 200 has exactly one audit event and no event names a call
 *   nobody sent, every upload answered 201 exactly one `DocumentUploaded`,
 *   the log has no gap; the other two answer every call once HAProxy has
 *   marked the dead one down; the killed replica restarts on its data
 *   directory, and every replica's projections equal a fresh replay of the
 *   log (no event applied twice or missed);
 * - an event this version cannot read (a newer version's, in a rolling
 *   upgrade): every replica's `/healthz` answers 503 naming it and HAProxy
 *   takes them out, rather than serve reads that miss what came after.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { callTool } from "../helpers/mcp_http.ts";
import { type Replicas, testReplicas } from "../helpers/replicas.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const CORPUS = new URL("../corpus/text/", import.meta.url).pathname;
const RFC = "rfc7754-technical-considerations.txt";
const UDHR = "udhr-article-1-all-languages.txt";

/** Polls `check` every 20 ms; fails when it is not true within `ms` of `since`. */
async function within(ms: number, since: number, what: string, check: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await check()) return;
    assert.ok(Date.now() - since < ms, `${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A JSON request to the REST API with the person's key; throws unless it answers `expect`. */
async function api(
  url: string,
  personal: string,
  method: string,
  path: string,
  body?: unknown,
  expect = [200, 201, 204],
): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${personal}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(expect.includes(response.status), `${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : {};
}

/** Uploads a corpus file as a raw body into `folder`; returns its document id. */
async function upload(url: string, personal: string, file: string, folder: string): Promise<string> {
  const response = await fetch(
    `${url}/api/documents?name=${encodeURIComponent(file)}&folder=${encodeURIComponent(folder)}&preset=basic`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${personal}` },
      body: await Deno.readFile(CORPUS + file),
    },
  );
  const answer = await response.json() as { documents: { id: string }[] };
  assert.equal(response.status, 201, JSON.stringify(answer));
  return answer.documents[0]!.id;
}

const SCAN = "../pdf/scanned-ru-inspection-certificate.pdf";

/** Uploads a corpus file with a preset; returns its document id. */
async function uploadPreset(url: string, personal: string, file: string, folder: string, preset: string) {
  const response = await fetch(
    `${url}/api/documents?name=${encodeURIComponent(file.split("/").pop()!)}&folder=${
      encodeURIComponent(folder)
    }&preset=${preset}`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${personal}` },
      body: await Deno.readFile(CORPUS + file),
    },
  );
  const answer = await response.json() as { documents: { id: string }[] };
  assert.equal(response.status, 201, JSON.stringify(answer));
  return answer.documents[0]!.id;
}

/** Each replica's worker name in leases (`serve-` and the `replica-id` in its data directory). */
async function workerIds(cluster: Replicas): Promise<Map<string, Replicas["replicas"][0]>> {
  const ids = new Map<string, Replicas["replicas"][0]>();
  for (const replica of cluster.replicas) {
    ids.set(`serve-${(await Deno.readTextFile(`${replica.dataDir}/replica-id`)).trim()}`, replica);
  }
  return ids;
}

/** A document's events in the shared log, once it has a result (or `ms` pass). */
async function documentEvents(
  databaseUrl: string,
  id: string,
  ms: number,
): Promise<{ type: string; worker?: string }[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const since = Date.now();
    for (;;) {
      const rows = await sql<{ type: string; data: string }[]>`
        SELECT type, data FROM sergo_events WHERE stream = ${`document-${id}`} ORDER BY position`;
      const events = rows.map((row) => ({ type: row.type, worker: JSON.parse(row.data).worker as string }));
      if (events.some((event) => event.type === "DocumentProcessed" || event.type === "ProcessingFailed")) {
        return events;
      }
      assert.ok(
        Date.now() - since < ms,
        `no result for ${id} within ${ms / 1000} s: ${JSON.stringify(events)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await sql.end();
  }
}

/** The workers that claimed a document, once there are `count` claims (within `ms`). */
async function claimsOf(databaseUrl: string, id: string, count: number, ms: number): Promise<string[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const since = Date.now();
    for (;;) {
      const rows = await sql<{ data: string }[]>`
        SELECT data FROM sergo_events WHERE stream = ${`document-${id}`} AND type = 'ProcessingStarted'
        ORDER BY position`;
      if (rows.length >= count) return rows.map((row) => JSON.parse(row.data).worker as string);
      assert.ok(Date.now() - since < ms, `${id} not claimed within ${ms / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await sql.end();
  }
}

async function status(url: string, personal: string, id: string): Promise<string> {
  return (await api(url, personal, "GET", `/api/documents/${id}`)).status as string;
}

Deno.test("three replicas on one PostgreSQL behind HAProxy", async (t) => {
  let personal = "";
  await using scratch = await tempDir();
  await using cluster = await testReplicas({
    count: 3,
    // The burst is not about rate limits (each replica's own, 50/s per key by default).
    // Leases of 3 s (renewed every second), so work a killed replica held is taken over quickly.
    env: { SERGO_RATE_LIMIT: "100000", SERGO_RATE_BURST: "100000", SERGO_WORK_LEASE_S: "3" },
    prepare: async (databaseUrl) => {
      const cli = async (...args: string[]) => {
        const result = await runCli([...args, "--data", scratch.path], {
          env: { SERGO_DATABASE_URL: databaseUrl },
        });
        assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
        return result.stdout.trim().split("\n").pop()!;
      };
      await cli("person", "add", "--name", "Ava Bennett", "--email", "ava@example.com");
      personal = await cli("personal-key", "add", "--person", "ava@example.com");
    },
  });
  const [r1, r2, r3] = cluster.replicas as [
    Replicas["replicas"][0],
    Replicas["replicas"][0],
    Replicas["replicas"][0],
  ];

  // One install's audit signing key on every replica (bench/cluster.ts copies the first one's).
  const keys = await Promise.all(
    cluster.replicas.map((replica) => Deno.readTextFile(`${replica.dataDir}/audit-signing-key.json`)),
  );
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);

  const reports = (await api(r1.url, personal, "POST", "/api/folders", { name: "Reports" })).id as string;
  const archive = (await api(r1.url, personal, "POST", "/api/folders", { name: "Archive" })).id as string;
  const created = await api(r1.url, personal, "POST", "/api/keys", {
    name: "research",
    description: "Reports and the archive",
    can_read: { folders: [reports, archive] },
  });
  const keyId = created.id as string;
  let key = created.value as string;

  await t.step(
    "an upload through one replica is searchable through the others, in any language",
    async () => {
      const rfc = await upload(r1.url, personal, RFC, "Reports");
      const udhr = await upload(r1.url, personal, UDHR, "Archive");
      const started = Date.now();
      await within(
        60_000,
        started,
        "processed",
        async () =>
          await status(r1.url, personal, rfc) === "searchable" &&
          await status(r1.url, personal, udhr) === "searchable",
      );
      const seen = Date.now();
      await within(1000, seen, "replica 2 finds the English RFC", async () => {
        const found = await callTool(r2.url, key, "search", {
          query: "blocking and filtering of Internet services",
        });
        return found.status === 200 && found.text.includes(RFC);
      });
      await within(1000, seen, "replica 3 finds the declaration in Chinese", async () => {
        const found = await callTool(r3.url, key, "search", { query: "人人生而自由,在尊严和权利上一律平等" });
        return found.status === 200 && found.text.includes(UDHR);
      });
    },
  );

  await t.step(
    "a key rolled, narrowed and deleted through one replica is so on the others within 1 s",
    async () => {
      const rolled = await api(r1.url, personal, "POST", `/api/keys/${keyId}/roll`, { grace: "now" });
      const since = Date.now();
      const old = key;
      key = rolled.value as string;
      for (const replica of [r2, r3]) {
        await within(
          1000,
          since,
          `replica ${replica.index} refuses the rolled-away value`,
          async () => (await callTool(replica.url, old, "list_documents", {})).status === 401,
        );
        assert.equal((await callTool(replica.url, key, "list_documents", {})).status, 200);
      }

      await api(r1.url, personal, "PATCH", `/api/keys/${keyId}`, { can_read: { folders: [archive] } });
      const narrowed = Date.now();
      for (const replica of [r2, r3]) {
        await within(
          1000,
          narrowed,
          `replica ${replica.index} no longer lists the Reports file`,
          async () => {
            const listed = await callTool(replica.url, key, "list_documents", {});
            assert.equal(listed.status, 200);
            return !listed.text.includes(RFC) && listed.text.includes(UDHR);
          },
        );
        const searched = await callTool(replica.url, key, "search", { query: "blocking and filtering" });
        assert.ok(
          !searched.text.includes(RFC),
          `replica ${replica.index} still finds what the key no longer reads`,
        );
      }

      await api(r1.url, personal, "DELETE", `/api/keys/${keyId}`);
      const deleted = Date.now();
      for (const replica of [r1, r2, r3]) {
        await within(
          1000,
          deleted,
          `replica ${replica.index} refuses the deleted key`,
          async () => (await callTool(replica.url, key, "list_documents", {})).status === 401,
        );
      }
      // Through HAProxy too: round robin reaches every replica twice.
      for (let i = 0; i < 6; i++) {
        assert.equal((await callTool(cluster.url, key, "list_documents", {})).status, 401);
      }
    },
  );

  await t.step(
    "the replica reading a scan SIGKILLed during a burst: every call answered 200 has one audit event, none applied twice, another finishes the scan",
    async () => {
      const burst = await api(r1.url, personal, "POST", "/api/keys", {
        name: "burst",
        description: "The burst",
        can_read: { folders: [reports, archive] },
      });
      const burstKey = burst.value as string;
      const createdAt = Date.now();
      for (const replica of cluster.replicas) {
        await within(
          1000,
          createdAt,
          `replica ${replica.index} takes the new key`,
          async () => (await callTool(replica.url, burstKey, "list_documents", {})).status === 200,
        );
      }
      // A scan read with Standard (Tesseract, seconds a page): the replica that claims it is the one killed.
      const scan = await uploadPreset(r1.url, personal, SCAN, "Reports", "standard");
      const firstClaim = await claimsOf(cluster.databaseUrl, scan, 1, 60_000);
      const workers = await workerIds(cluster);
      const victim = workers.get(firstClaim[0]!)!;
      assert.ok(victim, `the scan was claimed by ${firstClaim[0]}, no replica of this cluster`);
      const others = cluster.replicas.filter((replica) => replica !== victim);
      const calls: { token: string; status: number; phase: number }[] = [];
      const uploads: { name: string; status: number; id: string | null }[] = [];
      // 0: all up; 1: one killed; 2: HAProxy has marked it down.
      let phase = 0;
      let stop = false;
      // A new connection for every request: on a kept-alive connection whose request dies with its replica,
      // HAProxy closes the connection without an answer and Deno's fetch sends the POST again (a second,
      // separately audited call). Here each request is sent once, so each answer is one request's.
      const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
      const caller = async (loop: number) => {
        for (let n = 0; !stop; n++) {
          const token = `burst${loop}x${n}`;
          const started = phase;
          let status = 0; // no answer at all (connection broken)
          try {
            status =
              (await callTool(cluster.url, burstKey, "search", { query: `${token} filtering` }, 1, client))
                .status;
          } catch { /* counted as no answer */ }
          calls.push({ token, status, phase: started });
        }
      };
      const uploader = async () => {
        const bytes = await Deno.readFile(CORPUS + "fake-text-utf16-bom.txt");
        for (let n = 0; !stop; n++) {
          const name = `burst-${n}.txt`;
          let status = 0;
          let id: string | null = null;
          try {
            const response = await fetch(
              `${cluster.url}/api/documents?name=${name}&folder=Reports&preset=basic`,
              {
                method: "POST",
                headers: { authorization: `Bearer ${personal}` },
                body: bytes,
              },
            );
            status = response.status;
            const answer = await response.json().catch(() => null) as { documents?: { id: string }[] } | null;
            id = answer?.documents?.[0]?.id ?? null;
          } catch { /* no answer */ }
          uploads.push({ name, status, id });
        }
      };
      const load = [...Array.from({ length: 6 }, (_, loop) => caller(loop)), uploader()];
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await cluster.kill(victim.index);
      phase = 1;
      await cluster.waitFor(victim.index, "DOWN");
      phase = 2;
      // The others keep serving: directly, and through HAProxy once it has marked the dead one down.
      for (const replica of others) {
        assert.equal((await callTool(replica.url, burstKey, "list_documents", {})).status, 200);
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
      stop = true;
      await Promise.all(load);
      const answered = calls.filter((call) => call.status === 200);
      assert.ok(answered.length >= 20, `only ${answered.length} of ${calls.length} calls answered 200`);
      assert.ok(uploads.some((u) => u.status === 201), JSON.stringify(uploads));
      // Only a call in flight on the killed replica may fail (HAProxy: 502; or the connection broke).
      for (const call of calls) assert.ok([200, 502, 0].includes(call.status), JSON.stringify(call));
      const late = calls.filter((call) => call.phase === 2);
      assert.ok(late.length >= 10, `only ${late.length} calls after HAProxy marked the replica down`);
      assert.deepEqual(late.filter((call) => call.status !== 200), [], "calls failed with two replicas up");

      const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
      try {
        const audited = new Map<string, number>();
        for (
          const row of await sql<{ token: string; n: number }[]>`
        SELECT split_part(data::jsonb->'arguments'->>'query', ' ', 1) AS token, count(*)::int AS n
        FROM sergo_events WHERE type = 'McpCalled' AND data::jsonb->'arguments'->>'query' LIKE 'burst%'
        GROUP BY 1`
        ) audited.set(row.token, row.n);
        for (const call of answered) {
          assert.equal(
            audited.get(call.token),
            1,
            `call ${call.token} answered 200 has ${audited.get(call.token) ?? 0} audit events`,
          );
        }
        const sent = new Set(calls.map((call) => call.token));
        for (const [token, n] of audited) {
          assert.ok(sent.has(token), `an audit event for ${token}, which nobody sent`);
          assert.equal(n, 1, `${token} audited ${n} times`);
        }
        const uploaded = new Map<string, number>();
        for (
          const row of await sql<{ id: string; n: number }[]>`
        SELECT data::jsonb->>'document_id' AS id, count(*)::int AS n FROM sergo_events
        WHERE type = 'DocumentUploaded' AND data::jsonb->>'name' LIKE 'burst-%' GROUP BY 1`
        ) uploaded.set(row.id, row.n);
        for (const u of uploads.filter((u) => u.status === 201)) {
          assert.equal(
            uploaded.get(u.id!),
            1,
            `upload ${u.name} answered 201 has ${uploaded.get(u.id!) ?? 0} events`,
          );
        }
        // The log has no gap and no duplicate position.
        const [head] = await sql<{ n: number; max: number }[]>`
        SELECT count(*)::int AS n, coalesce(max(position), 0)::int AS max FROM sergo_events`;
        assert.equal(head!.n, head!.max);
      } finally {
        await sql.end();
      }

      // The killed replica's lease ran out; another claimed the scan and read it, once.
      const events = await documentEvents(cluster.databaseUrl, scan, 180_000);
      const what = events.map((event) => event.type).join(", ");
      assert.equal(events.filter((event) => event.type === "DocumentProcessed").length, 1, what);
      assert.equal(events.filter((event) => event.type === "ProcessingFailed").length, 0, what);
      const claims = events.filter((event) => event.type === "ProcessingStarted").map((event) =>
        event.worker
      );
      assert.equal(claims[0], firstClaim[0], what);
      assert.ok(
        workers.has(claims.at(-1)!) && claims.at(-1) !== firstClaim[0],
        `finished by ${claims.at(-1)}`,
      );
      assert.ok(
        events.findIndex((event) => event.type === "DocumentProcessed") >
          events.findLastIndex((event) => event.type === "ProcessingStarted"),
        what,
      );

      // The killed replica comes back on its data directory (killed mid-work) and catches up.
      await cluster.restart(victim.index);
      await cluster.waitFor(victim.index, "UP");
      assert.equal((await callTool(victim.url, burstKey, "list_documents", {})).status, 200);
      // No event applied twice or missed: each replica's projections equal a fresh replay of the log.
      for (const replica of cluster.replicas) await cluster.kill(replica.index, "SIGTERM");
      await using fresh = await tempDir();
      const digests = await Promise.all(
        [...cluster.replicas.map((r) => r.dataDir), fresh.path].map(async (dir) => {
          const result = await runCli(["projections", "digest", "--data", dir], {
            env: { SERGO_DATABASE_URL: cluster.databaseUrl },
          });
          assert.equal(result.code, 0, result.stderr);
          return result.stdout.trim();
        }),
      );
      assert.match(digests[3]!, /^[0-9a-f]{64}$/);
      assert.deepEqual(digests, [digests[3], digests[3], digests[3], digests[3]]);
    },
  );

  await t.step(
    "an event of a newer version: every older replica leaves the balancer instead of serving without it",
    async () => {
      await Promise.all(cluster.replicas.map((replica) => cluster.restart(replica.index)));
      for (const replica of cluster.replicas) await cluster.waitFor(replica.index, "UP");
      // What a newer Sergo sharing the log during a rolling upgrade could append: a type this one does not know.
      const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
      let position = 0;
      try {
        const payload = [{
          stream: "future-1",
          stream_json: JSON.stringify("future-1"),
          expected: "any",
          events: [{
            type: "FutureThing",
            type_json: JSON.stringify("FutureThing"),
            schema_version: 1,
            data: "{}",
            metadata: JSON.stringify({ time: new Date().toISOString(), actor: "sergo-next" }),
          }],
        }];
        const [row] = await sql<{ answer: { results: { first: number }[] } }[]>`
        SELECT sergo_append(${JSON.stringify(payload)}::text::jsonb) AS answer`;
        position = row!.answer.results[0]!.first;
      } finally {
        await sql.end();
      }
      for (const replica of cluster.replicas) {
        await cluster.waitFor(replica.index, "DOWN");
        const health = await fetch(`${replica.url}/healthz`);
        assert.equal(health.status, 503);
        const body = await health.json() as { ok: boolean; projections: { failure?: string } };
        assert.equal(body.ok, false);
        assert.equal(
          body.projections.failure,
          `Cannot read event ${position}: unknown event type "FutureThing"`,
        );
      }
      const through = await fetch(`${cluster.url}/healthz`);
      await through.body?.cancel();
      assert.equal(through.status, 503, "HAProxy has no replica left to send reads to");
    },
  );
});

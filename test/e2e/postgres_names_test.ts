/**
 * Names stay unique across real `serve` replicas on one PostgreSQL
 * (test/helpers/replicas.ts): a folder created, renamed or moved to one name
 * in one place through two replicas at the same moment, two moves that would
 * put two folders inside each other, one email added by two CLI processes
 * at once, and one file uploaded with duplicates=refuse into one folder
 * through both replicas at once. The test holds the log's head row (as every append's first step
 * does), so both requests have checked the name before either appends; it
 * lets go once both appends wait for the row.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { type Replicas, testReplicas } from "../helpers/replicas.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

type Sql = postgres.Sql<Record<string, never>>;

/** Holds the log's head row until `release`, so appends from every replica wait behind it. */
async function holdLog(
  url: string,
): Promise<{ sql: Sql; waiting(): Promise<number>; release(): Promise<void> }> {
  const holder: Sql = postgres(url, { max: 1, onnotice: () => {} });
  const watcher: Sql = postgres(url, { max: 1, onnotice: () => {} });
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const { promise: locked, resolve: haveLock } = Promise.withResolvers<void>();
  const held = holder.begin(async (tx) => {
    await tx`SELECT position FROM sergo_log_head WHERE id = 1 FOR UPDATE`;
    haveLock();
    await released;
  });
  await locked;
  return {
    sql: watcher,
    async waiting() {
      // A row lock's waiter waits for the holder's transaction id (wait_event_type Lock), not for the table.
      const [row] = await watcher<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
      return row!.n;
    },
    async release() {
      release();
      await held;
      await holder.end();
      await watcher.end();
    },
  };
}

/** Sends `requests` at once while the log is held, and lets go once `appends` of them wait to append. */
async function atOnce<T>(url: string, appends: number, requests: (() => Promise<T>)[]): Promise<T[]> {
  const log = await holdLog(url);
  try {
    const sent = requests.map((send) => send());
    const started = Date.now();
    while (await log.waiting() < appends) {
      assert.ok(Date.now() - started < 20_000, `not ${appends} appends waiting within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await log.release();
    return await Promise.all(sent);
  } catch (error) {
    await log.release().catch(() => {});
    throw error;
  }
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

Deno.test({
  name:
    "PostgreSQL replicas: one folder name in one place, one email and one file's bytes in one folder, also when two replicas or processes take it at once",
  async fn(t) {
    await using scratch = await tempDir();
    let personal = "";
    await using cluster: Replicas = await testReplicas({
      count: 2,
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
    const [r1, r2] = cluster.replicas;
    const api = async (replica: { url: string }, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${replica.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${personal}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() } as Answer;
    };
    const folders = async (replica: { url: string }) => {
      const answer = await api(replica, "GET", "/api/folders");
      assert.equal(answer.status, 200);
      return (answer.body.folders as { id: string; path: string }[]).map((f) => f.path).sort();
    };
    /** Each replica's folders, once both have applied everything. */
    const settled = async () => {
      const started = Date.now();
      for (;;) {
        const [a, b] = [await folders(r1!), await folders(r2!)];
        if (JSON.stringify(a) === JSON.stringify(b)) return a;
        assert.ok(Date.now() - started < 1000, `the replicas disagree for over 1 s: ${a} / ${b}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const message = (answer: Answer) => JSON.stringify(answer.body);

    await t.step(
      "a folder created through both replicas at once is made once; the other gets 409",
      async () => {
        const answers = await atOnce(cluster.databaseUrl, 2, [
          () => api(r1!, "POST", "/api/folders", { name: "Отчёты 2026" }),
          () => api(r2!, "POST", "/api/folders", { name: "Отчёты 2026" }),
        ]);
        assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409], answers.map(message).join(" "));
        assert.match(
          message(answers.find((a) => a.status === 409)!),
          /A folder named \\"Отчёты 2026\\" already exists there/,
        );
        assert.deepEqual(await settled(), ["Отчёты 2026"]);
      },
    );

    await t.step(
      "a folder path made through both replicas at once ends in one tree, the same for both",
      async () => {
        const answers = await atOnce(cluster.databaseUrl, 2, [
          () => api(r1!, "POST", "/api/folders", { path: "Energy/Basic" }),
          () => api(r2!, "POST", "/api/folders", { path: "Energy/Basic" }),
        ]);
        assert.deepEqual(answers.map((a) => a.status), [201, 201], answers.map(message).join(" "));
        assert.equal(answers[0]!.body.id, answers[1]!.body.id);
        assert.deepEqual(await settled(), ["Energy", "Energy/Basic", "Отчёты 2026"]);
      },
    );

    await t.step(
      "two folders renamed to one name through both replicas at once: one is, the other keeps its name",
      async () => {
        const a = (await api(r1!, "POST", "/api/folders", { name: "first" })).body.id;
        const b = (await api(r1!, "POST", "/api/folders", { name: "second" })).body.id;
        await settled();
        const answers = await atOnce(cluster.databaseUrl, 2, [
          () => api(r1!, "PATCH", `/api/folders/${a}`, { name: "shared" }),
          () => api(r2!, "PATCH", `/api/folders/${b}`, { name: "shared" }),
        ]);
        assert.deepEqual(answers.map((x) => x.status).sort(), [200, 409], answers.map(message).join(" "));
        const kept = answers[0]!.status === 200 ? "second" : "first";
        assert.deepEqual(await settled(), ["Energy", "Energy/Basic", kept, "shared", "Отчёты 2026"].sort());
      },
    );

    await t.step(
      "two moves through both replicas at once that would nest two folders in each other: one is made",
      async () => {
        const a = (await api(r1!, "POST", "/api/folders", { name: "Alpha" })).body.id;
        const b = (await api(r1!, "POST", "/api/folders", { name: "Beta" })).body.id;
        await settled();
        const answers = await atOnce(cluster.databaseUrl, 2, [
          () => api(r1!, "PATCH", `/api/folders/${a}`, { parent_id: b }),
          () => api(r2!, "PATCH", `/api/folders/${b}`, { parent_id: a }),
        ]);
        assert.deepEqual(answers.map((x) => x.status).sort(), [200, 400], answers.map(message).join(" "));
        assert.match(message(answers.find((x) => x.status === 400)!), /into itself or a folder inside it/);
        const nested = answers[0]!.status === 200 ? ["Beta", "Beta/Alpha"] : ["Alpha", "Alpha/Beta"];
        const all = await settled();
        for (const path of nested) assert.ok(all.includes(path), `${path} in ${all}`);
        // Both replicas still serve (their projections did not stop on the pair of moves).
        for (const replica of [r1!, r2!]) {
          const health = await fetch(`${replica.url}/healthz`);
          assert.equal(health.status, 200, await health.text());
        }
      },
    );

    await t.step(
      "one email added by two CLI processes on the database at once: one person, the other exits 2",
      async () => {
        await using one = await tempDir();
        await using two = await tempDir();
        const env = { SERGO_DATABASE_URL: cluster.databaseUrl };
        const clis = await atOnce(
          cluster.databaseUrl,
          2,
          [one, two].map((dir) => () =>
            runCli([
              "person",
              "add",
              "--name",
              "Ben Okafor",
              "--email",
              "ben@example.com",
              "--data",
              dir.path,
            ], {
              env,
            })
          ),
        );
        assert.deepEqual(
          clis.map((cli) => cli.code).sort(),
          [0, 2],
          clis.map((cli) => cli.stderr).join("\n"),
        );
        assert.equal(
          clis.find((cli) => cli.code === 2)!.stderr.trim(),
          'A person with email "ben@example.com" already exists',
        );
        const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
        try {
          const [row] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM sergo_events WHERE type = 'PersonAdded' AND data LIKE '%ben@example.com%'`;
          assert.equal(row!.n, 2, "both additions reached the log: the race happened");
        } finally {
          await sql.end();
        }
      },
    );

    await t.step(
      "the same file uploaded with duplicates=refuse into one folder through both replicas at once: kept once, the other a 409 naming it",
      async () => {
        const bytes = await Deno.readFile(`${CORPUS_DIR}/text/markitdown-readme.md`);
        const upload = async (replica: { url: string }, name: string, folder: string) => {
          const form = new FormData();
          form.set("folder", folder);
          form.set("duplicates", "refuse");
          form.append("file", new File([bytes], name));
          const response = await fetch(`${replica.url}/api/documents`, {
            method: "POST",
            headers: { authorization: `Bearer ${personal}` },
            body: form,
          });
          return { status: response.status, body: await response.json() } as Answer;
        };
        for (const path of ["Uploads", "Elsewhere"]) {
          assert.equal((await api(r1!, "POST", "/api/folders", { path })).status, 201);
        }
        // The bytes are stored already, so the two uploads below wait only for the log, not for the blob's row.
        assert.equal((await upload(r1!, "elsewhere.md", "Elsewhere")).status, 201);
        await settled();
        const answers = await atOnce(cluster.databaseUrl, 2, [
          () => upload(r1!, "one.md", "Uploads"),
          () => upload(r2!, "two.md", "Uploads"),
        ]);
        assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409], answers.map(message).join(" "));
        const kept = answers.find((a) => a.status === 201)!.body.documents as { id: string; name: string }[];
        const refused = answers.find((a) => a.status === 409)!.body;
        const [keptName, refusedName] = kept[0]!.name === "one.md"
          ? ["one.md", "two.md"]
          : ["two.md", "one.md"];
        assert.deepEqual(refused, {
          code: "conflict",
          message:
            `"${refusedName}" is already in this folder as "${keptName}" (the same bytes): choose "Upload anyway" to keep both`,
        });
        const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
        try {
          const uploaded = await sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM sergo_events WHERE type = 'DocumentUploaded' AND data LIKE '%"one.md"%'
              OR type = 'DocumentUploaded' AND data LIKE '%"two.md"%'`;
          assert.equal(uploaded[0]!.n, 2, "both uploads reached the log: the race happened");
        } finally {
          await sql.end();
        }
        // Both replicas list the kept one only, and once it is read, search finds it and the other folder's copy only.
        const started = Date.now();
        for (const replica of [r1!, r2!]) {
          for (;;) {
            const listed = await (await fetch(`${replica.url}/api/documents?limit=100`, {
              headers: { authorization: `Bearer ${personal}` },
            })).json() as { items: { id: string; name: string; status: string }[] };
            const names = listed.items.map((d) => d.name).sort();
            const busy = listed.items.some((d) => d.status === "processing");
            if (!busy && JSON.stringify(names) === JSON.stringify(["elsewhere.md", keptName].sort())) break;
            assert.ok(Date.now() - started < 30_000, `${replica.url}: ${JSON.stringify(listed.items)}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          const found = await (await fetch(
            `${replica.url}/api/search?q=${encodeURIComponent("MarkItDown converts files to Markdown")}`,
            { headers: { authorization: `Bearer ${personal}` } },
          )).json() as { documents: { document: string }[] };
          assert.deepEqual(found.documents.map((d) => d.document).sort(), ["elsewhere.md", keptName].sort());
        }
      },
    );
  },
});

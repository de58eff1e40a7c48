/**
 * Every `SERGO_*` setting, through the real entry point: `main.ts serve` in a
 * subprocess with the setting in its environment and no flags, and what a
 * client of that server notices. A bad value of each stops start-up with
 * exit code 2 and one line naming the setting.
 */
import assert from "node:assert/strict";
import { openApp } from "../../src/app.ts";
import { uploadFile } from "../../src/domain/documents.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { createAgentKey, createPersonalKey, issueLoginToken } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { searchPassages } from "../../src/search/lexical.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";
import { makeLocalhostCertificate } from "../helpers/certificates.ts";
import { within } from "../helpers/wait.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const QUERY = "the performance of the system";

/** `main.ts serve` with only these environment variables (and PATH, HOME). */
function serve(env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...TASK_PERMISSIONS, MAIN, "serve"],
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "", NO_COLOR: "1", ...env },
  }).spawn();
}

/** Waits for serve's "Sergo is serving DIR at URL" line; returns it. */
async function started(child: Deno.ChildProcess): Promise<{ line: string; stop(): Promise<void> }> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/ at https?:\/\/\S+/.test(out)) {
    const { value, done } = await within(reader.read(), { ms: 180_000, what: "serve's next output" });
    if (done) {
      throw new Error(`serve ended: ${out}${new TextDecoder().decode((await child.output()).stderr)}`);
    }
    out += value;
  }
  return {
    line: out.split("\n").find((line) => line.startsWith("Sergo is serving"))!,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await reader.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
    },
  };
}

/** A free TCP port on 127.0.0.2. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.2", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A data directory with Ava, two searchable documents, three agent keys, a personal key and a login token. */
async function prepare(dir: string) {
  const app = await openApp(dir);
  try {
    const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
    const folder = await createFolder(
      app,
      { personId: ava.person_id, parentId: null, name: "Papers" },
      "cli",
    );
    for (const file of ["pdf/tracemonkey-pldi-paper.pdf", "pdf/ibm-redbook-db2-rcac-sampled.pdf"]) {
      const tempPath = await Deno.makeTempFile();
      await Deno.copyFile(`${CORPUS_DIR}/${file}`, tempPath);
      await uploadFile(
        app,
        { personId: ava.person_id, folderId: folder.folder_id, name: file.split("/")[1]!, tempPath },
        "cli",
      );
    }
    const pool = createExtractionPool({ concurrency: 1 });
    try {
      const worker = new ProcessingWorker(app, pool, { workerId: "test", concurrency: 1 });
      worker.kick();
      await worker.drain();
    } finally {
      await pool.close();
    }
    const deep = searchPassages(app.db, {
      personId: ava.person_id,
      folderIds: [folder.folder_id],
      documentIds: [],
      query: QUERY,
      depth: 50,
    });
    const canRead = { folders: [folder.folder_id], documents: [] };
    const key = async (name: string) =>
      (await createAgentKey(app, { personId: ava.person_id, name, description: "", canRead }, "cli")).value;
    return {
      deepPassages: deep.length,
      depthKey: await key("depth"),
      originKey: await key("origin"),
      rateKey: await key("rate"),
      personal: (await createPersonalKey(app, { personId: ava.person_id }, "cli")).value,
      login: (await issueLoginToken(app, { personId: ava.person_id }, "cli")).value,
    };
  } finally {
    await app.close();
  }
}

async function mcp(url: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function search(args: Record<string, unknown>) {
  return { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search", arguments: args } };
}

Deno.test("every SERGO_* setting of serve is read from the environment and changes what a client sees", async () => {
  await using dir = await tempDir("sergo-settings-");
  const given = await prepare(dir.path);
  assert.ok(given.deepPassages > 10, `${given.deepPassages} passages match at depth 50`);
  const port = freePort();
  const server = await started(serve({
    SERGO_DATA: dir.path,
    SERGO_HOST: "127.0.0.2",
    SERGO_PORT: String(port),
    SERGO_MAX_UPLOAD_MB: "1",
    SERGO_ALLOWED_ORIGINS: "https://app.example, https://other.example",
    SERGO_RATE_LIMIT: "1",
    SERGO_RATE_BURST: "3",
    SERGO_SEARCH_DEPTH: "10",
    SERGO_PUBLIC_URL: "https://sergo.example",
  }));
  try {
    const url = `http://127.0.0.2:${port}`;
    // SERGO_DATA, SERGO_HOST, SERGO_PORT: where it serves from and on.
    assert.match(server.line, new RegExp(`^Sergo is serving ${dir.path} at ${url.replaceAll(".", "\\.")} `));
    assert.equal((await (await fetch(`${url}/healthz`)).json()).ok, true);

    // SERGO_SEARCH_DEPTH: 10 passages in all, though more than 10 match.
    const first = await mcp(url, given.depthKey, search({ query: QUERY, limit: 20 }));
    const groups = JSON.parse(first.body.result.content[0].text) as Array<{ hits: unknown[] }>;
    assert.equal(groups.reduce((n, group) => n + group.hits.length, 0), 10);
    const past = await mcp(url, given.depthKey, search({ query: QUERY, limit: 20, offset: 10 }));
    assert.equal(past.body.result.content[0].text, "Nothing past this point.");

    // SERGO_ALLOWED_ORIGINS: both listed origins may call; another may not.
    for (const origin of ["https://app.example", "https://other.example"]) {
      assert.equal(
        (await mcp(url, given.originKey, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { origin })).status,
        200,
      );
    }
    const foreign = await mcp(url, given.originKey, { jsonrpc: "2.0", id: 1, method: "tools/list" }, {
      origin: "https://elsewhere.example",
    });
    assert.equal(foreign.status, 403);

    // SERGO_RATE_LIMIT and SERGO_RATE_BURST: 3 at once, then 1 a second.
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await mcp(url, given.rateKey, { jsonrpc: "2.0", id: 1, method: "tools/list" })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const limited = await mcp(url, given.rateKey, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    assert.match(limited.body.error.message, /at most 1 a second/);

    // SERGO_MAX_UPLOAD_MB: 1 MB.
    const upload = (bytes: number) =>
      fetch(`${url}/api/documents?name=notes.txt`, {
        method: "POST",
        headers: { authorization: `Bearer ${given.personal}` },
        body: new Uint8Array(bytes).fill(65),
      });
    const big = await upload(1024 * 1024 + 1);
    assert.equal(big.status, 413);
    assert.match((await big.json()).message, /larger than the upload limit/);
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(1024 * 1024 + 1).fill(65)]), "notes.txt");
    const bigForm = await fetch(`${url}/api/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${given.personal}` },
      body: form,
    });
    assert.equal(bigForm.status, 413, "a multipart upload over the limit too");
    await bigForm.body?.cancel();
    const small = await upload(1024 * 1024 - 1024);
    assert.equal(small.status, 201, await small.clone().text());
    await small.body?.cancel();

    // SERGO_PUBLIC_URL: the connection snippets name it, not the address asked.
    const keys = await fetch(`${url}/keys`, { headers: { cookie: `sergo_session=${given.login}` } });
    const page = await keys.text();
    assert.equal(keys.status, 200, page.slice(0, 200));
    assert.ok(page.includes("https://sergo.example/mcp"), "the snippet's URL");
    assert.ok(!page.includes(`${url}/mcp`));
  } finally {
    await server.stop();
  }
});

Deno.test("SERGO_TLS_CERT and SERGO_TLS_KEY serve https", async () => {
  await using dir = await tempDir("sergo-tls-");
  const { ca, cert, key } = await makeLocalhostCertificate(dir.path);
  const server = await started(serve({
    SERGO_DATA: `${dir.path}/data`,
    SERGO_PORT: "0",
    SERGO_TLS_CERT: cert,
    SERGO_TLS_KEY: key,
  }));
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(ca)] });
  try {
    const url = / at (https:\/\/\S+)/.exec(server.line)![1]!.replace("127.0.0.1", "localhost");
    const response = await fetch(`${url}/healthz`, { client });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).ok, true);
  } finally {
    client.close();
    await server.stop();
  }
});

Deno.test("a bad value of any SERGO_* setting stops serve with exit code 2 and one line naming it", async () => {
  await using dir = await tempDir("sergo-bad-settings-");
  for (
    const [name, value, message] of [
      ["SERGO_DATA", " ", "The data directory cannot be empty"],
      ["SERGO_HOST", "not a host!", 'Host "not a host!" is not a host name or address'],
      ["SERGO_PORT", "70000", "Port must be between 0 and 65535, got 70000"],
      ["SERGO_PORT", "http", 'Port must be a whole number, got "http"'],
      ["SERGO_MAX_UPLOAD_MB", "0", "SERGO_MAX_UPLOAD_MB must be between 1 and 100000, got 0"],
      [
        "SERGO_ALLOWED_ORIGINS",
        "app.example",
        'Allowed origin "app.example" must look like https://host[:port]',
      ],
      ["SERGO_RATE_LIMIT", "fast", 'SERGO_RATE_LIMIT must be a whole number, got "fast"'],
      ["SERGO_RATE_BURST", "0", "SERGO_RATE_BURST must be between 1 and 10000000, got 0"],
      ["SERGO_SEARCH_DEPTH", "9", "SERGO_SEARCH_DEPTH must be between 10 and 1000, got 9"],
      ["SERGO_SEARCH_DEPTH", "1001", "SERGO_SEARCH_DEPTH must be between 10 and 1000, got 1001"],
      ["SERGO_WORK_LEASE_S", "2", "SERGO_WORK_LEASE_S must be between 3 and 3600, got 2"],
      ["SERGO_PUBLIC_URL", "sergo.example", 'SERGO_PUBLIC_URL "sergo.example" must be an http or https URL'],
      ["SERGO_TLS_CERT", "cert.pem", "Give both --cert and --key for https, or neither"],
      ["SERGO_TLS_KEY", "key.pem", "Give both --cert and --key for https, or neither"],
      [
        "SERGO_TRANSCRIBER",
        "gpt",
        'SERGO_TRANSCRIBER must be one of auto, tesseract, openai, anthropic, none, got "gpt"',
      ],
      ["SERGO_TRANSCRIBER", "openai", "SERGO_TRANSCRIBER=openai needs SERGO_VISION_URL, the endpoint's URL"],
      [
        "SERGO_TESSERACT_LANGUAGES",
        "English",
        'SERGO_TESSERACT_LANGUAGES must list Tesseract language codes such as eng,rus,chi_sim, got "English"',
      ],
      ["SERGO_TRANSCRIBE_DPI", "1200", "SERGO_TRANSCRIBE_DPI must be between 100 and 600, got 1200"],
      ["SERGO_TRANSCRIBE_TIMEOUT_S", "0", "SERGO_TRANSCRIBE_TIMEOUT_S must be between 1 and 3600, got 0"],
      ["SERGO_TESSERACT_MEMORY_MB", "lots", 'SERGO_TESSERACT_MEMORY_MB must be a whole number, got "lots"'],
      ["SERGO_TRANSCRIBE_CONCURRENCY", "0", "SERGO_TRANSCRIBE_CONCURRENCY must be between 1 and 64, got 0"],
      [
        "SERGO_VISION_URL",
        "localhost:8080",
        'SERGO_VISION_URL "localhost:8080" must be an http or https URL',
      ],
      ["SERGO_VISION_RETRIES", "11", "SERGO_VISION_RETRIES must be between 0 and 10, got 11"],
    ] as const
  ) {
    const env: Record<string, string> = { SERGO_PORT: "0", [name]: value };
    if (name !== "SERGO_DATA") env.SERGO_DATA = `${dir.path}/data`;
    const child = serve(env);
    // A value taken by mistake would start the server for good: stop it and fail, rather than wait.
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const output = await child.output();
    clearTimeout(timer);
    const stderr = new TextDecoder().decode(output.stderr).trim();
    assert.notEqual(output.signal, "SIGKILL", `serve started with ${name}=${value}`);
    assert.equal(output.code, 2, `${name}=${value}: ${stderr}`);
    assert.equal(stderr, message, `${name}=${value}`);
  }
  await assert.rejects(Deno.stat(`${dir.path}/data/events.db`), Deno.errors.NotFound, "nothing was written");
});

Deno.test("the transcription settings decide Standard's transcriber, as /healthz and the API show", async () => {
  await using dir = await tempDir("sergo-transcribe-settings-");
  const health = async (env: Record<string, string>) => {
    const server = await started(serve({ SERGO_DATA: `${dir.path}/data`, SERGO_PORT: "0", ...env }));
    try {
      const url = / at (https?:\/\/\S+)/.exec(server.line)![1]!;
      return (await (await fetch(`${url}/healthz`)).json()).transcriber;
    } finally {
      await server.stop();
    }
  };
  // SERGO_TESSERACT_LANGUAGES, SERGO_TRANSCRIBE_DPI, _TIMEOUT_S, SERGO_TESSERACT_MEMORY_MB, _CONCURRENCY.
  const tesseract = await health({
    SERGO_TESSERACT_LANGUAGES: "rus,eng,xho",
    SERGO_TRANSCRIBE_DPI: "200",
    SERGO_TRANSCRIBE_TIMEOUT_S: "30",
    SERGO_TESSERACT_MEMORY_MB: "800",
    SERGO_TRANSCRIBE_CONCURRENCY: "1",
  });
  assert.match(
    tesseract.engine,
    /^Tesseract 5\.\d+\.\d+ \(rus, eng\)$/,
    "languages not installed are left out",
  );
  assert.deepEqual(
    {
      dpi: tesseract.dpi,
      timeout_s: tesseract.timeout_s,
      memory_mb: tesseract.memory_mb,
      c: tesseract.concurrency,
    },
    { dpi: 200, timeout_s: 30, memory_mb: 800, c: 1 },
  );
  // SERGO_TRANSCRIBER=none: Standard is off, and says so.
  assert.deepEqual(await health({ SERGO_TRANSCRIBER: "none" }), {
    ok: false,
    detail: "SERGO_TRANSCRIBER is none",
  });
  // SERGO_TRANSCRIBER=openai with SERGO_VISION_URL, _MODEL, _API_KEY, _RETRIES: the key is never shown.
  const vision = await health({
    SERGO_TRANSCRIBER: "openai",
    SERGO_VISION_URL: "http://127.0.0.1:9/v1/chat/completions",
    SERGO_VISION_MODEL: "qwen2.5-vl",
    SERGO_VISION_API_KEY: "sk-never-shown",
    SERGO_VISION_RETRIES: "2",
  });
  assert.equal(vision.engine, "qwen2.5-vl at 127.0.0.1:9 (OpenAI-compatible)");
  assert.equal(vision.retries, 2);
  assert.ok(!JSON.stringify(vision).includes("sk-never-shown"));
});

/**
 * The Standard preset from the CLI, through `main.ts`: `upload --preset
 * standard` waits while pages are transcribed and says how many so far,
 * `process ID --preset basic` makes a scan not_indexed with what would read it,
 * `process ID --preset standard` reads it again, and where no transcriber is
 * installed Standard is refused in one line, writing nothing.
 */
import assert from "node:assert/strict";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { runCli, tempDir } from "../helpers/temp.ts";

const SCAN = `${CORPUS_DIR}/pdf/scanned-text-page-image-only.pdf`;

Deno.test("the CLI reads a scan with Standard, showing pages transcribed, and processes it again", async () => {
  await needs("tesseract");
  await using dir = await tempDir("sergo-cli-standard-");
  const data = ["--data", dir.path];
  assert.equal(
    (await runCli(["person", "add", ...data, "--name", "Ava Bennett", "--email", "ava@example.com"])).code,
    0,
  );

  const upload = await runCli([
    "upload",
    ...data,
    "--person",
    "ava@example.com",
    "--preset",
    "standard",
    SCAN,
  ]);
  assert.equal(upload.code, 0, upload.stderr);
  const [id, status, pages, name] = upload.stdout.trim().split("\t");
  assert.deepEqual([status, pages, name], ["searchable", "4 pages", "scanned-text-page-image-only.pdf"]);
  // Progress, one line per new count where stderr is not a terminal.
  assert.match(upload.stderr, /processing: 0\/1 done; pages transcribed: \d\/4/);

  const basic = await runCli(["process", id!, ...data, "--preset", "basic"]);
  assert.equal(basic.code, 0, basic.stderr);
  assert.match(basic.stdout, /^status: not_indexed$/m);
  assert.match(basic.stdout, /^reason: No text layer — process it with Standard to read the scan$/m);

  const again = await runCli(["process", id!, ...data, "--preset", "standard"]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^status: searchable$/m);

  // Where nothing can transcribe, Standard is refused up front in one line, and nothing is recorded.
  const refused = await runCli(["process", id!, ...data, "--preset", "standard"], {
    env: { SERGO_TRANSCRIBER: "none" },
  });
  assert.equal(refused.code, 2, refused.stdout);
  assert.equal(
    refused.stderr.trim(),
    'The "standard" preset needs a transcriber, and none is installed here: install tesseract-ocr or set SERGO_TRANSCRIBER',
  );
  const status2 = await runCli(["document", "status", id!, ...data]);
  assert.match(status2.stdout, /^status: searchable$/m);
});

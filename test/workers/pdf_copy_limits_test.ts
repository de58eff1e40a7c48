import assert from "node:assert/strict";
import { join } from "node:path";
import { getDocument } from "../../projections/catalogue.ts";
import type { SergoApp } from "../../src/app.ts";
import { recordUpload, requestPdfCopy } from "../../src/domain/documents.ts";
import { addPerson } from "../../src/domain/people.ts";
import { convertToPdf } from "../../src/pdf_copy/libreoffice.ts";
import { createExtractionPool } from "../../src/processing/worker_pool.ts";
import { PdfCopyWorker } from "../../src/workers/pdf_copy_worker.ts";
import { ProcessingWorker } from "../../src/workers/processing_worker.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { needs } from "../helpers/dependencies.ts";
import { tempApp, tempDir } from "../helpers/temp.ts";
import { buildBombDocx } from "../helpers/zip_bomb.ts";

// The tests fail, loudly, without either.
await needs("soffice");
await needs("prlimit");

const bomb = buildBombDocx(406);

async function upload(
  app: SergoApp,
  personId: string,
  name: string,
  bytes: Uint8Array,
  preset: "basic" | "none" = "basic",
) {
  return await recordUpload(app, {
    personId,
    folderId: null,
    name,
    sha256: await app.blobs.write(bytes),
    size: bytes.length,
    type: name.endsWith(".pptx") ? "pptx" : "docx",
    preset,
  }, "t");
}

async function makeCopies(app: SergoApp): Promise<void> {
  const copies = new PdfCopyWorker(app);
  try {
    for (let i = 0; i < 50; i++) {
      copies.kick();
      await copies.drain();
    }
  } finally {
    await copies.stop();
  }
}

Deno.test("the test's zip bomb is the issue's: about 1.4 MB of zip holding 406 MB of XML", () => {
  assert.ok(bomb.bytes.length < 1.5e6, `${bomb.bytes.length} bytes`);
  assert.ok(bomb.xmlBytes > 405e6, `${bomb.xmlBytes} bytes of XML`);
});

Deno.test("files that processing refused, and zip bombs uploaded without processing, never reach LibreOffice", async () => {
  await using t = await tempApp();
  await using probe = await tempDir("sergo-soffice-probe-");
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const hostile = [
    "xml-bomb-xlsx-named.docx",
    "fuzzed-bad-central-directory.docx",
    "encrypted-ole2-container-named.docx",
    "legacy-word97-doc-named.docx",
    "truncated-real-deck-no-eocd.pptx",
    "fuzzed-not-a-zip.pptx",
  ];
  const refused = [await upload(t.app, ava.person_id, "bomb-400MB.docx", bomb.bytes)];
  for (const name of hostile) {
    refused.push(
      await upload(t.app, ava.person_id, name, await Deno.readFile(`${CORPUS_DIR}/hostile/${name}`)),
    );
  }
  const unprocessed = await upload(t.app, ava.person_id, "bomb-unprocessed.docx", bomb.bytes, "none");
  const pool = createExtractionPool({ concurrency: 1 });
  const processing = new ProcessingWorker(t.app, pool, { workerId: "test" });
  try {
    processing.kick();
    await processing.drain();
  } finally {
    await pool.close();
  }
  for (const doc of refused) {
    const row = getDocument(t.app.db, doc.document_id)!;
    assert.equal(row.status, "not_indexed", doc.name);
    assert.ok(row.failure_reason, `processing refused ${doc.name}`);
  }
  assert.match(getDocument(t.app.db, refused[0]!.document_id)!.failure_reason!, /zip bomb|too large to read/);
  // Asked again by hand, a refused file is still not copied.
  await requestPdfCopy(t.app, { personId: ava.person_id, documentId: refused[1]!.document_id }, "t");

  // A stand-in soffice on PATH records any call; prlimit stays the real one.
  const marker = join(probe.path, "soffice-was-called");
  await Deno.writeTextFile(join(probe.path, "soffice"), `#!/bin/sh\necho "$@" >> ${marker}\nexit 1\n`);
  await Deno.chmod(join(probe.path, "soffice"), 0o755);
  await Deno.symlink("/usr/bin/prlimit", join(probe.path, "prlimit"));
  const path = Deno.env.get("PATH")!;
  Deno.env.set("PATH", probe.path);
  try {
    await makeCopies(t.app);
  } finally {
    Deno.env.set("PATH", path);
  }
  for (const doc of refused) {
    const row = getDocument(t.app.db, doc.document_id)!;
    assert.equal(row.pdf_copy_status, "failed", doc.name);
    assert.ok(
      row.pdf_copy_reason!.startsWith(
        `No PDF copy is made of a file that processing refused: ${row.failure_reason}`,
      ),
      row.pdf_copy_reason!,
    );
  }
  const bombCopy = getDocument(t.app.db, unprocessed.document_id)!;
  assert.equal(bombCopy.pdf_copy_status, "failed");
  assert.match(
    bombCopy.pdf_copy_reason!,
    // 406 MB of XML in one part: past the 200 MB one part may hold (checked before the ratio).
    /^No PDF copy is made of this file: This zip archive would expand to more than 200 MB in one part, too large to read\.$/,
  );
  const calls = await Deno.readTextFile(marker).catch(() => "");
  assert.equal(calls, "", "LibreOffice was never started");
});

Deno.test("LibreOffice stops at its memory limit on a zip bomb, with a reason, and leaves nothing running", async () => {
  // A temporary folder of this test's own, so other runs' LibreOffices on the machine are not counted.
  await using tmp = await tempDir("sergo-bomb-tmp-");
  const tmpdir = Deno.env.get("TMPDIR");
  Deno.env.set("TMPDIR", tmp.path);
  try {
    await bombUnderLimit(tmp.path);
  } finally {
    if (tmpdir === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", tmpdir);
  }
});

async function bombUnderLimit(tmp: string): Promise<void> {
  const started = performance.now();
  await assert.rejects(
    convertToPdf(bomb.bytes, "docx", { memoryBytes: 1024 ** 3, timeoutMs: 90_000 }),
    (error: Error) => {
      // Out of memory, LibreOffice either gives up on the file or dies of a failed allocation.
      assert.equal(error.name, "PdfCopyError");
      assert.match(
        error.message,
        /^LibreOffice (could not copy the docx file to PDF: .+|stopped while copying the docx file to PDF \(.+\), most likely at its 1024 MB memory limit)$/,
      );
      return true;
    },
  );
  const seconds = (performance.now() - started) / 1000;
  assert.ok(seconds < 90, `stopped by the limit, not the clock (${seconds.toFixed(1)} s)`);
  // A real Word file still converts under the same limit.
  const pdf = await convertToPdf(
    await Deno.readFile(`${CORPUS_DIR}/docx/docling-nested-lists.docx`),
    "docx",
    { memoryBytes: 1024 ** 3 },
  );
  assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), "%PDF-");
  const ps = await new Deno.Command("ps", { args: ["-eo", "stat=,args="], stdout: "piped" }).output();
  const left = new TextDecoder().decode(ps.stdout).split("\n")
    .filter((line) => line.includes(`${tmp}/sergo-pdf-copy-`) && !line.trim().startsWith("Z"));
  assert.deepEqual(left, []);
}

Deno.test("copies take turns between people: one person's backlog does not hold up another's file", async () => {
  await using t = await tempApp();
  const ava = await addPerson(t.app, { name: "Ava Bennett", email: "ava@example.com" });
  const ben = await addPerson(t.app, { name: "Ben Okafor", email: "ben@example.com" });
  const small = await Deno.readFile(`${CORPUS_DIR}/docx/docling-nested-lists.docx`);
  const order: string[] = [];
  const names = new Map<string, string>();
  for (const [person, name] of [[ava, "ava-1"], [ava, "ava-2"], [ava, "ava-3"], [ben, "ben-1"]] as const) {
    const doc = await upload(t.app, person.person_id, `${name}.docx`, small, "none");
    names.set(doc.document_id, name);
  }
  const copies = new PdfCopyWorker(t.app);
  try {
    for (let i = 0; i < 10 && order.length < 4; i++) {
      copies.kick();
      await copies.drain();
      order.length = 0;
      for (const event of t.app.store.readFrom(0, 100_000)) {
        if (event.type === "PdfCopyMade" || event.type === "PdfCopyFailed") {
          order.push(names.get(event.data.document_id)!);
        }
      }
    }
  } finally {
    await copies.stop();
  }
  assert.deepEqual(order, ["ava-1", "ben-1", "ava-2", "ava-3"]);
  for (const id of names.keys()) assert.equal(getDocument(t.app.db, id)!.pdf_copy_status, "made");
});

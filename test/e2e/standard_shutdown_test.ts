/**
 * SIGTERM on a real `serve` while Tesseract reads a long scan: the server
 * stops within seconds (its Tesseract killed), records no result for the
 * document, and gives its lease back, so the next run (this server again, or
 * another replica) reads it.
 */
import assert from "node:assert/strict";
import { claimableProcessing } from "../../projections/catalogue.ts";
import { openApp } from "../../src/app.ts";
import { createPersonalKey } from "../../src/domain/keys.ts";
import { addPerson } from "../../src/domain/people.ts";
import { probeTesseract } from "../../src/processing/transcribers/tesseract.ts";
import { scanPdf } from "../helpers/scans.ts";
import { alive, childrenNamed } from "../helpers/processes.ts";
import { TASK_PERMISSIONS, tempDir } from "../helpers/temp.ts";

Deno.test("serve: SIGTERM while Tesseract reads a long scan stops within seconds, records nothing and gives the lease back", async () => {
  assert.ok(await probeTesseract(), "Tesseract is not installed: .ci/run installs tesseract-ocr");
  await using dir = await tempDir();
  const setup = await openApp(dir.path);
  const ava = await addPerson(setup, { name: "Ava Bennett", email: "ava@example.com" });
  const { value } = await createPersonalKey(setup, { personId: ava.person_id }, "t");
  await setup.close();

  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...TASK_PERMISSIONS,
      new URL("../../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      dir.path,
      "--port",
      "0",
    ],
    stdout: "piped",
    stderr: "piped",
    env: {
      NO_COLOR: "1",
      SERGO_TESSERACT_LANGUAGES: "eng",
      SERGO_TRANSCRIBE_DPI: "100",
      SERGO_TRANSCRIBE_CONCURRENCY: "1",
    },
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  let documentId = "";
  try {
    const listening = setTimeout(() => child.kill("SIGKILL"), 60_000);
    while (!/at (http:\/\/\S+)/.test(out)) {
      const { value, done } = await reader.read();
      assert.ok(!done, `serve stopped before it listened: ${out}`);
      out += value;
    }
    clearTimeout(listening);
    const url = /at (http:\/\/\S+)/.exec(out)![1]!;
    const form = new FormData();
    form.set("preset", "standard");
    const pdf = await scanPdf(Array(200).fill("Invoice Tallinn 17 paid in full"), { dense: true });
    form.append("file", new Blob([pdf as Uint8Array<ArrayBuffer>]), "long-scan.pdf");
    const r = await fetch(`${url}/api/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${value}` },
      body: form,
    });
    const body = await r.json();
    assert.equal(r.status, 201, JSON.stringify(body));
    documentId = body.documents[0].id;

    // Tesseract runs under prlimit, which becomes tesseract: either name is serve's child.
    const names = ["tesseract", "prlimit"];
    const waitStarted = Date.now();
    while (childrenNamed(child.pid, names).length === 0) {
      assert.ok(Date.now() - waitStarted < 120_000, "Tesseract did not start within 120 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const running = childrenNamed(child.pid, names);
    const signalled = Date.now();
    child.kill("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const status = await Promise.race([
      child.status,
      new Promise<null>((resolve) => timer = setTimeout(resolve, 20_000, null)),
    ]);
    clearTimeout(timer);
    if (status === null) child.kill("SIGKILL");
    const took = Date.now() - signalled;
    assert.ok(status !== null, "serve was still running 20 s after SIGTERM");
    assert.equal(status.code, 0, await stderr);
    assert.ok(took < 15_000, `serve took ${took} ms to stop`);
    assert.deepEqual(running.filter(alive), [], "Tesseract was left running");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    assert.match(out, /Stopped cleanly\./);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already stopped.
    }
    await child.status;
    await stderr;
  }

  // Nothing was recorded for the document, and another worker may take it at once.
  const app = await openApp(dir.path);
  try {
    const types = app.store.readStream(`document-${documentId}`).map((e) => e.type);
    assert.ok(!types.includes("DocumentProcessed") && !types.includes("ProcessingFailed"), types.join());
    assert.equal(types.at(-1), "ProcessingLeaseRenewed", types.join());
    const claimable = claimableProcessing(app.db, { now: app.now(), reclaimFor: null, limit: 10 });
    assert.deepEqual(claimable.map((d) => d.document_id), [documentId]);
  } finally {
    await app.close();
  }
});

/**
 * `sergo upload`: streams each file into the blob store, records the upload,
 * then waits for processing — by a running server or, when none takes the
 * work, by this process — and prints each document's id and final status.
 *
 * @module
 */
import { basename } from "node:path";
import { getDocument, getProgress } from "../../projections/catalogue.ts";
import { loadConfig } from "../config.ts";
import { openStandard } from "../processing/transcribers/choose.ts";
import type { SergoApp } from "../app.ts";
import { uploadFile } from "../domain/documents.ts";
import { DomainError } from "../domain/errors.ts";
import { createExtractionPool } from "../processing/worker_pool.ts";
import { ProcessingWorker } from "../workers/processing_worker.ts";
import { progress, progressDone } from "./_command.ts";

/** Uploads files for a person and, when `wait`, waits until each is processed. */
export async function uploadAndWait(
  app: SergoApp,
  input: { personId: string; folderId: string | null; files: string[]; preset: string; wait: boolean },
): Promise<number> {
  const ids: string[] = [];
  const failures = 0;
  // Registers this machine's transcriber first, so that --preset standard is refused where nothing reads it.
  const standard = await openStandard(loadConfig([]).transcribe);
  try {
    return await upload(app, input, ids, failures);
  } finally {
    standard.close();
  }
}

async function upload(
  app: SergoApp,
  input: { personId: string; folderId: string | null; files: string[]; preset: string; wait: boolean },
  ids: string[],
  failures: number,
): Promise<number> {
  for (const [i, file] of input.files.entries()) {
    progress(`uploading ${i + 1}/${input.files.length}: ${basename(file)}`);
    const temp = await app.blobs.tempPath();
    try {
      await Deno.copyFile(file, temp);
      const doc = await uploadFile(app, {
        personId: input.personId,
        folderId: input.folderId,
        name: basename(file),
        tempPath: temp,
        preset: input.preset,
      }, "cli");
      ids.push(doc.document_id);
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      if (!(error instanceof DomainError)) throw error;
      progressDone();
      console.error(`${basename(file)}: ${error.message}`);
      failures++;
    }
  }
  progressDone();
  if (input.wait) await waitForDocuments(app, ids);
  for (const id of ids) {
    const doc = getDocument(app.db, id)!;
    const pages = doc.page_count === null
      ? ""
      : `\t${doc.page_count} ${doc.page_count === 1 ? "page" : "pages"}${
        doc.pages_estimated ? " (estimated)" : ""
      }`;
    const reason = doc.failure_reason ? `\t${doc.failure_reason}` : "";
    console.log(
      `${doc.document_id}\t${
        doc.status === "processing" ? "processing" : doc.status
      }${pages}\t${doc.name}${reason}`,
    );
  }
  return failures > 0 ? 1 : 0;
}

/**
 * Waits until none of the documents is still processing. A running server may
 * take the work; whatever no one has claimed is read here.
 */
export async function waitForDocuments(app: SergoApp, ids: readonly string[]): Promise<void> {
  const pending = () => ids.filter((id) => getDocument(app.db, id)?.status === "processing");
  if (pending().length === 0) return;
  const pool = createExtractionPool();
  const config = loadConfig([]);
  const standard = await openStandard(config.transcribe);
  const worker = new ProcessingWorker(app, pool, {
    workerId: `cli-${Deno.pid}`,
    leaseMs: config.workLeaseMs,
    only: new Set(ids),
    standard: standard.reading,
  });
  let shown = "";
  try {
    for (;;) {
      app.catchUp();
      const left = pending();
      const transcribing = left.map((id) => getProgress(app.db, id)).filter((p) => p !== null);
      const pages = transcribing.length === 0
        ? ""
        : `; pages transcribed: ${transcribing.map((p) => `${p.pages_done}/${p.pages_total}`).join(", ")}`;
      const line = `processing: ${ids.length - left.length}/${ids.length} done${pages}`;
      progress(line);
      // Where stderr is no terminal (a log, CI), each new count is one line.
      if (pages && line !== shown && !Deno.stderr.isTerminal()) console.error(line);
      shown = line;
      if (left.length === 0) break;
      worker.kick();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await worker.stop();
  } finally {
    progressDone();
    await pool.close();
    standard.close();
  }
}

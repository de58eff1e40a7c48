/**
 * The reader subprocess of the extraction pool: reads documents from stdin as frames
 * (a JSON header `{ fileName }`, then the bytes) and answers each with a JSON frame
 * `{ ok: true, result }` or `{ ok: false, message }` on stdout. Run by `worker_pool.ts`
 * with a V8 heap limit and read access to the pdf.js package only.
 *
 * @module
 */
import { extractDocument } from "./extract.ts";
import { loadPdfjs } from "./_pdfjs.ts";
import { encodeFrame, FrameReader } from "./_frames.ts";
import { ProcessingError } from "./processing_error.ts";

// pdf.js reports warnings with console.log; stdout carries frames only.
console.log =
  console.info =
  console.warn =
  console.debug =
    () => {};

// pdf.js (and its patched worker module) loads while the first document is on its way.
loadPdfjs().catch(() => {});

const encoder = new TextEncoder();
const frames = new FrameReader(Deno.stdin.readable);
const out = Deno.stdout.writable.getWriter();

while (true) {
  const header = await frames.next();
  const bytes = await frames.next();
  if (header === undefined || bytes === undefined) break;
  const { fileName } = JSON.parse(new TextDecoder().decode(header)) as { fileName: string };
  let answer: unknown;
  try {
    answer = { ok: true, result: await extractDocument(bytes, fileName) };
  } catch (error) {
    answer = {
      ok: false,
      message: error instanceof ProcessingError
        ? error.message
        : `This file cannot be read: ${String(error)}.`,
    };
  }
  await out.write(encodeFrame(encoder.encode(JSON.stringify(answer))));
}

/**
 * Runs {@link extractDocument} off the server process, in a pool of reader subprocesses
 * (`deno run` of `_extract_child.ts`), each with a V8 heap limit, a time limit per
 * document and read access to the pdf.js package only (no net, no write, no env, no run).
 *
 * Why subprocesses, not Deno Workers: Workers share the process, and a V8 heap
 * exhaustion in any isolate aborts the whole process (measured: a Worker allocating
 * without bound took the caller down). A subprocess that runs out of memory, crashes or
 * hangs fails alone: its document is refused with a reason and the slot gets a fresh
 * reader. Each slot keeps its reader between documents, so the start-up cost (about
 * 0.2 s, mostly loading pdf.js) is paid once per slot, not per document.
 *
 * The server needs `--allow-run=deno` (or `--allow-run` for `Deno.execPath()`).
 *
 * @module
 */
import type { ExtractResult } from "./extract_result.ts";
import { encodeFrame, FrameReader } from "./_frames.ts";
import { PDFJS_DATA } from "./_pdfjs_data.ts";
import { ProcessingError } from "./processing_error.ts";

export type { ExtractResult } from "./extract_result.ts";
export { ProcessingError } from "./processing_error.ts";

/** Options of {@link createExtractionPool}. */
export interface ExtractionPoolOptions {
  /** Documents read at once (default: `navigator.hardwareConcurrency`). */
  concurrency?: number;
  /** Time limit per document in milliseconds (default 120,000). */
  timeoutMs?: number;
  /**
   * V8 heap limit per reader in megabytes (default 2,048). Below 2,048 V8 runs
   * the reader's heap differently and PDF extraction was 10–15% slower
   * (measured here: 12.6 vs 11.4 ms for a 19-page deck with 1,024).
   */
  memoryMb?: number;
}

/** A pool of sandboxed readers. */
export interface ExtractionPool {
  /**
   * Reads a document; rejects with a {@link ProcessingError} whose message says why.
   * `timeoutMs` replaces the pool's time limit for this document.
   */
  extract(bytes: Uint8Array, fileName: string, options?: { timeoutMs?: number }): Promise<ExtractResult>;
  /** Stops every reader; pending documents are rejected. */
  close(): Promise<void>;
}

const CHILD_SCRIPT = new URL("./_extract_child.ts", import.meta.url);
/** A reader is replaced after this many documents, bounding slow leaks in parsers. */
const JOBS_PER_READER = 500;

/**
 * The command that starts a reader: this Deno's own binary where the process
 * may run it, otherwise `deno` by name, which `deno task` permissions allow as
 * `--allow-run=deno` (the path of `Deno.execPath()` differs between installs).
 */
function denoCommand(): string {
  const own = Deno.execPath();
  return Deno.permissions.querySync({ name: "run", command: own }).state === "granted" ? own : "deno";
}

interface Job {
  bytes: Uint8Array;
  fileName: string;
  timeoutMs: number;
  resolve(result: ExtractResult): void;
  reject(error: ProcessingError): void;
}

class Reader {
  readonly process: Deno.ChildProcess;
  readonly frames: FrameReader;
  readonly stdin: WritableStreamDefaultWriter<Uint8Array>;
  stderrTail = "";
  jobs = 0;
  exited: Promise<Deno.CommandStatus>;

  constructor(memoryMb: number) {
    this.process = new Deno.Command(denoCommand(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        `--allow-read=${PDFJS_DATA.packageDir}`,
        `--v8-flags=--max-old-space-size=${memoryMb}`,
        CHILD_SCRIPT.href,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.frames = new FrameReader(this.process.stdout);
    this.stdin = this.process.stdin.getWriter();
    this.exited = this.process.status;
    this.#drainStderr();
  }

  async #drainStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.process.stderr) {
        this.stderrTail = (this.stderrTail + decoder.decode(chunk, { stream: true })).slice(-4000);
      }
    } catch {
      // The reader was killed.
    }
  }

  kill(): void {
    try {
      this.process.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    this.frames.cancel();
    this.stdin.close().catch(() => {});
  }
}

/**
 * Creates a pool of readers; documents queue until a reader is free.
 *
 * @example
 * const pool = createExtractionPool({ timeoutMs: 60_000 });
 * const result = await pool.extract(bytes, "deck.pptx");
 * await pool.close();
 */
export function createExtractionPool(options: ExtractionPoolOptions = {}): ExtractionPool {
  const concurrency = Math.max(1, options.concurrency ?? navigator.hardwareConcurrency ?? 2);
  const timeoutMs = options.timeoutMs ?? 120_000;
  const memoryMb = options.memoryMb ?? 2048;
  const queue: Job[] = [];
  const slots: { reader?: Reader; busy: boolean }[] = Array.from(
    { length: concurrency },
    () => ({ busy: false }),
  );
  let closed = false;

  const run = async (job: Job, slot: { reader?: Reader; busy: boolean }): Promise<void> => {
    try {
      if (!slot.reader || slot.reader.jobs >= JOBS_PER_READER) {
        slot.reader?.kill();
        slot.reader = new Reader(memoryMb);
      }
    } catch (error) {
      // No reader could be started (e.g. no permission to run deno): this document fails, the caller stays up.
      slot.reader = undefined;
      slot.busy = false;
      job.reject(
        new ProcessingError(`No reader could be started for this file: ${String(error).split("\n")[0]}`),
      );
      return;
    }
    const reader = slot.reader;
    reader.jobs++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let healthy = false;
    try {
      const header = new TextEncoder().encode(JSON.stringify({ fileName: job.fileName }));
      const answer = reader.frames.next();
      const timeout = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), job.timeoutMs);
      });
      const exited = reader.exited.then(() => "exited" as const);
      reader.stdin.write(encodeFrame(header)).catch(() => {});
      reader.stdin.write(encodeFrame(job.bytes)).catch(() => {});
      const outcome = await Promise.race([answer, timeout, exited]);
      if (outcome === "timeout") {
        job.reject(
          new ProcessingError(
            `Reading this file took longer than ${Number((job.timeoutMs / 1000).toFixed(1))} s.`,
          ),
        );
      } else if (outcome === "exited" || outcome === undefined) {
        const status = await reader.exited;
        await new Promise((r) => setTimeout(r, 50)); // let the stderr tail arrive
        job.reject(crashError(reader.stderrTail, status, memoryMb));
      } else {
        const message = JSON.parse(new TextDecoder().decode(outcome)) as
          | { ok: true; result: ExtractResult }
          | { ok: false; message: string };
        if (message.ok) job.resolve(message.result);
        else job.reject(new ProcessingError(message.message));
        healthy = true;
      }
    } catch (error) {
      job.reject(new ProcessingError(`The reader failed on this file: ${String(error)}.`));
    } finally {
      clearTimeout(timer);
      if (!healthy || closed) {
        reader.kill();
        if (slot.reader === reader) slot.reader = undefined;
      }
      slot.busy = false;
      pump();
    }
  };

  const pump = (): void => {
    while (!closed && queue.length > 0) {
      const slot = slots.find((s) => !s.busy && s.reader) ?? slots.find((s) => !s.busy);
      if (!slot) return;
      slot.busy = true;
      void run(queue.shift()!, slot);
    }
  };

  return {
    extract(bytes, fileName, options = {}) {
      if (closed) return Promise.reject(new ProcessingError("The extraction pool is closed."));
      return new Promise<ExtractResult>((resolve, reject) => {
        queue.push({ bytes, fileName, timeoutMs: options.timeoutMs ?? timeoutMs, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new ProcessingError("The extraction pool was closed."));
      const readers = slots.flatMap((s) => (s.reader ? [s.reader] : []));
      for (const slot of slots) slot.reader = undefined;
      for (const reader of readers) reader.kill();
      await Promise.all(readers.map((r) => r.exited.catch(() => {})));
    },
  };
}

function crashError(stderr: string, status: Deno.CommandStatus, memoryMb: number): ProcessingError {
  if (/out of memory|Allocation failed|heap limit/i.test(stderr)) {
    return new ProcessingError(`Reading this file needed more than ${memoryMb} MB of memory.`);
  }
  const how = status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
  return new ProcessingError(`The reader stopped unexpectedly on this file (${how}).`);
}

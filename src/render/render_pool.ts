/**
 * A pool of Deno Workers that draw pages (PNG) and cut out one-page PDFs off
 * the request path: at most `concurrency` jobs run at once, the rest wait in
 * order; a job that runs past `timeoutMs`, or crashes its worker, fails alone
 * and its worker is replaced.
 *
 * @example
 * ```ts
 * const pool = createRenderPool({ concurrency: 2 });
 * const png = await pool.render({ pdfBytes, page: 3, format: "image" });
 * pool.close();
 * ```
 *
 * @module
 */
import { PageRenderError } from "./page_drawing.ts";
import type { RenderWorkerRequest, RenderWorkerResponse } from "./render_worker.ts";

/** One page to draw or cut out. */
export interface RenderJob {
  /** The whole PDF (copied to the worker; the caller keeps its bytes). */
  pdfBytes: Uint8Array;
  /** The page, from 1. */
  page: number;
  /** "image" for a PNG, "pdf" for that page alone as a PDF, "gray" for a PGM to transcribe. */
  format: "image" | "pdf" | "gray";
  /** The resolution of a "gray" picture (default 300 dpi). */
  dpi?: number;
  /** This job's time limit, instead of the pool's. */
  timeoutMs?: number;
}

/** Draws pages off the request path. */
export interface RenderPool {
  /** The PNG or one-page PDF of the job's page; rejects with a `PageRenderError`. */
  render(job: RenderJob): Promise<Uint8Array>;
  /** Stops all workers; waiting and running jobs are rejected. */
  close(): void;
  /** Jobs drawing now, jobs waiting for a worker, and workers alive. */
  load(): { running: number; waiting: number; workers: number };
}

/** How a render pool runs. */
export interface RenderPoolOptions {
  /** Jobs running at once (one worker each); default 2. */
  concurrency?: number;
  /** Time one job may take before its worker is terminated; default 20,000 ms. */
  timeoutMs?: number;
  /** Jobs a worker runs before it is replaced, to bound slow leaks; default 500. */
  maxJobsPerWorker?: number;
}

interface Pending {
  job: RenderJob;
  resolve(bytes: Uint8Array): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker | null;
  jobs: number;
  running: (Pending & { id: number; timer: ReturnType<typeof setTimeout> }) | null;
}

/** Creates a render pool; workers start on first use. */
export function createRenderPool(options: RenderPoolOptions = {}): RenderPool {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 2));
  const timeoutMs = options.timeoutMs ?? 20_000;
  const maxJobsPerWorker = options.maxJobsPerWorker ?? 500;
  const slots: Slot[] = Array.from({ length: concurrency }, () => ({ worker: null, jobs: 0, running: null }));
  const queue: Pending[] = [];
  let nextId = 1;
  let closed = false;

  function finish(slot: Slot, outcome: { bytes: Uint8Array } | { error: Error }, dropWorker: boolean): void {
    const running = slot.running;
    if (!running) return;
    clearTimeout(running.timer);
    slot.running = null;
    if (dropWorker || slot.jobs >= maxJobsPerWorker) {
      slot.worker?.terminate();
      slot.worker = null;
    }
    if ("bytes" in outcome) running.resolve(outcome.bytes);
    else running.reject(outcome.error);
    pump();
  }

  function startWorker(slot: Slot): Worker {
    const worker = new Worker(new URL("./render_worker.ts", import.meta.url), { type: "module" });
    slot.jobs = 0;
    worker.onmessage = (event: MessageEvent<RenderWorkerResponse>) => {
      const answer = event.data;
      if (slot.worker !== worker || slot.running?.id !== answer.id) return;
      finish(
        slot,
        answer.ok ? { bytes: answer.bytes } : { error: new PageRenderError(answer.message) },
        false,
      );
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      if (slot.worker !== worker) return;
      const page = slot.running?.job.page;
      const reason = (event.message || "unknown error").replace(/\.$/, "");
      finish(slot, {
        error: new PageRenderError(`Cannot draw page ${page}: the renderer crashed: ${reason}`),
      }, true);
    };
    worker.onmessageerror = () => {
      if (slot.worker !== worker) return;
      const page = slot.running?.job.page;
      finish(slot, {
        error: new PageRenderError(`Cannot draw page ${page}: the renderer's answer was unreadable`),
      }, true);
    };
    return worker;
  }

  function pump(): void {
    if (closed) return;
    for (const slot of slots) {
      if (slot.running) continue;
      const pending = queue.shift();
      if (!pending) return;
      const worker = slot.worker ?? startWorker(slot);
      slot.worker = worker;
      slot.jobs++;
      const id = nextId++;
      const { page, format, dpi } = pending.job;
      const limit = pending.job.timeoutMs ?? timeoutMs;
      const timer = setTimeout(() => {
        const what = format === "pdf" ? "Cutting out" : "Drawing";
        finish(
          slot,
          { error: new PageRenderError(`${what} page ${page} took longer than ${limit} ms`) },
          true,
        );
      }, limit);
      slot.running = { ...pending, id, timer };
      const request: RenderWorkerRequest = { id, pdfBytes: pending.job.pdfBytes, page, format, dpi };
      worker.postMessage(request);
    }
  }

  return {
    render(job: RenderJob): Promise<Uint8Array> {
      if (closed) return Promise.reject(new PageRenderError("Cannot draw a page: the render pool is closed"));
      return new Promise((resolve, reject) => {
        queue.push({ job, resolve, reject });
        pump();
      });
    },
    load() {
      return {
        running: slots.filter((slot) => slot.running).length,
        waiting: queue.length,
        workers: slots.filter((slot) => slot.worker).length,
      };
    },
    close(): void {
      if (closed) return;
      closed = true;
      const error = new PageRenderError("Cannot draw the page: the render pool was closed");
      for (const pending of queue.splice(0)) pending.reject(error);
      for (const slot of slots) {
        if (slot.running) {
          clearTimeout(slot.running.timer);
          slot.running.reject(error);
          slot.running = null;
        }
        slot.worker?.terminate();
        slot.worker = null;
      }
    },
  };
}

/**
 * A port between pdf.js's API and a worker module loaded in the same
 * isolate, as pdf.js's own fake worker has: each message is copied and
 * delivered after the current task. The copy is the caller's to choose:
 * `structuredClone` by default (what pdf.js does), or a cheaper one where the
 * caller knows what the worker touches again (`src/processing/_pdfjs.ts`).
 *
 * @module
 */

/** How a message is copied on its way across the port. */
export type PortCopy = (data: unknown, transfer?: Transferable[]) => unknown;

const cloned: PortCopy = (data, transfer) => structuredClone(data, transfer ? { transfer } : undefined);

/** The port; hand it to both `WorkerMessageHandler.initializeFromPort` and `new PDFWorker({ port })`. */
export class LoopbackPort {
  readonly #listeners = new Set<(event: { data: unknown }) => void>();

  constructor(readonly copy: PortCopy = cloned) {}

  postMessage(data: unknown, transfer?: Transferable[]): void {
    const event = { data: this.copy(data, transfer) };
    queueMicrotask(() => {
      for (const listener of this.#listeners) listener.call(this, event);
    });
  }

  addEventListener(_type: string, listener: (event: { data: unknown }) => void): void {
    this.#listeners.add(listener);
  }

  removeEventListener(_type: string, listener: (event: { data: unknown }) => void): void {
    this.#listeners.delete(listener);
  }

  terminate(): void {
    this.#listeners.clear();
  }
}

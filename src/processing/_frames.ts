/**
 * Length-prefixed frames over a byte stream: a 4-byte big-endian length, then the payload.
 * Used between the extraction pool and its reader subprocesses.
 *
 * @module
 */

/** Encodes one frame. */
export function encodeFrame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.length);
  new DataView(out.buffer).setUint32(0, payload.length);
  out.set(payload, 4);
  return out;
}

/** Reads frames from a stream, one at a time; `undefined` when the stream ends. */
export class FrameReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buffer = new Uint8Array(0);

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  async #fill(size: number): Promise<boolean> {
    while (this.#buffer.length < size) {
      const { value, done } = await this.#reader.read();
      if (done) return false;
      const next = new Uint8Array(this.#buffer.length + value.length);
      next.set(this.#buffer);
      next.set(value, this.#buffer.length);
      this.#buffer = next;
    }
    return true;
  }

  /** The next frame's payload. */
  async next(): Promise<Uint8Array | undefined> {
    if (!(await this.#fill(4))) return undefined;
    const size = new DataView(this.#buffer.buffer, this.#buffer.byteOffset).getUint32(0);
    if (!(await this.#fill(4 + size))) return undefined;
    const payload = this.#buffer.slice(4, 4 + size);
    this.#buffer = this.#buffer.slice(4 + size);
    return payload;
  }

  /** Stops reading. */
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}

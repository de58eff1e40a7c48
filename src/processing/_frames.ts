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
  /** Chunks read and not consumed yet, the first one from `#offset` on. */
  #chunks: Uint8Array[] = [];
  #offset = 0;
  #buffered = 0;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** Reads until `size` bytes are buffered (chunks are kept as they come: no copy per chunk). */
  async #fill(size: number): Promise<boolean> {
    while (this.#buffered < size) {
      const { value, done } = await this.#reader.read();
      if (done) return false;
      this.#chunks.push(value);
      this.#buffered += value.length;
    }
    return true;
  }

  /** Takes `size` buffered bytes, copying them once. */
  #take(size: number): Uint8Array {
    const out = new Uint8Array(size);
    let filled = 0;
    while (filled < size) {
      const chunk = this.#chunks[0]!;
      const part = Math.min(size - filled, chunk.length - this.#offset);
      out.set(chunk.subarray(this.#offset, this.#offset + part), filled);
      filled += part;
      this.#offset += part;
      if (this.#offset === chunk.length) {
        this.#chunks.shift();
        this.#offset = 0;
      }
    }
    this.#buffered -= size;
    return out;
  }

  /** The next frame's payload. */
  async next(): Promise<Uint8Array | undefined> {
    if (!(await this.#fill(4))) return undefined;
    const header = this.#take(4);
    const size = new DataView(header.buffer).getUint32(0);
    if (!(await this.#fill(size))) return undefined;
    return this.#take(size);
  }

  /** Stops reading. */
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}

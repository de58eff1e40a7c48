/** Frames between the extraction pool and its readers survive any split of the byte stream. */
import assert from "node:assert/strict";
import { encodeFrame, FrameReader } from "../../src/processing/_frames.ts";

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

Deno.test("frames: any chunking gives back the same payloads, then undefined at the end", async () => {
  const payloads = [
    new Uint8Array(0),
    new TextEncoder().encode('{"fileName":"deck.pptx"}'),
    Uint8Array.from({ length: 20_000 }, (_, i) => (i * 7) % 251),
    new Uint8Array([1]),
  ];
  const bytes = new Uint8Array(payloads.reduce((n, p) => n + 4 + p.length, 0));
  let at = 0;
  for (const payload of payloads) {
    bytes.set(encodeFrame(payload), at);
    at += 4 + payload.length;
  }
  for (const size of [1, 3, 4, 5, 1000, 65_536, bytes.length]) {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.slice(i, i + size));
    const reader = new FrameReader(streamOf(chunks));
    for (const payload of payloads) assert.deepEqual(await reader.next(), payload, `chunks of ${size}`);
    assert.equal(await reader.next(), undefined);
  }
});

Deno.test("frames: a stream cut inside a frame ends without a partial payload", async () => {
  const frame = encodeFrame(new Uint8Array([1, 2, 3, 4, 5]));
  const reader = new FrameReader(streamOf([frame.slice(0, 6)]));
  assert.equal(await reader.next(), undefined);
});

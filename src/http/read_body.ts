/**
 * Reads a request body with a size limit, stopping as soon as it is passed.
 *
 * @module
 */

/**
 * The body as text, or null once it passes `limit` bytes (the rest is not
 * read). The `Content-Length` header is read once: header look-ups are calls
 * into the runtime, and this runs on every request.
 */
export async function readBodyText(request: Request, limit: number): Promise<string | null> {
  const length = request.headers.get("content-length");
  if (length !== null && /^\d+$/.test(length)) {
    // A declared length: the runtime reads exactly that much, in one go.
    return Number(length) > limit ? null : await request.text();
  }
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

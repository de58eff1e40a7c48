/**
 * Streams uploads to disk without holding a whole file in memory:
 * `multipart/form-data` through busboy, or a raw body with `?name=`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import Busboy from "busboy";
import type { Blobs } from "../blob_store.ts";
import { DomainError } from "../domain/errors.ts";
import { arriving, UPLOAD_IDLE_MS } from "../http/read_body.ts";

/** Most files in one multipart upload. */
export const MAX_FILES_PER_UPLOAD = 100;

/** Most uploads one person may have arriving at once. */
export const MAX_UPLOADS_PER_PERSON = 4;

/** Counts the uploads each person has arriving, so one person cannot hold every disk write and socket. */
export class UploadSlots {
  readonly #busy = new Map<string, number>();
  readonly #limit: number;

  /** Creates the counter; at most `limit` uploads per person at once. */
  constructor(limit = MAX_UPLOADS_PER_PERSON) {
    this.#limit = limit;
  }

  /** Takes a slot for this person: a function that gives it back, or null when all are taken. */
  take(personId: string): (() => void) | null {
    const busy = this.#busy.get(personId) ?? 0;
    if (busy >= this.#limit) return null;
    this.#busy.set(personId, busy + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const now = (this.#busy.get(personId) ?? 1) - 1;
      if (now <= 0) this.#busy.delete(personId);
      else this.#busy.set(personId, now);
    };
  }

  /** The sentence a refused upload gets. */
  get message(): string {
    return `You have ${this.#limit} uploads arriving already: wait for one to finish, then send this one again`;
  }
}

/** One file of an upload, streamed to a temporary path. */
export interface UploadedFile {
  name: string;
  tempPath: string;
  size: number;
}

/** The fields and files of an upload. */
export interface Uploads {
  fields: Record<string, string>;
  files: UploadedFile[];
}

function tooLarge(limit: number): DomainError {
  return new DomainError(
    "too_large",
    `The file is larger than the upload limit of ${Math.round(limit / 1024 / 1024)} MB`,
  );
}

/** Reads an upload request's files to temporary paths in the blob store's folder. */
export async function streamUploads(
  request: Request,
  url: URL,
  blobs: Blobs,
  maxBytes: number,
  idleMs: number = UPLOAD_IDLE_MS,
): Promise<Uploads> {
  const type = request.headers.get("content-type") ?? "";
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > maxBytes + 1_000_000) throw tooLarge(maxBytes);
  if (!request.body) throw new DomainError("invalid", "The upload has no body");
  if (type.startsWith("multipart/form-data")) {
    if (!/;\s*boundary=("[^"]+"|[^\s;]+)/i.test(type)) {
      throw new DomainError(
        "invalid",
        'A multipart upload needs a boundary in its Content-Type header, as in "multipart/form-data; boundary=…"',
      );
    }
    return await streamMultipart(request, blobs, maxBytes, idleMs);
  }
  const name = url.searchParams.get("name");
  if (!name) {
    throw new DomainError("invalid", "Give the file's name as ?name= (or upload as multipart/form-data)");
  }
  const fields: Record<string, string> = {};
  for (const key of ["folder", "folder_id", "preset"]) {
    const value = url.searchParams.get(key);
    if (value !== null) fields[key] = value;
  }
  const tempPath = await blobs.tempPath();
  let size = 0;
  try {
    using file = await Deno.open(tempPath, { write: true, create: true, truncate: true });
    const writer = file.writable.getWriter();
    for await (const chunk of arriving(request.body, idleMs)) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      await writer.write(chunk);
    }
    await writer.close();
  } catch (error) {
    await Deno.remove(tempPath).catch(() => {});
    throw error;
  }
  if (size === 0) {
    await Deno.remove(tempPath).catch(() => {});
    throw new DomainError("invalid", `"${name}" is empty`);
  }
  return { fields, files: [{ name, tempPath, size }] };
}

async function streamMultipart(
  request: Request,
  blobs: Blobs,
  maxBytes: number,
  idleMs: number,
): Promise<Uploads> {
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  const writes: Promise<void>[] = [];
  /** The files' streams, destroyed when the body fails, so their writes end rather than wait for it. */
  const streams: Array<NodeJS.ReadableStream & { destroy?(error?: Error): void }> = [];
  let failure: Error | null = null;
  let busboy: ReturnType<typeof Busboy>;
  try {
    busboy = Busboy({
      headers: Object.fromEntries(request.headers),
      limits: { fileSize: maxBytes, files: MAX_FILES_PER_UPLOAD, fields: 20, fieldSize: 10_000 },
    });
  } catch (error) {
    throw new DomainError(
      "invalid",
      `The upload's Content-Type cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const done = new Promise<void>((resolve, reject) => {
    busboy.on("field", (name: string, value: string) => {
      fields[name] = value;
    });
    busboy.on(
      "file",
      (
        _field: string,
        stream: NodeJS.ReadableStream & { truncated?: boolean },
        info: { filename: string },
      ) => {
        const name = info.filename ?? "";
        streams.push(stream);
        // In the form's order, whichever temporary file is ready first.
        const entry: UploadedFile = { name, tempPath: "", size: 0 };
        files.push(entry);
        writes.push((async () => {
          const tempPath = entry.tempPath = await blobs.tempPath();
          using file = await Deno.open(tempPath, { write: true, create: true, truncate: true });
          const writer = file.writable.getWriter();
          let limited = false;
          stream.on("limit", () => (limited = true));
          for await (const chunk of stream as AsyncIterable<Buffer>) {
            entry.size += chunk.byteLength;
            await writer.write(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          }
          await writer.close();
          if (limited) failure ??= tooLarge(maxBytes);
        })());
      },
    );
    busboy.on("filesLimit", () => {
      failure ??= new DomainError("invalid", `At most ${MAX_FILES_PER_UPLOAD} files in one upload`);
    });
    busboy.on("error", (error: unknown) => reject(error));
    busboy.on("close", () => resolve());
  });
  try {
    for await (const chunk of arriving(request.body!, idleMs)) {
      if (!busboy.write(Buffer.from(chunk))) await new Promise((resolve) => busboy.once("drain", resolve));
    }
    busboy.end();
    await done;
    await Promise.all(writes);
  } catch (error) {
    for (const stream of streams) stream.destroy?.(error instanceof Error ? error : new Error(String(error)));
    await Promise.allSettled(writes);
    for (const file of files) await Deno.remove(file.tempPath).catch(() => {});
    if (error instanceof DomainError) throw error;
    throw new DomainError(
      "invalid",
      `The upload could not be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (failure) {
    for (const file of files) await Deno.remove(file.tempPath).catch(() => {});
    throw failure;
  }
  // A part without a file name is a file input left empty; a named file of 0 bytes is a file (processing says it is empty).
  const empty = files.filter((f) => f.name === "");
  if (files.length === 0 || empty.length === files.length) {
    for (const file of files) await Deno.remove(file.tempPath).catch(() => {});
    throw new DomainError("invalid", "The upload holds no file: add one or more files");
  }
  for (const file of empty) await Deno.remove(file.tempPath).catch(() => {});
  return { fields, files: files.filter((f) => !empty.includes(f)) };
}

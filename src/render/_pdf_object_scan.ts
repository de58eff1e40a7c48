/**
 * A fast reader of the sizes a PDF's streams declare, for the image-size
 * guard: every `obj` keyword in the file is taken as the start of an indirect
 * object (so an object hidden behind a wrong `/Length`, or in data a
 * sequential parser skips, is read too), the object after it is tokenized as
 * a PDF reader tokenizes it (comments, literal strings with nesting and
 * escapes, hex strings, names with `#xx` escapes, `n g R` references), and
 * each stream dictionary's `/Width` and `/Height` are kept with the numbers
 * that indirect objects hold, those in object streams too (any stream with
 * `/N` and `/First`, as pdf.js reads them, whatever its `/Type` says). Stream
 * data is never tokenized, so a long PDF is read in milliseconds rather than
 * the second a full parse takes. What it cannot read for sure (an object
 * stream with another filter than Flate or with a predictor, an object number
 * it cannot find before its `obj`) it reports as `unsure`, and the caller
 * parses the file fully instead.
 *
 * @module
 */
import { inflateSync } from "node:zlib";

/** A value as the scan reads it: what the guard needs, and a marker for the rest. */
export type Value =
  | number
  | { ref: number }
  | { name: string }
  | Map<string, Value>
  | Value[]
  | typeof OTHER;

const OTHER = Symbol("other");

/** What the scan found. */
export interface ScannedSizes {
  /** Width and height values (`/Width` or `/W`, `/Height` or `/H`) of every stream dictionary that has both. */
  sizes: [width: Value, height: Value][];
  /** The largest number each object number holds (a number object), by object number. */
  numbers: Map<number, number>;
  /** True when a part of the file could not be read for sure. */
  unsure: boolean;
}

/** Object streams decode to at most this many bytes; a larger one is left to the full parse. */
const MAX_OBJECT_STREAM_BYTES = 64 * 1024 * 1024;

/** How deep arrays and dictionaries may nest before the scan gives up on the object. */
const MAX_DEPTH = 64;

const WHITE = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) WHITE[c] = 1;
const DELIMITER = new Uint8Array(256);
for (const c of "()<>[]{}/%") DELIMITER[c.charCodeAt(0)] = 1;

const isRegular = (c: number | undefined): boolean => c !== undefined && !WHITE[c] && !DELIMITER[c];

class Malformed extends Error {}

/** Tokenizes PDF objects in `bytes` from a position; throws `Malformed` on what is not an object. */
class Reader {
  constructor(readonly bytes: Uint8Array, public pos: number, readonly end: number) {}

  skipSpace(): void {
    const { bytes, end } = this;
    while (this.pos < end) {
      const c = bytes[this.pos]!;
      if (WHITE[c]) this.pos++;
      else if (c === 0x25 /* % */) {
        while (this.pos < end && bytes[this.pos] !== 10 && bytes[this.pos] !== 13) this.pos++;
      } else return;
    }
  }

  /** Reads a keyword or number token (regular characters) and returns it as text. */
  word(): string {
    const start = this.pos;
    while (this.pos < this.end && isRegular(this.bytes[this.pos])) this.pos++;
    let text = "";
    for (let i = start; i < this.pos; i++) text += String.fromCharCode(this.bytes[i]!);
    return text;
  }

  /** The integer at the position (digits only), or null without moving. */
  integer(): number | null {
    let p = this.pos;
    let n = 0;
    while (p < this.end && this.bytes[p]! >= 0x30 && this.bytes[p]! <= 0x39) {
      n = n * 10 + this.bytes[p++]! - 0x30;
    }
    if (p === this.pos || isRegular(this.bytes[p])) return null;
    this.pos = p;
    return n;
  }

  value(depth: number): Value {
    if (depth > MAX_DEPTH) throw new Malformed();
    this.skipSpace();
    if (this.pos >= this.end) throw new Malformed();
    const c = this.bytes[this.pos]!;
    if (c === 0x2f /* / */) return { name: this.name() };
    if (c === 0x3c /* < */) {
      if (this.bytes[this.pos + 1] === 0x3c) return this.dict(depth);
      this.skipPast(0x3e /* > */);
      return OTHER;
    }
    if (c === 0x5b /* [ */) {
      this.pos++;
      const items: Value[] = [];
      for (;;) {
        this.skipSpace();
        if (this.pos >= this.end) throw new Malformed();
        if (this.bytes[this.pos] === 0x5d /* ] */) {
          this.pos++;
          return items;
        }
        items.push(this.value(depth + 1));
      }
    }
    if (c === 0x28 /* ( */) {
      this.literalString();
      return OTHER;
    }
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) return this.numberOrRef();
    if (!isRegular(c)) throw new Malformed();
    this.word();
    return OTHER;
  }

  name(): string {
    this.pos++;
    let text = "";
    while (this.pos < this.end && isRegular(this.bytes[this.pos])) {
      const c = this.bytes[this.pos]!;
      const hex = c === 0x23 /* # */ ? hexPair(this.bytes[this.pos + 1], this.bytes[this.pos + 2]) : -1;
      if (hex >= 0) {
        text += String.fromCharCode(hex);
        this.pos += 3;
      } else {
        text += String.fromCharCode(c);
        this.pos++;
      }
    }
    return text;
  }

  dict(depth: number): Map<string, Value> {
    this.pos += 2;
    const entries = new Map<string, Value>();
    for (;;) {
      this.skipSpace();
      if (this.pos >= this.end) throw new Malformed();
      const c = this.bytes[this.pos]!;
      if (c === 0x3e /* > */ && this.bytes[this.pos + 1] === 0x3e) {
        this.pos += 2;
        return entries;
      }
      if (c !== 0x2f) {
        // A reader skips what is not a key; so does the scan, one value at a time.
        this.value(depth + 1);
        continue;
      }
      const key = this.name();
      this.skipSpace();
      if (this.bytes[this.pos] === 0x3e && this.bytes[this.pos + 1] === 0x3e) {
        entries.set(key, OTHER);
        continue;
      }
      entries.set(key, this.value(depth + 1));
    }
  }

  numberOrRef(): Value {
    const start = this.pos;
    const first = this.integer();
    if (first !== null) {
      const mark = this.pos;
      this.skipSpace();
      const second = this.integer();
      if (second !== null) {
        this.skipSpace();
        if (this.bytes[this.pos] === 0x52 /* R */ && !isRegular(this.bytes[this.pos + 1])) {
          this.pos++;
          return { ref: first };
        }
      }
      this.pos = mark;
      return first;
    }
    this.pos = start;
    const n = Number(this.word());
    return Number.isFinite(n) ? n : OTHER;
  }

  literalString(): void {
    let depth = 0;
    while (this.pos < this.end) {
      const c = this.bytes[this.pos++]!;
      if (c === 0x5c /* \ */) this.pos++;
      else if (c === 0x28) depth++;
      else if (c === 0x29 && --depth === 0) return;
    }
    throw new Malformed();
  }

  skipPast(byte: number): void {
    const at = this.bytes.indexOf(byte, this.pos);
    if (at < 0 || at >= this.end) throw new Malformed();
    this.pos = at + 1;
  }
}

function hexPair(a: number | undefined, b: number | undefined): number {
  const digit = (c: number | undefined): number => {
    if (c === undefined) return -1;
    if (c >= 0x30 && c <= 0x39) return c - 0x30;
    const lower = c | 0x20;
    return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
  };
  const hi = digit(a);
  const lo = digit(b);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/** The object number before an `obj` keyword at `at` (`n g obj`), or null when it is not plain. */
function objectNumberBefore(bytes: Uint8Array, at: number): number | null {
  let p = at - 1;
  const skipBack = (): void => {
    while (p >= 0 && WHITE[bytes[p]!]) p--;
  };
  const digitsBack = (): number | null => {
    const end = p;
    while (p >= 0 && bytes[p]! >= 0x30 && bytes[p]! <= 0x39) p--;
    if (p === end) return null;
    let n = 0;
    for (let i = p + 1; i <= end; i++) n = n * 10 + bytes[i]! - 0x30;
    return n;
  };
  skipBack();
  if (digitsBack() === null) return null;
  skipBack();
  const number = digitsBack();
  if (number === null || isRegular(bytes[p])) return null;
  return number;
}

function keywordAt(bytes: Uint8Array, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word.charCodeAt(i)) return false;
  return !isRegular(bytes[at + word.length]);
}

/** Where a stream's data ends: at `/Length` if `endstream` follows it there, else at the next `endstream`. */
function streamEnd(bytes: Uint8Array, start: number, length: Value): number {
  if (typeof length === "number" && length >= 0 && start + length <= bytes.length) {
    const reader = new Reader(bytes, start + length, bytes.length);
    reader.skipSpace();
    if (keywordAt(bytes, reader.pos, "endstream")) return start + length;
  }
  for (let at = bytes.indexOf(0x65, /* e */ start); at >= 0; at = bytes.indexOf(0x65, at + 1)) {
    if (keywordAt(bytes, at, "endstream")) return at;
  }
  return bytes.length;
}

function isFlate(filter: Value | undefined): boolean | null {
  if (filter === undefined) return true; // no filter: the data as it is
  const names = Array.isArray(filter) ? filter : [filter];
  if (names.length === 0) return true;
  if (names.length !== 1) return null;
  const only = names[0]!;
  if (typeof only !== "object" || !("name" in only)) return null;
  return only.name === "FlateDecode" || only.name === "Fl" ? true : null;
}

/** Reads the number objects of one object stream into `numbers`; false when it cannot be read for sure. */
function readObjectStream(
  bytes: Uint8Array,
  dict: Map<string, Value>,
  dataStart: number,
  numbers: Map<number, number>,
): boolean {
  const count = dict.get("N");
  const first = dict.get("First");
  if (typeof count !== "number" || typeof first !== "number") return true;
  const filter = dict.get("Filter");
  const flate = isFlate(filter);
  if (flate === null || dict.has("DecodeParms") || dict.has("DP")) return false;
  const end = streamEnd(bytes, dataStart, dict.get("Length") ?? OTHER);
  let data = bytes.subarray(dataStart, end);
  if (filter !== undefined && !(Array.isArray(filter) && filter.length === 0)) {
    try {
      data = inflateSync(data, {
        maxOutputLength: MAX_OBJECT_STREAM_BYTES,
        finishFlush: 2, /* Z_SYNC_FLUSH */
      });
    } catch {
      return false;
    }
  }
  const header = new Reader(data, 0, Math.min(first, data.length));
  for (let i = 0; i < count; i++) {
    header.skipSpace();
    const number = header.integer();
    header.skipSpace();
    const offset = header.integer();
    if (number === null || offset === null) break;
    // Only number objects matter here (streams never sit in object streams): others are not tokenized.
    const reader = new Reader(data, first + offset, data.length);
    reader.skipSpace();
    const c = data[reader.pos];
    if (c === undefined || !((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e)) continue;
    const value = reader.numberOrRef();
    if (typeof value === "number") keepLargest(numbers, number, value);
  }
  return true;
}

function keepLargest(numbers: Map<number, number>, key: number, value: number): void {
  const had = numbers.get(key);
  if (had === undefined || value > had) numbers.set(key, value);
}

/** Scans a PDF's bytes for its stream dictionaries' sizes and its number objects. */
export function scanDeclaredSizes(bytes: Uint8Array): ScannedSizes {
  const found: ScannedSizes = { sizes: [], numbers: new Map(), unsure: false };
  for (let at = bytes.indexOf(0x6f /* o */); at >= 0; at = bytes.indexOf(0x6f, at + 1)) {
    if (
      bytes[at + 1] !== 0x62 || bytes[at + 2] !== 0x6a || isRegular(bytes[at + 3]) || isRegular(bytes[at - 1])
    ) {
      continue;
    }
    const reader = new Reader(bytes, at + 3, bytes.length);
    let value: Value;
    try {
      value = reader.value(0);
    } catch (error) {
      if (error instanceof Malformed) continue;
      throw error;
    }
    if (typeof value === "number") {
      const number = objectNumberBefore(bytes, at);
      if (number === null) found.unsure = true;
      else keepLargest(found.numbers, number, value);
      continue;
    }
    if (!(value instanceof Map)) continue;
    reader.skipSpace();
    if (!keywordAt(bytes, reader.pos, "stream")) continue;
    // pdf.js reads an image's size as `/Width` or else `/W` (and `/Height` or else `/H`).
    const width = value.get("Width") ?? value.get("W");
    const height = value.get("Height") ?? value.get("H");
    if (width !== undefined && height !== undefined) found.sizes.push([width, height]);
    let dataStart = reader.pos + "stream".length;
    if (bytes[dataStart] === 13) dataStart++;
    if (bytes[dataStart] === 10) dataStart++;
    if (!readObjectStream(bytes, value, dataStart, found.numbers)) found.unsure = true;
  }
  return found;
}

/** A size value as a positive finite number, resolving a reference through the number objects. */
export function resolvedSize(value: Value, numbers: Map<number, number>): number | null {
  const n = typeof value === "object" && "ref" in value ? numbers.get(value.ref) : value;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : null;
}

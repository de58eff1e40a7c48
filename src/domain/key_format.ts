/**
 * The format of Sergo's secrets: a prefix (`sgk_s_` agent key, `sgk_p_`
 * personal key, `sgl_` login token), 27 base62 characters of randomness
 * (160 bits), and a 6-character base62 CRC32 of everything before it, so a
 * truncated or mistyped copy is caught before any look-up.
 *
 * @module
 */
import { createHash } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Base62 characters carrying the random part: 27 × log2(62) ≈ 160.8 bits. */
const RANDOM_CHARS = 27;
/** Base62 characters of the checksum: 62^6 > 2^32. */
const CHECKSUM_CHARS = 6;

/** The kinds of secret and their prefixes. */
export const PREFIXES = { agent: "sgk_s_", personal: "sgk_p_", login: "sgl_" } as const;
/** A kind of secret. */
export type SecretKind = keyof typeof PREFIXES;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

const encoder = new TextEncoder();

/** CRC32 (IEEE) of a string's UTF-8 bytes. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  // deno-lint-ignore no-control-regex
  if (/^[\u0000-\u007f]*$/.test(text)) {
    // ASCII is its own UTF-8: no need to encode (every key and token is ASCII).
    for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  } else {
    for (const byte of encoder.encode(text)) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(value: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = ALPHABET[value % 62]! + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 248 = 4 × 62: rejection sampling keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** Makes a new secret of a kind. */
export function generateSecret(kind: SecretKind): string {
  const body = PREFIXES[kind] + randomBase62(RANDOM_CHARS);
  return body + base62(crc32(body), CHECKSUM_CHARS);
}

/** What a bearer value is, judged by its form alone. */
export type SecretForm = { kind: SecretKind; valid: true } | { kind: SecretKind | null; valid: false };

/** Judges a value's form: its kind by prefix, and whether length, alphabet and checksum hold. */
export function parseSecret(value: string): SecretForm {
  const kind = (Object.keys(PREFIXES) as SecretKind[]).find((k) => value.startsWith(PREFIXES[k])) ?? null;
  if (kind === null) return { kind: null, valid: false };
  const prefix = PREFIXES[kind];
  const rest = value.slice(prefix.length);
  if (rest.length !== RANDOM_CHARS + CHECKSUM_CHARS || !/^[0-9A-Za-z]+$/.test(rest)) {
    return { kind, valid: false };
  }
  const body = value.slice(0, value.length - CHECKSUM_CHARS);
  const expected = base62(crc32(body), CHECKSUM_CHARS);
  const actual = value.slice(value.length - CHECKSUM_CHARS);
  // Both are CHECKSUM_CHARS base62 characters: compare every one, whatever differs first.
  let difference = 0;
  for (let i = 0; i < CHECKSUM_CHARS; i++) difference |= expected.charCodeAt(i) ^ actual.charCodeAt(i);
  return difference === 0 ? { kind, valid: true } : { kind, valid: false };
}

/** The sha256 of a secret: the only form in which it is stored. */
export function hashSecret(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** The last 4 characters of a secret. */
export function lastFour(value: string): string {
  return value.slice(-4);
}

/** How a key is shown after creation: its prefix, `…` and its last 4 characters. */
export function maskKey(kind: "agent" | "personal", last4: string): string {
  return `${PREFIXES[kind]}…${last4}`;
}

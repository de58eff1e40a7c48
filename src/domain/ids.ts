/**
 * Ids of people, folders, documents and keys: random base62.
 *
 * @module
 */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random base62 string of `length` characters. */
export function randomId(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** A new document id: 8 characters, like `xM5gW8NZ`. */
export function newDocumentId(): string {
  return randomId(8);
}

/** A new id for a person, folder, key or token: 12 characters. */
export function newId(): string {
  return randomId(12);
}

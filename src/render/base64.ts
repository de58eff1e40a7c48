/**
 * Base64 of bytes, for page views.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** The standard base64 of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * A cheap check of an Office package before anything inflates it: the zip's
 * central directory is read (no entry is inflated) and held to the same entry,
 * size and expansion limits as processing, so a zip bomb is refused in
 * milliseconds — before LibreOffice is asked to copy it.
 *
 * @module
 */
import { openZip } from "./_zip.ts";

/**
 * Throws a `ProcessingError` with a one-sentence reason when a .docx or .pptx
 * is not a zip package within the limits (too many entries, too large once
 * inflated, or expanding like a zip bomb); returns quietly otherwise.
 */
export function checkPackage(bytes: Uint8Array): void {
  openZip(bytes);
}

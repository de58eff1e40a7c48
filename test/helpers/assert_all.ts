/**
 * `assertAll`: every item passes a check, and there is at least one item —
 * `list.every(check)` alone passes on an empty list, so it proves nothing
 * when the list came out empty by mistake.
 *
 * @module
 */
import assert from "node:assert/strict";

/** Asserts that `items` is not empty and that `check` holds for each; names the first item that fails. */
export function assertAll<T>(
  items: readonly T[],
  check: (item: T, index: number) => boolean,
  message = "",
): void {
  assert.ok(items.length > 0, `nothing to check${message ? `: ${message}` : ""}`);
  const index = items.findIndex((item, i) => !check(item, i));
  assert.ok(
    index < 0,
    `item ${index} fails${message ? ` (${message})` : ""}: ${JSON.stringify(items[index])}`,
  );
}

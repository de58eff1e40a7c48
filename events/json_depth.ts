/**
 * How deeply a JSON value nests, measured without recursion, so a value
 * nested thousands of levels deep is refused before anything recursive
 * (structured clone to the writer thread, canonical JSON, `JSON.stringify`)
 * runs out of stack on it.
 *
 * @module
 */

/** The deepest nesting any event's data may have; Sergo's own events nest a few levels. */
export const MAX_EVENT_DEPTH = 64;

/**
 * Whether `value` nests arrays or objects more than `levels` deep (a scalar
 * is 0 levels, `[]` and `{}` are 1). Stops as soon as it knows.
 */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > levels) return true;
    const members = Array.isArray(current) ? current : Object.values(current);
    for (const member of members) {
      if (member !== null && typeof member === "object") stack.push({ value: member, depth: depth + 1 });
    }
  }
  return false;
}

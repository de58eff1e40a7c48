/**
 * Reading tool arguments: a value out of range or of the wrong type is
 * answered with one sentence naming what is allowed, as a tool error.
 *
 * @module
 */

/** A tool argument that is missing, of the wrong type or out of range. */
export class ArgumentError extends Error {
  override name = "ArgumentError";
}

/** A tool's arguments as sent. */
export type Arguments = Record<string, unknown>;

function present(args: Arguments, name: string): boolean {
  return args[name] !== undefined && args[name] !== null;
}

/** An integer argument within `min`..`max` (no upper bound when `max` is absent). */
export function integerArgument(
  args: Arguments,
  name: string,
  range: { min: number; max?: number },
): number | undefined {
  if (!present(args, name)) return undefined;
  const value = args[name];
  const allowed = range.max === undefined
    ? `\`${name}\` must be a whole number, ${range.min} or more.`
    : `\`${name}\` must be a whole number from ${range.min} to ${range.max}.`;
  if (typeof value !== "number" || !Number.isInteger(value)) throw new ArgumentError(allowed);
  if (value < range.min || (range.max !== undefined && value > range.max)) throw new ArgumentError(allowed);
  // Past 2^53 a number is no longer exact (and SQLite cannot bind it as an integer).
  if (!Number.isSafeInteger(value)) {
    throw new ArgumentError(
      `\`${name}\` must be a whole number from ${range.min} to ${Number.MAX_SAFE_INTEGER}.`,
    );
  }
  return value;
}

/** A string argument. */
export function stringArgument(args: Arguments, name: string): string | undefined {
  if (!present(args, name)) return undefined;
  const value = args[name];
  if (typeof value !== "string") throw new ArgumentError(`\`${name}\` must be a string.`);
  return value;
}

/** A list of strings. */
export function stringListArgument(args: Arguments, name: string): string[] | undefined {
  if (!present(args, name)) return undefined;
  const value = args[name];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
    throw new ArgumentError(`\`${name}\` must be a list of folder names.`);
  }
  return value;
}

/** One of a few strings. */
export function choiceArgument<T extends string>(
  args: Arguments,
  name: string,
  choices: readonly T[],
): T | undefined {
  if (!present(args, name)) return undefined;
  const value = args[name];
  if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
    throw new ArgumentError(`\`${name}\` must be ${choices.map((c) => `"${c}"`).join(" or ")}.`);
  }
  return value as T;
}

/** The document id every tool but search takes. */
export function documentIdArgument(args: Arguments): string {
  const id = stringArgument(args, "document_id");
  if (id === undefined || id.trim() === "") {
    throw new ArgumentError("`document_id` is required — use an id from `search` or `list_documents`.");
  }
  return id.trim();
}

/**
 * Argument parsing for the CLI, on `node:util`'s `parseArgs`, with one clear
 * line for anything it does not take.
 *
 * @module
 */
import { parseArgs } from "node:util";

/** A CLI command's usage: flags it takes and the help text. */
export interface CommandSpec {
  /** `sergo person add --name NAME --email EMAIL` */
  usage: string;
  /** What the command does, in a sentence or two. */
  summary: string;
  /** Flags that take a value; a `multiple` one may repeat. */
  options?: Record<string, { multiple?: boolean; help: string }>;
  /** Flags without a value. */
  booleans?: Record<string, string>;
  /** How many positional arguments: [min, max]. */
  positionals?: [number, number];
}

/** The error for a bad command line. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Parsed arguments. */
export interface Parsed {
  values: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
  help: boolean;
}

/** Parses `args` against `spec`; `--data`, `--host`, `--port` and `--help` are always taken. */
export function parseCommand(args: string[], spec: CommandSpec): Parsed {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {
    data: { type: "string" },
    help: { type: "boolean" },
  };
  for (const [name, option] of Object.entries(spec.options ?? {})) {
    options[name] = { type: "string", multiple: option.multiple ?? false };
  }
  for (const name of Object.keys(spec.booleans ?? {})) options[name] = { type: "boolean" };
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error
      ? error.message.split("\n")[0]!.replace(/\. To specify.*$/, "")
      : String(error);
    throw new UsageError(`${message} — usage: ${spec.usage}`);
  }
  const help = parsed.values.help === true;
  const [min, max] = spec.positionals ?? [0, 0];
  if (!help && (parsed.positionals.length < min || parsed.positionals.length > max)) {
    throw new UsageError(
      parsed.positionals.length < min
        ? `Missing arguments — usage: ${spec.usage}`
        : `Unexpected argument "${parsed.positionals[max]}" — usage: ${spec.usage}`,
    );
  }
  return { values: parsed.values as Parsed["values"], positionals: parsed.positionals, help };
}

/** The help text of a command. */
export function helpText(spec: CommandSpec): string {
  const lines = [`Usage: ${spec.usage}`, "", spec.summary, ""];
  for (const [name, option] of Object.entries(spec.options ?? {})) {
    lines.push(`  --${name.padEnd(16)} ${option.help}${option.multiple ? " (may repeat)" : ""}`);
  }
  for (const [name, help] of Object.entries(spec.booleans ?? {})) {
    lines.push(`  --${name.padEnd(16)} ${help}`);
  }
  lines.push(`  --${"data".padEnd(16)} the data directory (SERGO_DATA, default ./data)`);
  return lines.join("\n");
}

/** A required string flag. */
export function requireFlag(parsed: Parsed, name: string, spec: CommandSpec): string {
  const value = parsed.values[name];
  if (typeof value !== "string" || value === "") {
    throw new UsageError(`--${name} is required — usage: ${spec.usage}`);
  }
  return value;
}

/** A repeatable flag's values. */
export function manyFlag(parsed: Parsed, name: string): string[] {
  const value = parsed.values[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

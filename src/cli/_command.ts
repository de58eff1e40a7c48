/**
 * What every CLI command is and shares: its type, what it runs with, and the
 * progress line on stderr. The command table (`commands.ts`) and the commands
 * kept in files of their own import it, so none of them imports another.
 *
 * @module
 */
import type { SergoApp } from "../app.ts";
import type { CommandSpec, Parsed } from "./args.ts";

/** A command: its spec and what it does. */
export interface Command extends CommandSpec {
  /** Takes its arguments as they are (the command parses them itself). */
  raw?: boolean;
  run(parsed: Parsed, context: CommandContext): Promise<number>;
}

/** What a command runs with. */
export interface CommandContext {
  /** The data directory from --data, SERGO_DATA or ./data. */
  dataDir: string;
  /** The raw arguments after the command name. */
  args: string[];
  /** Opens the data directory (projections brought up to date). */
  open(): Promise<SergoApp>;
  /** The shared log's URL (`SERGO_DATABASE_URL`), or null for the data directory's own log. */
  databaseUrl: string | null;
}

/** Shows progress on stderr when it is a terminal. */
export function progress(line: string): void {
  if (Deno.stderr.isTerminal()) {
    Deno.stderr.writeSync(new TextEncoder().encode(`\r\x1b[2K${line}`));
  }
}

/** Ends a progress line. */
export function progressDone(): void {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(new TextEncoder().encode("\r\x1b[2K"));
}

/**
 * The `audit` CLI commands: `audit export`, `audit verify`, `audit public-key`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { EventStore } from "../../events/store.ts";
import { getPersonByEmail } from "../../projections/catalogue.ts";
import { timeBound } from "../../projections/audit_view.ts";
import { exportAudit } from "./export.ts";
import { publicKeyPem } from "./signing_key.ts";
import { verifyExport } from "./verify.ts";

/** What the audit commands need from the CLI. */
export interface AuditCliContext {
  dataDir: string;
  openStore: () => EventStore;
  openProjections: () => DatabaseSync;
}

const HELP = `Usage:
  sergo audit export --person EMAIL [--from ISO] [--to ISO] [--key NAME] [--format jsonl|csv] [--out FILE]
      Writes the person's audit entries (JSONL to stdout without --out; CSV needs --out and
      writes FILE.manifest.json beside it). The manifest is signed with the install's key.
  sergo audit verify FILE --public-key KEY.pem
      Checks every record's hash, the chain, the inclusion proofs, the digests and that the
      signature is by the key in KEY.pem (the install's key: sergo audit public-key). Exit 0:
      intact and signed by that key; 1: not intact or signed by another key; 3: intact, but
      without --public-key the signature was checked only against the key inside the export,
      which anyone could have made.
  sergo audit public-key
      Prints the install's audit signing key (PEM).
`;

/** Runs `audit …` with the arguments after `audit`; returns the exit code. */
export async function auditCommand(args: string[], context: AuditCliContext): Promise<number> {
  const [command, ...rest] = args;
  try {
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      await write(Deno.stdout, HELP);
      return command === undefined ? 2 : 0;
    }
    if (rest.includes("--help") || rest.includes("-h")) {
      await write(Deno.stdout, HELP);
      return 0;
    }
    switch (command) {
      case "export":
        return await exportCommand(
          parseFlags(rest, ["person", "from", "to", "key", "format", "out"]),
          context,
        );
      case "verify":
        return await verifyCommand(rest, context);
      case "public-key":
        if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}" for audit public-key`);
        await write(Deno.stdout, await publicKeyPem(context.dataDir));
        return 0;
      default:
        throw new UsageError(`Unknown audit command "${command}": use export, verify or public-key`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      await write(Deno.stderr, `${error.message} (see sergo audit --help)\n`);
      return 2;
    }
    await write(Deno.stderr, `${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

class UsageError extends Error {}

function parseFlags(args: string[], known: string[]): { flags: Map<string, string>; positional: string[] } {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (!known.includes(name)) throw new UsageError(`Unknown option "--${name}"`);
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "") throw new UsageError(`Option "--${name}" needs a value`);
    if (flags.has(name)) throw new UsageError(`Option "--${name}" is given twice`);
    flags.set(name, value);
  }
  return { flags, positional };
}

async function exportCommand(
  { flags, positional }: { flags: Map<string, string>; positional: string[] },
  context: AuditCliContext,
): Promise<number> {
  if (positional.length > 0) throw new UsageError(`Unexpected argument "${positional[0]}" for audit export`);
  const email = flags.get("person");
  if (email === undefined) throw new UsageError("Give the person to export with --person EMAIL");
  const format = flags.get("format") ?? "jsonl";
  if (format !== "jsonl" && format !== "csv") {
    throw new UsageError(`Unknown format "${format}": use jsonl or csv`);
  }
  for (const side of ["from", "to"] as const) {
    const value = flags.get(side);
    if (value === undefined) continue;
    try {
      timeBound(value, side);
    } catch {
      throw new UsageError(`Cannot read --${side} "${value}": expected an ISO 8601 date or time`);
    }
  }
  const out = flags.get("out");
  if (format === "csv" && out === undefined) {
    throw new UsageError("A CSV export needs --out FILE (its manifest goes beside it)");
  }
  const projections = context.openProjections();
  const person = getPersonByEmail(projections, email);
  if (!person) throw new UsageError(`No person with the email "${email}"`);
  const eventsDbPath = join(context.dataDir, "events.db");
  const store = existsSync(eventsDbPath) ? undefined : context.openStore();
  const terminal = Deno.stderr.isTerminal();
  let shown = 0;
  try {
    const manifest = await exportAudit({
      ...(store ? { store } : { eventsDbPath }),
      projectionsDb: projections,
      dataDir: context.dataDir,
      personId: person.person_id,
      personEmail: person.email,
      from: flags.get("from"),
      to: flags.get("to"),
      keyName: flags.get("key"),
      format,
      out: out ?? Deno.stdout.writable,
      onProgress: terminal
        ? (done, total) => {
          const now = Date.now();
          if (done < total && now - shown < 200) return;
          shown = now;
          Deno.stderr.writeSync(new TextEncoder().encode(`\rExported ${done} of ${total} records`));
        }
        : undefined,
    });
    if (terminal) Deno.stderr.writeSync(new TextEncoder().encode("\n"));
    const range = manifest.range
      ? `, positions ${manifest.range.first_position}-${manifest.range.last_position}`
      : "";
    await write(
      Deno.stderr,
      `Exported ${manifest.count} records${range}${
        out ? ` to ${out}` : ""
      }; chain head ${manifest.chain_head.position} ${manifest.chain_head.hash}\n`,
    );
    return 0;
  } finally {
    await store?.close();
  }
}

async function verifyCommand(args: string[], context: AuditCliContext): Promise<number> {
  const { flags, positional } = parseFlags(args, ["public-key"]);
  if (positional.length !== 1) {
    throw new UsageError("Give one export file to verify: sergo audit verify FILE");
  }
  const file = positional[0]!;
  const keyFile = flags.get("public-key");
  let publicKey: string | undefined;
  if (keyFile !== undefined) {
    try {
      publicKey = await Deno.readTextFile(keyFile);
    } catch {
      throw new UsageError(`Cannot read the public key file "${keyFile}"`);
    }
  }
  void context;
  const result = await verifyExport(file, { publicKey });
  if (!result.ok) {
    await write(Deno.stderr, `Not intact: ${result.reason}\n`);
    return 1;
  }
  const range = result.range
    ? `positions ${result.range.first_position}-${result.range.last_position}, `
    : "";
  const redacted = result.redacted > 0 ? `; ${result.redacted} with secret fields left out` : "";
  const summary =
    `${result.count} records, ${range}chain head ${result.head.position} ${result.head.hash}${redacted}`;
  if (!result.trusted_key) {
    // Anyone can sign a forged export with a key of their own and put that key inside it.
    await write(
      Deno.stdout,
      `Not verified: the records are consistent (${summary}), but the signature was checked only against the key inside the export (${result.key_fingerprint}), which anyone could have made; pass --public-key with the install's key (sergo audit public-key) to check who signed it\n`,
    );
    return 3;
  }
  await write(Deno.stdout, `Intact: ${summary}; signed by the given key\n`);
  return 0;
}

async function write(target: { write(p: Uint8Array): Promise<number> }, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await target.write(bytes.subarray(written));
}

/**
 * `sergo migrate --to postgres://…`: copies an embedded install's log and
 * blobs into PostgreSQL, keeping every position, hash and byte of stored JSON,
 * so that `log verify` prints the same head and the projections rebuilt from
 * the copy have the same digest. It verifies the source chain first, and every
 * blob against its name; it resumes an interrupted copy (the database's log
 * must be a prefix of the source's) and refuses a database holding another log.
 *
 * @module
 */
import { openPostgresStore } from "../../events/postgres/store.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { dataPaths } from "../app.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { openPostgresBlobStore } from "../postgres_blob_store.ts";
import { requireFlag, UsageError } from "./args.ts";
import { type Command, progress, progressDone } from "./_command.ts";

/** The `migrate` command. */
export const migrateCommand: Command = {
  usage: "sergo migrate --to postgres://user:password@host:5432/db [--data DIR]",
  summary:
    "Copies this data directory's log and blobs into PostgreSQL, keeping positions and hashes; resumes if interrupted.",
  options: { to: { help: "the PostgreSQL URL to copy to (as SERGO_DATABASE_URL would be)" } },
  async run(parsed, context) {
    const url = requireFlag(parsed, "to", migrateCommand);
    // The same check as SERGO_DATABASE_URL's, with the flag's name in its message.
    try {
      loadConfig([], (name) => name === "SERGO_DATABASE_URL" ? url : undefined);
    } catch (error) {
      if (error instanceof ConfigError) {
        throw new UsageError(error.message.replace("SERGO_DATABASE_URL", "--to"));
      }
      throw error;
    }
    const paths = dataPaths(context.dataDir);
    await Deno.stat(paths.events).catch(() => {
      throw new UsageError(`No event log at "${paths.events}" to migrate`);
    });
    const source = openSqliteStore(paths.events);
    try {
      const verdict = source.verify();
      if (!verdict.ok) {
        throw new UsageError(
          `The log does not verify (broken at position ${verdict.position}: ${verdict.reason}); nothing was copied`,
        );
      }
      const target = await openPostgresStore(url, { follow: false });
      let copiedEvents = 0;
      try {
        const head = await target.databaseHead();
        if (head.position > verdict.head.position) {
          throw new UsageError(
            `The database already holds a longer log (${head.position} events) than this one (${verdict.head.position})`,
          );
        }
        if (head.position > 0) {
          const mine = source.readFrom(head.position - 1, 1)[0];
          if (!mine || mine.hash !== head.hash) {
            throw new UsageError(
              `The database holds another log (its event ${head.position} differs from this one's)`,
            );
          }
        }
        for (let from = head.position; from < verdict.head.position;) {
          const rows = source.readRows(from, 2000);
          await target.importRows(rows);
          from = rows[rows.length - 1]!.position;
          copiedEvents += rows.length;
          progress(`migrate: ${from}/${verdict.head.position} events`);
        }
        progressDone();
      } finally {
        await target.close();
      }
      const blobs = await openPostgresBlobStore(url, `${paths.blobs}/tmp`);
      let copiedBlobs = 0;
      try {
        for (const path of await blobFiles(paths.blobs)) {
          const name = path.slice(path.lastIndexOf("/") + 1);
          if (await blobs.has(name)) continue;
          const stored = await blobs.copyFile(path);
          if (stored.sha256 !== name) {
            throw new UsageError(
              `The blob ${name} does not match its name (its bytes hash to ${stored.sha256})`,
            );
          }
          copiedBlobs++;
          progress(`migrate: ${copiedBlobs} blobs`);
        }
        progressDone();
      } finally {
        await blobs.close();
      }
      console.log(
        `Copied ${copiedEvents} events (the log now ends at ${verdict.head.position} ${verdict.head.hash}) ` +
          `and ${copiedBlobs} blobs. Set SERGO_DATABASE_URL to serve from it.`,
      );
      return 0;
    } finally {
      await source.close();
    }
  },
};

/** The blob files of a data directory (`blobs/xx/<sha256>`; temporary files left out). */
async function blobFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  let folders: Deno.DirEntry[] = [];
  try {
    folders = await Array.fromAsync(Deno.readDir(root));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return found;
    throw error;
  }
  for (const folder of folders) {
    if (!folder.isDirectory || !/^[0-9a-f]{2}$/.test(folder.name)) continue;
    for await (const entry of Deno.readDir(`${root}/${folder.name}`)) {
      if (entry.isFile && /^[0-9a-f]{64}$/.test(entry.name) && entry.name.startsWith(folder.name)) {
        found.push(`${root}/${folder.name}/${entry.name}`);
      }
    }
  }
  return found.sort();
}

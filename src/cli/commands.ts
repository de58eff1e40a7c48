/**
 * The CLI's commands: each has a spec (usage, flags, help) and a run
 * function. Commands that make a secret print it alone as the last line of
 * stdout. A bad argument gets one line on stderr and exit code 2, and writes
 * nothing.
 *
 * @module
 */
import { join } from "node:path";
import type { CanRead } from "../../events/types.ts";
import { getDocument, getFolder, listDocuments, rootLabel } from "../../projections/catalogue.ts";
import { projectionDigest } from "../../projections/digest.ts";
import { listAgentKeys, oldValues } from "../../projections/key_scopes.ts";
import { ALL_PROJECTIONS } from "../../projections/all.ts";
import { removeDatabase, replayInto } from "../../projections/replay.ts";
import { lockForReplay } from "./data_lock.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { openPostgresStore } from "../../events/postgres/store.ts";
import { dataPaths, openApp, type SergoApp } from "../app.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { DomainError } from "../domain/errors.ts";
import { ensureFolderPath, requireFolderPath } from "../domain/folders.ts";
import {
  createAgentKey,
  createPersonalKey,
  deleteAgentKey,
  issueLoginToken,
  requireAgentKeyByName,
  rollAgentKey,
} from "../domain/keys.ts";
import { addPerson, requirePerson } from "../domain/people.ts";
import { requestProcessing } from "../domain/documents.ts";
import { maskKey } from "../domain/key_format.ts";
import { helpText, manyFlag, parseCommand, type Parsed, requireFlag, UsageError } from "./args.ts";
import { extraCommands } from "./extra_commands.ts";
import { type Command, type CommandContext, progress, progressDone } from "./_command.ts";

export type { Command, CommandContext };

async function withApp<T>(context: CommandContext, fn: (app: SergoApp) => Promise<T>): Promise<T> {
  const app = await context.open();
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

function canReadFrom(app: SergoApp, personId: string, parsed: Parsed): CanRead {
  return {
    folders: manyFlag(parsed, "read").map((path) => requireFolderPath(app.db, personId, path).folder_id),
    documents: manyFlag(parsed, "read-document"),
  };
}

const core: Record<string, Command> = {
  "replay": {
    usage: "sergo replay [--data DIR]",
    summary:
      "Rebuilds every projection from the whole log into a fresh file, swaps it in, and prints the digest.",
    async run(_parsed, context) {
      const paths = dataPaths(context.dataDir);
      if (!context.databaseUrl) {
        await Deno.stat(paths.events).catch(() => {
          throw new UsageError(`No event log at "${paths.events}"`);
        });
      }
      using _lock = lockForReplay(context.dataDir);
      const store = context.databaseUrl
        ? await openPostgresStore(context.databaseUrl, { cachePath: paths.logCache })
        : openSqliteStore(paths.events);
      const started = performance.now();
      try {
        const { digest, events } = await replayInto(store, paths.projections, {
          onProgress(position, head) {
            const seconds = (performance.now() - started) / 1000;
            const rate = Math.round(position / Math.max(seconds, 0.001));
            progress(
              `replay: ${position}/${head} events (${
                ((position / Math.max(head, 1)) * 100).toFixed(1)
              }%), ${rate} events/s`,
            );
          },
        });
        progressDone();
        const seconds = (performance.now() - started) / 1000;
        console.error(
          `Replayed ${events} events in ${seconds.toFixed(2)} s (${
            Math.round(events / Math.max(seconds, 0.001))
          } events/s).`,
        );
        console.log(digest);
      } finally {
        await store.close();
      }
      return 0;
    },
  },
  "log verify": {
    usage: "sergo log verify [--data DIR]",
    summary:
      "Walks the hash chain of the event log and prints the head, or the first position that does not verify.",
    async run(_parsed, context) {
      const paths = dataPaths(context.dataDir);
      if (!context.databaseUrl) {
        await Deno.stat(paths.events).catch(() => {
          throw new UsageError(`No event log at "${paths.events}"`);
        });
      }
      // On PostgreSQL the chain is walked in the database itself, not in the local copy.
      const store = context.databaseUrl
        ? await openPostgresStore(context.databaseUrl, { follow: false })
        : openSqliteStore(paths.events);
      try {
        const verdict = await store.verify();
        if (verdict.ok) {
          console.log(`ok: ${verdict.count} events, head ${verdict.head.position} ${verdict.head.hash}`);
          return 0;
        }
        console.log(`broken at position ${verdict.position}: ${verdict.reason}`);
        return 1;
      } finally {
        await store.close();
      }
    },
  },
  "projections digest": {
    usage: "sergo projections digest [--data DIR]",
    summary: "Prints a digest over the content of every projection table, after catching up with the log.",
    run: (_parsed, context) =>
      withApp(context, (app) => {
        console.log(projectionDigest(app.db, ALL_PROJECTIONS));
        return Promise.resolve(0);
      }),
  },
  "projections rebuild": {
    usage: "sergo projections rebuild [--data DIR]",
    summary: "Deletes the projections database; the next start rebuilds it from the log.",
    async run(_parsed, context) {
      await removeDatabase(dataPaths(context.dataDir).projections);
      console.log("Projections deleted: they are rebuilt from the log on the next start.");
      return 0;
    },
  },
  "person add": {
    usage: 'sergo person add --name "Ava Bennett" --email ava@example.com',
    summary: "Adds a person; their root folder shows as <Name>'s documents.",
    options: { name: { help: "the person's name" }, email: { help: "their email (unique)" } },
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const spec = COMMANDS["person add"]!;
        const person = await addPerson(app, {
          name: requireFlag(parsed, "name", spec),
          email: requireFlag(parsed, "email", spec),
        });
        console.log(
          `Added ${person.name} <${person.email}> (${rootLabel(person.name)}), id ${person.person_id}`,
        );
        return 0;
      }),
  },
  "folder add": {
    usage: 'sergo folder add --person EMAIL "Energy outlooks/Basic"',
    summary: "Creates a folder path, making the folders that do not exist yet.",
    options: { person: { help: "the owner's email" } },
    positionals: [1, 1],
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const person = requirePerson(app, requireFlag(parsed, "person", COMMANDS["folder add"]!));
        const folder = await ensureFolderPath(app, {
          personId: person.person_id,
          path: parsed.positionals[0]!,
        }, "cli");
        console.log(`${rootLabel(person.name)}/${folder.path} (id ${folder.folder_id})`);
        return 0;
      }),
  },
  "upload": {
    usage:
      'sergo upload --person EMAIL [--folder "Energy outlooks/Basic"] [--preset basic|standard|none] [--no-wait] FILE...',
    summary: "Uploads files, waits for each to be processed, and prints each document's id and final status.",
    options: {
      person: { help: "the owner's email" },
      folder: { help: "the folder path (made if missing); default the root" },
      preset: { help: "basic (default), standard (transcribes scanned pages) or none (upload only)" },
    },
    booleans: { "no-wait": "return once uploaded, without waiting for processing" },
    positionals: [1, 10_000],
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const spec = COMMANDS["upload"]!;
        const person = requirePerson(app, requireFlag(parsed, "person", spec));
        const preset = typeof parsed.values.preset === "string" ? parsed.values.preset : "basic";
        for (const file of parsed.positionals) {
          const info = await Deno.stat(file).catch(() => null);
          if (!info?.isFile) throw new UsageError(`No file at "${file}"`);
        }
        const folderPath = typeof parsed.values.folder === "string" ? parsed.values.folder : null;
        const folder = folderPath === null
          ? null
          : await ensureFolderPath(app, { personId: person.person_id, path: folderPath }, "cli");
        const { uploadAndWait } = await import("./upload_command.ts");
        return await uploadAndWait(app, {
          personId: person.person_id,
          folderId: folder?.folder_id ?? null,
          files: parsed.positionals,
          preset,
          wait: parsed.values["no-wait"] !== true,
        });
      }),
  },
  "key add": {
    usage:
      'sergo key add --person EMAIL --name NAME --description "..." --read FOLDER [--read …] [--read-document ID]…',
    summary: "Creates an agent key (an MCP server) and prints its value once, on the last line.",
    options: {
      person: { help: "the owner's email" },
      name: { help: "2 to 32 of a-z, 0-9 and -, starting with a letter" },
      description: { help: "what the documents are and when to use them" },
      read: { multiple: true, help: "a folder path the key reads, with everything inside" },
      "read-document": { multiple: true, help: "a single document id the key reads" },
    },
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const spec = COMMANDS["key add"]!;
        const person = requirePerson(app, requireFlag(parsed, "person", spec));
        const { key, value } = await createAgentKey(app, {
          personId: person.person_id,
          name: requireFlag(parsed, "name", spec),
          description: typeof parsed.values.description === "string" ? parsed.values.description : "",
          canRead: canReadFrom(app, person.person_id, parsed),
        }, "cli");
        console.log(`Created agent key ${key.name} (id ${key.key_id}). Its value is shown this once:`);
        console.log(value);
        return 0;
      }),
  },
  "key roll": {
    usage: "sergo key roll --person EMAIL --name NAME --grace now|1h|24h|7d",
    summary:
      "Gives an agent key a new value; the old one keeps working for the grace time. Prints the new value last.",
    options: {
      person: { help: "the owner's email" },
      name: { help: "the key's name" },
      grace: { help: "now, 1h, 24h or 7d" },
    },
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const spec = COMMANDS["key roll"]!;
        const person = requirePerson(app, requireFlag(parsed, "person", spec));
        const key = requireAgentKeyByName(app.db, person.person_id, requireFlag(parsed, "name", spec));
        const rolled = await rollAgentKey(app, {
          personId: person.person_id,
          keyId: key.key_id,
          grace: requireFlag(parsed, "grace", spec),
        }, "cli");
        console.log(
          `Rolled ${key.name}: the old value works until ${rolled.oldExpiresAt}. The new value is shown this once:`,
        );
        console.log(rolled.value);
        return 0;
      }),
  },
  "key list": {
    usage: "sergo key list --person EMAIL",
    summary: "Lists a person's agent keys, masked, with what each can read.",
    options: { person: { help: "the owner's email" } },
    run: (parsed, context) =>
      withApp(context, (app) => {
        const person = requirePerson(app, requireFlag(parsed, "person", COMMANDS["key list"]!));
        const keys = listAgentKeys(app.db, person.person_id);
        if (keys.length === 0) console.log("No agent keys.");
        for (const key of keys) {
          const folders = key.can_read.folders.map((id) =>
            getFolder(app.db, id)?.path ?? `(deleted folder ${id})`
          );
          const old = oldValues(app.db, key.key_id, app.now()).map((v) =>
            `${maskKey("agent", v.last4)} until ${v.expires_at}`
          );
          console.log(
            [
              key.name,
              maskKey("agent", key.last4),
              `reads: ${
                [...folders, ...key.can_read.documents.map((d) => `document ${d}`)].join(", ") || "nothing"
              }`,
              ...(old.length ? [`old values: ${old.join(", ")}`] : []),
            ].join("\t"),
          );
        }
        return Promise.resolve(0);
      }),
  },
  "key delete": {
    usage: "sergo key delete --person EMAIL --name NAME",
    summary: "Deletes an agent key: every value of it stops at once.",
    options: { person: { help: "the owner's email" }, name: { help: "the key's name" } },
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const spec = COMMANDS["key delete"]!;
        const person = requirePerson(app, requireFlag(parsed, "person", spec));
        const key = requireAgentKeyByName(app.db, person.person_id, requireFlag(parsed, "name", spec));
        await deleteAgentKey(app, { personId: person.person_id, keyId: key.key_id }, "cli");
        console.log(`Deleted agent key ${key.name}.`);
        return 0;
      }),
  },
  "personal-key add": {
    usage: "sergo personal-key add --person EMAIL",
    summary: "Creates a personal key for the REST API and prints its value once, on the last line.",
    options: { person: { help: "the owner's email" } },
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const person = requirePerson(app, requireFlag(parsed, "person", COMMANDS["personal-key add"]!));
        const { keyId, value } = await createPersonalKey(app, { personId: person.person_id }, "cli");
        console.log(`Created personal key ${keyId}. Its value is shown this once:`);
        console.log(value);
        return 0;
      }),
  },
  "login-token": {
    usage: "sergo login-token --person EMAIL",
    summary: "Issues a login token for the console and the API and prints it on the last line.",
    options: { person: { help: "the person's email" } },
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const person = requirePerson(app, requireFlag(parsed, "person", COMMANDS["login-token"]!));
        const { value, expiresAt } = await issueLoginToken(app, { personId: person.person_id }, "cli");
        console.log(`Login token for ${person.email}, valid until ${expiresAt}:`);
        console.log(value);
        return 0;
      }),
  },
  "document list": {
    usage: "sergo document list --person EMAIL",
    summary: "Lists a person's documents, newest first, with id, status and pages.",
    options: { person: { help: "the owner's email" } },
    run: (parsed, context) =>
      withApp(context, (app) => {
        const person = requirePerson(app, requireFlag(parsed, "person", COMMANDS["document list"]!));
        const { items } = listDocuments(app.db, {
          personId: person.person_id,
          folderIds: null,
          documentIds: [],
        }, {
          limit: 1_000_000,
          offset: 0,
        });
        for (const doc of items) {
          console.log([doc.document_id, doc.status, doc.page_count ?? "-", doc.name].join("\t"));
        }
        return Promise.resolve(0);
      }),
  },
  "document status": {
    usage: "sergo document status ID",
    summary: "Prints a document's status, pages, pages to view and any failure reason.",
    positionals: [1, 1],
    run: (parsed, context) =>
      withApp(context, (app) => {
        const { describeDocument } = DOCUMENT_HELPERS;
        const text = describeDocument(app, parsed.positionals[0]!);
        console.log(text);
        return Promise.resolve(0);
      }),
  },
  "process": {
    usage: "sergo process ID --preset basic|standard|none",
    summary: "Processes a document again with a preset; the new result replaces the old pages.",
    options: { preset: { help: "basic, standard (transcribes scanned pages) or none" } },
    positionals: [1, 1],
    run: (parsed, context) =>
      withApp(context, async (app) => {
        const doc = DOCUMENT_HELPERS.documentById(app, parsed.positionals[0]!);
        const preset = typeof parsed.values.preset === "string" ? parsed.values.preset : "basic";
        if (preset === "standard") {
          // Registers this machine's transcriber, so that Standard is refused where nothing reads it.
          const { openStandard } = await import("../processing/transcribers/choose.ts");
          (await openStandard(loadConfig([]).transcribe)).close();
        }
        await requestProcessing(app, { personId: doc.person_id, documentId: doc.document_id, preset }, "cli");
        const { waitForDocuments } = await import("./upload_command.ts");
        await waitForDocuments(app, [doc.document_id]);
        console.log(DOCUMENT_HELPERS.describeDocument(app, doc.document_id));
        return 0;
      }),
  },
};

const DOCUMENT_HELPERS = {
  documentById(app: SergoApp, id: string) {
    const row = getDocument(app.db, id);
    if (!row) throw new DomainError("not_found", `No document with id "${id}"`);
    return row;
  },
  describeDocument(app: SergoApp, id: string): string {
    const doc = getDocument(app.db, id);
    if (!doc) throw new DomainError("not_found", `No document with id "${id}"`);
    const lines = [
      `id: ${doc.document_id}`,
      `name: ${doc.name}`,
      `type: ${doc.type}`,
      `status: ${doc.status}`,
      `pages: ${doc.page_count ?? "-"}${doc.pages_estimated ? " (estimated)" : ""}`,
      `pages to view: ${doc.pages_to_view.join(", ") || "none"}`,
      `pdf copy: ${doc.pdf_copy_status}${doc.pdf_copy_reason ? ` — ${doc.pdf_copy_reason}` : ""}`,
    ];
    if (doc.failure_reason) lines.push(`reason: ${doc.failure_reason}`);
    return lines.join("\n");
  },
};

/** Every command, by name. */
export const COMMANDS: Record<string, Command> = { ...core, ...extraCommands };

/** Runs the command named at the start of `args` and returns its exit code. */
export async function runCommand(args: string[]): Promise<number> {
  const names = Object.keys(COMMANDS).sort((a, b) => b.length - a.length);
  const name = names.find((candidate) => {
    const words = candidate.split(" ");
    return words.every((word, i) => args[i] === word);
  });
  if (!name) {
    console.error(`Unknown command "${args.slice(0, 2).join(" ")}" — run "sergo --help" for the list`);
    return 2;
  }
  const command = COMMANDS[name]!;
  const rest = args.slice(name.split(" ").length);
  try {
    const parsed = command.raw ? { values: {}, positionals: rest, help: false } : parseCommand(rest, command);
    if (parsed.help) {
      console.log(helpText(command));
      return 0;
    }
    const config = loadConfig(
      command.raw ? rest.filter((a, i) => a.startsWith("--data") || rest[i - 1] === "--data") : rest,
    );
    return await command.run(parsed, {
      dataDir: config.dataDir,
      args: rest,
      open: () => openApp(config.dataDir, { databaseUrl: config.databaseUrl }),
      databaseUrl: config.databaseUrl,
    });
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof DomainError) {
      console.error(error.message);
      return 2;
    }
    console.error(`sergo ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** Where a data directory's event log is; for commands that only read it. */
export function eventsPath(dataDir: string): string {
  return join(dataDir, "events.db");
}

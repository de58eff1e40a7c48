/**
 * The CLI commands that start long-running things or reach into other
 * modules: `serve`, `mcp-stdio`, `pdf-copy`, `person password`, `audit …`.
 * Their modules are imported when the command runs, so the other commands
 * start without loading pdf.js, the MCP SDK or the renderer.
 *
 * @module
 */
import { getDocument } from "../../projections/catalogue.ts";
import { openApp } from "../app.ts";
import { loadConfig } from "../config.ts";
import { DomainError } from "../domain/errors.ts";
import { requestPdfCopy } from "../domain/documents.ts";
import { makeAdministrator, removeAdministrator, requirePerson, setPasswordHash } from "../domain/people.ts";
import { openSqliteStore } from "../../events/sqlite_store.ts";
import { dataPaths } from "../app.ts";
import { requireFlag, UsageError } from "./args.ts";
import { type Command, progress, progressDone } from "./_command.ts";
import { migrateCommand } from "./migrate.ts";
import { converterAvailable } from "../pdf_copy/libreoffice.ts";
import { join, resolve } from "node:path";

/** Whether a data directory holds an event log (serve, or any command that writes, made it). */
function hasEventLog(dataDir: string): boolean {
  try {
    return Deno.statSync(join(dataDir, "events.db")).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function readSecretLine(prompt: string): Promise<string> {
  if (Deno.stdin.isTerminal()) {
    Deno.stderr.writeSync(new TextEncoder().encode(prompt));
    Deno.stdin.setRaw(true);
    let value = "";
    const buffer = new Uint8Array(1);
    // Byte by byte, decoded as UTF-8, so a passphrase in any language arrives whole.
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const n = await Deno.stdin.read(buffer);
        if (n === null || buffer[0] === 13 || buffer[0] === 10) break;
        if (buffer[0] === 3) throw new UsageError("Cancelled");
        if (buffer[0] === 127) value = [...value].slice(0, -1).join("");
        else value += decoder.decode(buffer, { stream: true });
      }
    } finally {
      Deno.stdin.setRaw(false);
      Deno.stderr.writeSync(new TextEncoder().encode("\n"));
    }
    return value;
  }
  const chunks: Uint8Array[] = [];
  for await (const chunk of Deno.stdin.readable) chunks.push(chunk);
  const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  return text.split(/\r?\n/)[0] ?? "";
}

/** The commands defined here. */
export const extraCommands: Record<string, Command> = {
  "migrate": migrateCommand,
  "serve": {
    usage: "sergo serve [--data DIR] [--host HOST] [--port PORT] [--cert FILE --key FILE]",
    summary: "Serves the console, the API and /mcp; SIGINT or SIGTERM stop it cleanly.",
    options: {
      host: { help: "address to listen on (SERGO_HOST, default 127.0.0.1)" },
      port: { help: "port (SERGO_PORT, default 8787)" },
      cert: { help: "TLS certificate file (PEM), for https" },
      key: { help: "TLS private key file (PEM), for https" },
    },
    async run(_parsed, context) {
      const config = loadConfig(context.args);
      // LibreOffice's check (`soffice --version`, a fifth of a second, for /healthz) runs while the server's
      // modules load.
      converterAvailable();
      const { serveUntilSignalled } = await import("./serve.ts");
      return await serveUntilSignalled(config);
    },
  },
  "mcp-stdio": {
    usage: "sergo mcp-stdio --key-env SERGO_KEY --data /absolute/path/to/data",
    summary:
      "Serves one agent key's MCP server over stdio, for clients that launch a command; audited like HTTP.",
    options: { "key-env": { help: "the environment variable holding the agent key's value" } },
    async run(parsed, context) {
      const variable = requireFlag(parsed, "key-env", extraCommands["mcp-stdio"]!);
      const value = Deno.env.get(variable);
      if (!value) throw new UsageError(`The environment variable ${variable} is not set`);
      // The data directory, as a path that names it from anywhere: an app launches this command from a
      // folder of its own, where a relative ./data would be a new, empty one.
      const dataDir = resolve(context.dataDir);
      const where = context.databaseUrl
        ? "the database in SERGO_DATABASE_URL"
        : `the data directory "${dataDir}"`;
      if (!context.databaseUrl && !hasEventLog(dataDir)) {
        throw new UsageError(
          `No Sergo data in "${dataDir}": mcp-stdio serves an existing data directory, so give --data with the absolute path of the one serve uses`,
        );
      }
      console.error(`sergo mcp-stdio: serving from ${where}.`);
      const app = await openApp(context.dataDir, { databaseUrl: context.databaseUrl });
      app.watch(250);
      try {
        const { createServices } = await import("../server/services.ts");
        const services = await createServices(app, loadConfig(context.args));
        const { serveStdio, StdioKeyError } = await import("../mcp/stdio.ts");
        try {
          await serveStdio(services.mcpDeps, value);
        } catch (error) {
          if (error instanceof StdioKeyError) throw new UsageError(`${error.message} (read from ${where})`);
          throw error;
        } finally {
          await services.close();
        }
      } finally {
        await app.close();
      }
      return 0;
    },
  },
  "pdf-copy": {
    usage: "sergo pdf-copy ID",
    summary:
      'Makes a PDF copy of an Office or text file now (the console\'s "Make a PDF copy") and prints the outcome.',
    positionals: [1, 1],
    async run(parsed, context) {
      const app = await context.open();
      try {
        const id = parsed.positionals[0]!;
        const doc = getDocument(app.db, id);
        if (!doc) throw new DomainError("not_found", `No document with id "${id}"`);
        await requestPdfCopy(app, { personId: doc.person_id, documentId: id }, "cli");
        const { PdfCopyWorker } = await import("../workers/pdf_copy_worker.ts");
        const worker = new PdfCopyWorker(app, {
          workerId: `cli-${Deno.pid}`,
          leaseMs: loadConfig([]).workLeaseMs,
        });
        for (;;) {
          app.catchUp();
          const current = getDocument(app.db, id);
          if (!current || current.pdf_copy_status !== "pending") break;
          progress("making the PDF copy…");
          worker.kick();
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        await worker.stop();
        progressDone();
        const done = getDocument(app.db, id)!;
        if (done.pdf_copy_status === "made") {
          console.log(`PDF copy made: ${done.pdf_copy_pages} pages`);
          return 0;
        }
        console.log(`PDF copy failed: ${done.pdf_copy_reason}`);
        return 1;
      } finally {
        await app.close();
      }
    },
  },
  "person password": {
    usage: "sergo person password --email EMAIL   (the password is read from the terminal or stdin)",
    summary: "Sets a person's console password, stored as a scrypt hash.",
    options: { email: { help: "the person's email" } },
    async run(parsed, context) {
      const email = requireFlag(parsed, "email", extraCommands["person password"]!);
      const app = await context.open();
      try {
        const person = requirePerson(app, email);
        const password = await readSecretLine("Password: ");
        const { passwordProblem } = await import("../domain/password_policy.ts");
        const problem = await passwordProblem(password, person.email);
        if (problem) throw new UsageError(problem);
        const { hashPassword } = await import("../auth/passwords.ts");
        await setPasswordHash(app, person.person_id, await hashPassword(password));
        console.log(`Password set for ${person.email}.`);
        return 0;
      } finally {
        await app.close();
      }
    },
  },
  "person admin": {
    usage: "sergo person admin --email EMAIL [--remove]",
    summary:
      "Makes a person an administrator (they add people and reset passwords in the console), or with --remove takes it away and ends their console sessions.",
    options: { email: { help: "the person's email" } },
    booleans: { remove: "take the administrator rights away instead" },
    async run(parsed, context) {
      const email = requireFlag(parsed, "email", extraCommands["person admin"]!);
      const app = await context.open();
      try {
        const person = requirePerson(app, email);
        if (parsed.values.remove === true) {
          await removeAdministrator(app, person.person_id);
          console.log(`${person.name} <${person.email}> is not an administrator.`);
          return 0;
        }
        const { isAdministrator } = await import("../../projections/catalogue.ts");
        if (!isAdministrator(app.db, person.person_id)) await makeAdministrator(app, person.person_id);
        console.log(`${person.name} <${person.email}> is an administrator.`);
        return 0;
      } finally {
        await app.close();
      }
    },
  },
  "audit": {
    usage: "sergo audit export|verify|public-key …  (sergo audit --help)",
    summary: "Exports the audit for compliance, verifies an export, or prints the signing public key.",
    raw: true,
    async run(_parsed, context) {
      const { auditCommand } = await import("../audit/cli.ts");
      // --data is the CLI's own; the audit commands take the rest.
      const args = context.args.filter((arg, i, all) =>
        !(arg === "--data" || arg.startsWith("--data=") || all[i - 1] === "--data")
      );
      const needsData = ["export", "public-key"].includes(args[0] ?? "");
      const app = needsData ? await openApp(context.dataDir, { databaseUrl: context.databaseUrl }) : null;
      try {
        return await auditCommand(args, {
          dataDir: context.dataDir,
          openStore: () => app?.store ?? openSqliteStore(dataPaths(context.dataDir).events),
          openProjections: () => {
            if (!app) throw new UsageError("This audit command does not read the projections");
            return app.db;
          },
        });
      } finally {
        await app?.close();
      }
    },
  },
};

/**
 * What the OAuth tests share: the real `serve` on port 0 over a fresh data
 * directory with Ava Bennett (a console password, two folders with real
 * corpus files, an agent key), a cookie-keeping browser stand-in for the
 * console's forms, PKCE values, and a loopback server for client metadata
 * documents and redirects.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type Config, loadConfig } from "../../src/config.ts";
import { type RunningServer, startServer } from "../../src/cli/serve.ts";
import { addPerson, setPasswordHash } from "../../src/domain/people.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createAgentKey } from "../../src/domain/keys.ts";
import { createFolder } from "../../src/domain/folders.ts";
import { uploadFile } from "../../src/domain/documents.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

/** A running server with Ava's data. */
export interface OAuthWorld extends AsyncDisposable {
  running: RunningServer;
  url: string;
  email: string;
  password: string;
  personId: string;
  folders: { papers: string; decks: string };
  /** An agent key that reads Decks only. */
  decksKey: { keyId: string; value: string };
  /** Waits until every uploaded document is searchable. */
  processed(): Promise<void>;
}

/** Starts `serve` with OAuth on (and loopback client documents allowed unless said otherwise). */
export async function startOAuthWorld(
  overrides: Partial<Config> = {},
  options: { now?: () => Date } = {},
): Promise<OAuthWorld> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-oauth-" });
  const config = { ...loadConfig(["--data", dir, "--port", "0"]), oauthLoopbackClients: true, ...overrides };
  const running = await startServer(config, { quiet: true, now: options.now });
  const app = running.app;
  const email = "ava@example.com";
  const password = "correct horse battery staple";
  const person = await addPerson(app, { name: "Ava Bennett", email });
  await setPasswordHash(app, person.person_id, await hashPassword(password));
  const actor = `person-${person.person_id}`;
  const papers = await createFolder(
    app,
    { personId: person.person_id, name: "Papers", parentId: null },
    actor,
  );
  const decks = await createFolder(app, { personId: person.person_id, name: "Decks", parentId: null }, actor);
  const upload = async (folderId: string, path: string) => {
    const tempPath = await Deno.makeTempFile({ dir });
    await Deno.copyFile(`${CORPUS_DIR}/${path}`, tempPath);
    return await uploadFile(app, {
      personId: person.person_id,
      folderId,
      name: path.split("/").pop()!,
      tempPath,
    }, actor);
  };
  await upload(papers.folder_id, "text/rfc7754-technical-considerations.txt");
  await upload(decks.folder_id, "text/markitdown-readme.md");
  const made = await createAgentKey(app, {
    personId: person.person_id,
    name: "decks",
    description: "Slide decks.",
    canRead: { folders: [decks.folder_id], documents: [] },
  }, actor);
  return {
    running,
    url: running.url,
    email,
    password,
    personId: person.person_id,
    folders: { papers: papers.folder_id, decks: decks.folder_id },
    decksKey: { keyId: made.key.key_id, value: made.value },
    async processed() {
      for (let i = 0; i < 600; i++) {
        const pending = app.db.prepare(
          "SELECT COUNT(*) AS n FROM cat_documents WHERE status != 'searchable'",
        ).get() as { n: number };
        if (pending.n === 0) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("The uploads were not processed within 60 s");
    },
    async [Symbol.asyncDispose]() {
      await running.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A browser stand-in: keeps cookies, follows nothing, sends the console's forms. */
export class Browser {
  readonly #cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  /** Sends a request with the cookies kept so far; keeps the ones it sets. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.#cookies.size > 0) {
      headers.set("cookie", [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const response = await fetch(new URL(path, this.base), { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      this.#cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return response;
  }

  cookie(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  /** Posts a form from this server's own page (its Origin and CSRF token). */
  async post(path: string, fields: Array<[string, string]>): Promise<Response> {
    if (!this.cookie("sergo_csrf")) await (await this.fetch("/sign-in")).body?.cancel();
    const body = new URLSearchParams([["csrf", this.cookie("sergo_csrf")!], ...fields]);
    return await this.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(this.base).origin },
      body,
    });
  }

  /** Signs in to the console. */
  async signIn(email: string, password: string): Promise<void> {
    const response = await this.post("/sign-in", [["email", email], ["password", password], [
      "next",
      "/keys",
    ]]);
    await response.body?.cancel();
    if (response.status !== 303 || !this.cookie("sergo_session")) {
      throw new Error(`Signing in failed: HTTP ${response.status}`);
    }
  }
}

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = crypto.randomUUID().replaceAll("-", "") + crypto.randomUUID().replaceAll("-", "");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** A loopback server for an app: its metadata document (if given) and its redirect endpoint. */
export interface AppServer extends AsyncDisposable {
  origin: string;
  metadataUrl: string;
  redirectUri: string;
  /** How many times the metadata document was fetched. */
  fetches: number;
}

/** Serves an app's client metadata document at `/client.json`, made by `document(origin)`. */
export function appServer(document: (origin: string) => unknown): AppServer {
  const state = { fetches: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/client.json") {
      state.fetches++;
      return Response.json(document(url.origin));
    }
    if (url.pathname === "/moved.json") {
      return new Response(null, { status: 302, headers: { location: "/client.json" } });
    }
    if (url.pathname === "/huge.json") return new Response("[" + "1,".repeat(100_000) + "1]");
    return new Response("callback", { status: 200 });
  });
  const origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    metadataUrl: `${origin}/client.json`,
    redirectUri: `${origin}/callback`,
    get fetches() {
      return state.fetches;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/**
 * Commands on credentials: agent keys (create, change, roll, delete),
 * personal keys and login tokens. A secret is shown once, at creation; only
 * its sha256 is recorded.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { CanRead } from "../../events/types.ts";
import { type DocumentRow, type Folder, getDocument, getFolder } from "../../projections/catalogue.ts";
import {
  type AgentKey,
  getAgentKey,
  getAgentKeyByName,
  listAgentKeys,
  personalKeys,
} from "../../projections/key_scopes.ts";
import type { SergoApp } from "../app.ts";
import { appendDecided, commandMetadata } from "./_append.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";
import { oneAtATimeIn } from "./locks.ts";
import { generateSecret } from "./key_format.ts";
import {
  capReached,
  checkCanReadFound,
  decideChangeAgentKey,
  decideCreateAgentKey,
  decideCreatePersonalKey,
  decideDeleteAgentKey,
  decideDeletePersonalKey,
  decideIssueLoginToken,
  decideRevokeLoginToken,
  decideRollAgentKey,
  type FoundToRead,
  keyNameTaken,
  MAX_AGENT_KEYS,
  MAX_PERSONAL_KEYS,
  ownAgentKey,
  takeBackAgentKey,
  takeBackKeyChange,
  takeBackPersonalKey,
} from "./keys_decide.ts";

export { LOGIN_TOKEN_LIFETIME_MS, MAX_AGENT_KEYS, MAX_PERSONAL_KEYS } from "./keys_decide.ts";

/** The folders and documents a key is given, as the catalogue holds them. */
function foundToRead(db: DatabaseSync, canRead: CanRead): FoundToRead {
  const folders = new Map<string, Folder>();
  const documents = new Map<string, DocumentRow>();
  for (const id of canRead.folders) {
    const folder = getFolder(db, id);
    if (folder) folders.set(id, folder);
  }
  for (const id of canRead.documents) {
    const doc = getDocument(db, id);
    if (doc) documents.set(id, doc);
  }
  return { folders, documents };
}

/**
 * Checks that every folder and document a key is to read belongs to the
 * person; dedupes, keeping the order given: the tool descriptions list the
 * key's folders in that order.
 */
export function checkCanRead(db: DatabaseSync, personId: string, canRead: CanRead): CanRead {
  return checkCanReadFound(personId, canRead, foundToRead(db, canRead));
}

/** Finds a person's agent key by id; another person's key looks exactly like a missing one. */
export function requireAgentKey(db: DatabaseSync, personId: string, keyId: string): AgentKey {
  return ownAgentKey(personId, keyId, getAgentKey(db, keyId));
}

/** Finds a person's agent key by name. */
export function requireAgentKeyByName(db: DatabaseSync, personId: string, name: string): AgentKey {
  const key = getAgentKeyByName(db, personId, name);
  if (!key) throw new DomainError("not_found", `No agent key named "${name}"`);
  return key;
}

/** Creates an agent key and returns it with its value, which is shown this once. */
export async function createAgentKey(
  app: SergoApp,
  input: {
    personId: string;
    name: string;
    description: string;
    canRead: CanRead;
    /** Refuse a key that reads nothing (the console asks; scripts may give it folders later). */
    requireScope?: boolean;
  },
  actor: string,
): Promise<{ key: AgentKey; value: string }> {
  return await oneAtATimeIn(app, `agent-keys/${input.personId}`, async () => {
    const value = generateSecret("agent");
    const keyId = newId();
    const appends = decideCreateAgentKey({ keyId, value, ...input, metadata: commandMetadata(app, actor) }, {
      nameTaken: getAgentKeyByName(app.db, input.personId, input.name) !== undefined,
      agentKeys: listAgentKeys(app.db, input.personId).length,
      found: foundToRead(app.db, input.canRead),
    });
    await appendDecided(app, appends);
    const name = input.name;
    const live = listAgentKeys(app.db, input.personId);
    const nameFirst = firstToTakeName(app, live, keyId, name);
    if (
      nameFirst && withinCap(app, live.map((key) => key.key_id), keyId, (id) => `key-${id}`, MAX_AGENT_KEYS)
    ) {
      return { key: getAgentKey(app.db, keyId)!, value };
    }
    await appendDecided(app, [takeBackAgentKey(keyId, commandMetadata(app, actor))]);
    if (!nameFirst) throw keyNameTaken(name);
    throw capReached(MAX_AGENT_KEYS, "agent");
  });
}

/**
 * Whether `keyId` is, in log order, the first of its person's live keys to
 * take `name`. The name checked before the append is the projection's, so two
 * creations or renames to one name at the same moment (two requests, or the
 * CLI beside `serve`) can both pass it; after the append the projections hold
 * every event before this one, and every process sees the same log order, so
 * exactly the later ones find an earlier holder and give the name back.
 */
function firstToTakeName(app: SergoApp, live: AgentKey[], keyId: string, name: string): boolean {
  const holders = live.filter((key) => key.name === name);
  if (holders.length <= 1) return true;
  const takenAt = (id: string): number => {
    const events = app.store.readStream(`key-${id}`);
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i]!;
      const data = event.data as { name?: unknown };
      if ((event.type === "AgentKeyCreated" || event.type === "AgentKeyChanged") && data.name === name) {
        return event.position;
      }
    }
    return Infinity;
  };
  const mine = takenAt(keyId);
  return !holders.some((key) => key.key_id !== keyId && takenAt(key.key_id) < mine);
}

/**
 * Whether a key just created is among the first `cap` of its person's live
 * keys in log order. The count checked before the append is the projection's,
 * so creations at the same moment (two requests, or the CLI beside `serve`)
 * can all pass it; after the append the projections hold every event before
 * this one, and since every process sees the same log order, exactly the
 * creations past the cap find themselves past it and take their key back.
 */
function withinCap(
  app: SergoApp,
  live: string[],
  keyId: string,
  stream: (id: string) => string,
  cap: number,
): boolean {
  if (live.length <= cap) return true;
  const createdAt = (id: string) => app.store.readStream(stream(id))[0]?.position ?? Infinity;
  const mine = createdAt(keyId);
  return live.filter((id) => createdAt(id) < mine).length < cap;
}

/** Changes an agent key's name, description or what it can read. */
export async function changeAgentKey(
  app: SergoApp,
  input: {
    personId: string;
    keyId: string;
    name?: string;
    description?: string;
    canRead?: CanRead;
    requireScope?: boolean;
  },
  actor: string,
): Promise<AgentKey> {
  return await oneAtATimeIn(app, `agent-keys/${input.personId}`, async () => {
    const key = getAgentKey(app.db, input.keyId);
    const appends = decideChangeAgentKey({ ...input, metadata: commandMetadata(app, actor) }, {
      key,
      nameTaken: input.name !== undefined &&
        getAgentKeyByName(app.db, input.personId, input.name) !== undefined,
      found: foundToRead(app.db, input.canRead ?? { folders: [], documents: [] }),
    });
    if (appends.length === 0) return key!;
    await appendDecided(app, appends);
    const data = appends[0]!.events[0]!.data as { name?: string; description?: string; can_read?: CanRead };
    if (
      data.name !== undefined &&
      !firstToTakeName(app, listAgentKeys(app.db, input.personId), key!.key_id, data.name)
    ) {
      // Another key took the name first: this change is taken back whole, and says why.
      await appendDecided(app, [takeBackKeyChange(key!, data, commandMetadata(app, actor))]);
      throw keyNameTaken(data.name);
    }
    return getAgentKey(app.db, key!.key_id)!;
  });
}

/**
 * Rolls an agent key: a new value, and the current one keeps working until
 * now + grace. Older values still in their grace time keep their own expiry.
 */
export async function rollAgentKey(
  app: SergoApp,
  input: { personId: string; keyId: string; grace: string },
  actor: string,
): Promise<{ key: AgentKey; value: string; oldExpiresAt: string }> {
  const value = generateSecret("agent");
  const appends = decideRollAgentKey({ ...input, value, metadata: commandMetadata(app, actor) }, {
    key: getAgentKey(app.db, input.keyId),
  });
  await appendDecided(app, appends);
  const { old_expires_at: oldExpiresAt } = appends[0]!.events[0]!.data as { old_expires_at: string };
  return { key: getAgentKey(app.db, input.keyId)!, value, oldExpiresAt };
}

/** Deletes an agent key: every value of it stops at once. */
export async function deleteAgentKey(
  app: SergoApp,
  input: { personId: string; keyId: string },
  actor: string,
): Promise<void> {
  await appendDecided(
    app,
    decideDeleteAgentKey({ ...input, metadata: commandMetadata(app, actor) }, {
      key: getAgentKey(app.db, input.keyId),
    }),
  );
}

/** Creates a personal key (for the REST API) and returns its id and value, shown this once. */
export async function createPersonalKey(
  app: SergoApp,
  input: { personId: string },
  actor: string,
): Promise<{ keyId: string; value: string }> {
  return await oneAtATimeIn(app, `personal-keys/${input.personId}`, async () => {
    const value = generateSecret("personal");
    const keyId = newId();
    await appendDecided(
      app,
      decideCreatePersonalKey({ keyId, value, ...input, metadata: commandMetadata(app, actor) }, {
        personalKeys: personalKeys(app.db, input.personId).length,
      }),
    );
    const live = personalKeys(app.db, input.personId).map((key) => key.key_id);
    if (!withinCap(app, live, keyId, (id) => `personal-key-${id}`, MAX_PERSONAL_KEYS)) {
      await appendDecided(app, [takeBackPersonalKey(keyId, commandMetadata(app, actor))]);
      throw capReached(MAX_PERSONAL_KEYS, "personal");
    }
    return { keyId, value };
  });
}

/** Deletes a personal key. */
export async function deletePersonalKey(
  app: SergoApp,
  input: { personId: string; keyId: string },
  actor: string,
): Promise<void> {
  await appendDecided(
    app,
    decideDeletePersonalKey({ ...input, metadata: commandMetadata(app, actor) }, {
      personsKey: personalKeys(app.db, input.personId).some((k) => k.key_id === input.keyId),
    }),
  );
}

/** Issues a login token for the console and the API; returns its id, value and expiry. */
export async function issueLoginToken(
  app: SergoApp,
  input: { personId: string; lifetimeMs?: number },
  actor: string,
): Promise<{ tokenId: string; value: string; expiresAt: string }> {
  const value = generateSecret("login");
  const tokenId = newId();
  const appends = decideIssueLoginToken({ tokenId, value, ...input, metadata: commandMetadata(app, actor) });
  await appendDecided(app, appends);
  const { expires_at: expiresAt } = appends[0]!.events[0]!.data as { expires_at: string };
  return { tokenId, value, expiresAt };
}

/** Revokes a login token. */
export async function revokeLoginToken(
  app: SergoApp,
  input: { tokenId: string },
  actor: string,
): Promise<void> {
  await appendDecided(app, decideRevokeLoginToken({ ...input, metadata: commandMetadata(app, actor) }));
}

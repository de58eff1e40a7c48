/**
 * Commands on credentials: agent keys (create, change, roll, delete),
 * personal keys and login tokens. A secret is shown once, at creation; only
 * its sha256 is recorded.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { CanRead } from "../../events/types.ts";
import { getDocument, getFolder } from "../../projections/catalogue.ts";
import {
  type AgentKey,
  getAgentKey,
  getAgentKeyByName,
  listAgentKeys,
  personalKeys,
} from "../../projections/key_scopes.ts";
import type { SergoApp } from "../app.ts";
import { generateSecret, hashSecret, lastFour } from "./key_format.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";
import { checkDescription, checkGrace, checkKeyName, GRACE } from "./rules.ts";

/** How long a login token works. */
export const LOGIN_TOKEN_LIFETIME_MS = 7 * 86_400_000;

/** The most agent keys one person may have at once. */
export const MAX_AGENT_KEYS = 100;

/** The most personal keys one person may have at once. */
export const MAX_PERSONAL_KEYS = 20;

/**
 * Checks that every folder and document a key is to read belongs to the
 * person; dedupes, keeping the order given: the tool descriptions list the
 * key's folders in that order.
 */
export function checkCanRead(db: DatabaseSync, personId: string, canRead: CanRead): CanRead {
  const folders = [...new Set(canRead.folders)];
  const documents = [...new Set(canRead.documents)];
  for (const id of folders) {
    const folder = getFolder(db, id);
    if (!folder || folder.person_id !== personId) {
      throw new DomainError("invalid", `No folder with id "${id}"`);
    }
  }
  for (const id of documents) {
    const doc = getDocument(db, id);
    if (!doc || doc.person_id !== personId) throw new DomainError("invalid", `No document with id "${id}"`);
  }
  if (folders.length > 1000 || documents.length > 1000) {
    throw new DomainError("invalid", "A key can read at most 1,000 folders and 1,000 documents");
  }
  return { folders, documents };
}

/** Finds a person's agent key by id; another person's key looks exactly like a missing one. */
export function requireAgentKey(db: DatabaseSync, personId: string, keyId: string): AgentKey {
  const key = getAgentKey(db, keyId);
  if (!key || key.person_id !== personId) {
    throw new DomainError("not_found", `No agent key with id "${keyId}"`);
  }
  return key;
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
  const name = checkKeyName(input.name);
  const description = checkDescription(input.description);
  if (getAgentKeyByName(app.db, input.personId, name)) throw nameTaken(name);
  if (listAgentKeys(app.db, input.personId).length >= MAX_AGENT_KEYS) {
    throw capReached(MAX_AGENT_KEYS, "agent");
  }
  if (input.requireScope) refuseEmptyScope(input.canRead);
  const canRead = checkCanRead(app.db, input.personId, input.canRead);
  const value = generateSecret("agent");
  const keyId = newId();
  await app.append(`key-${keyId}`, [{
    type: "AgentKeyCreated",
    data: {
      key_id: keyId,
      person_id: input.personId,
      name,
      description,
      key_hash: hashSecret(value),
      last4: lastFour(value),
      can_read: canRead,
    },
    metadata: app.meta(actor),
  }], { expectedVersion: "no_stream" });
  const live = listAgentKeys(app.db, input.personId);
  const nameFirst = firstToTakeName(app, live, keyId, name);
  if (
    nameFirst && withinCap(app, live.map((key) => key.key_id), keyId, (id) => `key-${id}`, MAX_AGENT_KEYS)
  ) {
    return { key: getAgentKey(app.db, keyId)!, value };
  }
  await app.append(`key-${keyId}`, [{
    type: "AgentKeyDeleted",
    data: { key_id: keyId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  if (!nameFirst) throw nameTaken(name);
  throw capReached(MAX_AGENT_KEYS, "agent");
}

function nameTaken(name: string): DomainError {
  return new DomainError("conflict", `An agent key named "${name}" already exists`);
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

function capReached(cap: number, kind: "agent" | "personal"): DomainError {
  return new DomainError(
    "conflict",
    `You have ${cap} ${kind} keys, the most one person may have: delete one before making another`,
  );
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
  const key = requireAgentKey(app.db, input.personId, input.keyId);
  const data: { key_id: string; name?: string; description?: string; can_read?: CanRead } = {
    key_id: key.key_id,
  };
  if (input.name !== undefined && input.name !== key.name) {
    data.name = checkKeyName(input.name);
    if (getAgentKeyByName(app.db, input.personId, data.name)) throw nameTaken(data.name);
  }
  if (input.description !== undefined && input.description !== key.description) {
    data.description = checkDescription(input.description);
  }
  if (input.canRead !== undefined) {
    if (input.requireScope) refuseEmptyScope(input.canRead);
    const canRead = checkCanRead(app.db, input.personId, input.canRead);
    if (JSON.stringify(canRead) !== JSON.stringify(key.can_read)) data.can_read = canRead;
  }
  if (Object.keys(data).length === 1) return key;
  await app.append(`key-${key.key_id}`, [{ type: "AgentKeyChanged", data, metadata: app.meta(actor) }], {
    expectedVersion: "stream_exists",
  });
  if (
    data.name !== undefined &&
    !firstToTakeName(app, listAgentKeys(app.db, input.personId), key.key_id, data.name)
  ) {
    // Another key took the name first: this change is taken back whole, and says why.
    const back: typeof data = { key_id: key.key_id, name: key.name };
    if (data.description !== undefined) back.description = key.description;
    if (data.can_read !== undefined) back.can_read = key.can_read;
    await app.append(`key-${key.key_id}`, [{
      type: "AgentKeyChanged",
      data: back,
      metadata: app.meta(actor),
    }], {
      expectedVersion: "stream_exists",
    });
    throw nameTaken(data.name);
  }
  return getAgentKey(app.db, key.key_id)!;
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
  const key = requireAgentKey(app.db, input.personId, input.keyId);
  const grace = checkGrace(input.grace);
  const value = generateSecret("agent");
  const oldExpiresAt = new Date(app.now().getTime() + GRACE[grace]).toISOString();
  await app.append(`key-${key.key_id}`, [{
    type: "AgentKeyRolled",
    data: {
      key_id: key.key_id,
      key_hash: hashSecret(value),
      last4: lastFour(value),
      old_expires_at: oldExpiresAt,
    },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  return { key: getAgentKey(app.db, key.key_id)!, value, oldExpiresAt };
}

/** Deletes an agent key: every value of it stops at once. */
export async function deleteAgentKey(
  app: SergoApp,
  input: { personId: string; keyId: string },
  actor: string,
): Promise<void> {
  const key = requireAgentKey(app.db, input.personId, input.keyId);
  await app.append(`key-${key.key_id}`, [{
    type: "AgentKeyDeleted",
    data: { key_id: key.key_id },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
}

/** Creates a personal key (for the REST API) and returns its id and value, shown this once. */
export async function createPersonalKey(
  app: SergoApp,
  input: { personId: string },
  actor: string,
): Promise<{ keyId: string; value: string }> {
  if (personalKeys(app.db, input.personId).length >= MAX_PERSONAL_KEYS) {
    throw capReached(MAX_PERSONAL_KEYS, "personal");
  }
  const value = generateSecret("personal");
  const keyId = newId();
  await app.append(`personal-key-${keyId}`, [{
    type: "PersonalKeyCreated",
    data: { key_id: keyId, person_id: input.personId, key_hash: hashSecret(value), last4: lastFour(value) },
    metadata: app.meta(actor),
  }], { expectedVersion: "no_stream" });
  const live = personalKeys(app.db, input.personId).map((key) => key.key_id);
  if (!withinCap(app, live, keyId, (id) => `personal-key-${id}`, MAX_PERSONAL_KEYS)) {
    await app.append(`personal-key-${keyId}`, [{
      type: "PersonalKeyDeleted",
      data: { key_id: keyId },
      metadata: app.meta(actor),
    }], { expectedVersion: "stream_exists" });
    throw capReached(MAX_PERSONAL_KEYS, "personal");
  }
  return { keyId, value };
}

/** Deletes a personal key. */
export async function deletePersonalKey(
  app: SergoApp,
  input: { personId: string; keyId: string },
  actor: string,
): Promise<void> {
  if (!personalKeys(app.db, input.personId).some((k) => k.key_id === input.keyId)) {
    throw new DomainError("not_found", `No personal key with id "${input.keyId}"`);
  }
  await app.append(`personal-key-${input.keyId}`, [{
    type: "PersonalKeyDeleted",
    data: { key_id: input.keyId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
}

/** Issues a login token for the console and the API; returns its id, value and expiry. */
export async function issueLoginToken(
  app: SergoApp,
  input: { personId: string; lifetimeMs?: number },
  actor: string,
): Promise<{ tokenId: string; value: string; expiresAt: string }> {
  const value = generateSecret("login");
  const tokenId = newId();
  const expiresAt = new Date(app.now().getTime() + (input.lifetimeMs ?? LOGIN_TOKEN_LIFETIME_MS))
    .toISOString();
  await app.append(`login-${tokenId}`, [{
    type: "LoginTokenIssued",
    data: {
      token_id: tokenId,
      person_id: input.personId,
      token_hash: hashSecret(value),
      expires_at: expiresAt,
    },
    metadata: app.meta(actor),
  }], { expectedVersion: "no_stream" });
  return { tokenId, value, expiresAt };
}

/** Revokes a login token. */
export async function revokeLoginToken(
  app: SergoApp,
  input: { tokenId: string },
  actor: string,
): Promise<void> {
  await app.append(`login-${input.tokenId}`, [{
    type: "LoginTokenRevoked",
    data: { token_id: input.tokenId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
}

/**
 * A key saved from the console must read something: an agent on a key that
 * reads nothing finds nothing, and nothing tells it why.
 */
function refuseEmptyScope(canRead: CanRead): void {
  if (canRead.folders.length === 0 && canRead.documents.length === 0) {
    throw new DomainError(
      "invalid",
      "Choose at least one folder or file for this key to read: a key that reads nothing finds nothing for its agent",
    );
  }
}

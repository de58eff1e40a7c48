/**
 * The credential rules as pure deciders: agent keys (create, change, roll,
 * delete), personal keys and login tokens. Each takes the command (with the
 * new secret and id its caller made) and the rows its caller loaded, and
 * returns the appends or refuses with one sentence; nothing here reads a
 * database or a clock. Only a secret's sha256 and last 4 characters are
 * recorded.
 *
 * @module
 */
import type { CanRead } from "../../events/types.ts";
import type { AgentKey } from "../../projections/key_scopes.ts";
import type { Append, CommandMetadata } from "./decision.ts";
import { eventMetadata } from "./decision.ts";
import { DomainError } from "./errors.ts";
import { hashSecret, lastFour } from "./key_format.ts";
import { checkDescription, checkGrace, checkKeyName, GRACE } from "./rules.ts";

/** How long a login token works. */
export const LOGIN_TOKEN_LIFETIME_MS = 7 * 86_400_000;

/** The most agent keys one person may have at once. */
export const MAX_AGENT_KEYS = 100;

/** The most personal keys one person may have at once. */
export const MAX_PERSONAL_KEYS = 20;

/** The folders and documents a key was given, as the catalogue holds them (missing ones absent). */
export interface FoundToRead {
  folders: ReadonlyMap<string, { person_id: string }>;
  documents: ReadonlyMap<string, { person_id: string }>;
}

/**
 * Checks that every folder and document a key is to read belongs to the
 * person; dedupes, keeping the order given: the tool descriptions list the
 * key's folders in that order.
 */
export function checkCanReadFound(personId: string, canRead: CanRead, found: FoundToRead): CanRead {
  const folders = [...new Set(canRead.folders)];
  const documents = [...new Set(canRead.documents)];
  for (const id of folders) {
    const folder = found.folders.get(id);
    if (!folder || folder.person_id !== personId) {
      throw new DomainError("invalid", `No folder with id "${id}"`);
    }
  }
  for (const id of documents) {
    const doc = found.documents.get(id);
    if (!doc || doc.person_id !== personId) throw new DomainError("invalid", `No document with id "${id}"`);
  }
  if (folders.length > 1000 || documents.length > 1000) {
    throw new DomainError("invalid", "A key can read at most 1,000 folders and 1,000 documents");
  }
  return { folders, documents };
}

/** The agent key a person asked for by id; another person's key looks exactly like a missing one. */
export function ownAgentKey(personId: string, keyId: string, key: AgentKey | undefined): AgentKey {
  if (!key || key.person_id !== personId) {
    throw new DomainError("not_found", `No agent key with id "${keyId}"`);
  }
  return key;
}

/** The refusal of an agent key name the person uses already. */
export function keyNameTaken(name: string): DomainError {
  return new DomainError("conflict", `An agent key named "${name}" already exists`);
}

/** The refusal of one key more than a person may have. */
export function capReached(cap: number, kind: "agent" | "personal"): DomainError {
  return new DomainError(
    "conflict",
    `You have ${cap} ${kind} keys, the most one person may have: delete one before making another`,
  );
}

/**
 * A key saved from the console must read something: an agent on a key that
 * reads nothing finds nothing, and nothing tells it why.
 */
export function refuseEmptyScope(canRead: CanRead): void {
  if (canRead.folders.length === 0 && canRead.documents.length === 0) {
    throw new DomainError(
      "invalid",
      "Choose at least one folder or file for this key to read: a key that reads nothing finds nothing for its agent",
    );
  }
}

/** Make agent key `keyId` with the secret `value` (made by the caller, shown once). */
export interface CreateAgentKey {
  keyId: string;
  value: string;
  personId: string;
  name: string;
  description: string;
  canRead: CanRead;
  /** Refuse a key that reads nothing (the console asks; scripts may give it folders later). */
  requireScope?: boolean;
  metadata: CommandMetadata;
}

/** What a key's creation needs to know. */
export interface CreateAgentKeyState {
  /** Whether one of the person's keys has that name now. */
  nameTaken: boolean;
  /** How many agent keys the person has now. */
  agentKeys: number;
  /** The folders and documents it is given. */
  found: FoundToRead;
}

/**
 * Decides an agent key's creation: an allowed name the person does not use,
 * a description, fewer than {@linkcode MAX_AGENT_KEYS} keys, and the person's
 * own folders and documents to read.
 */
export function decideCreateAgentKey(command: CreateAgentKey, state: CreateAgentKeyState): Append[] {
  const name = checkKeyName(command.name);
  const description = checkDescription(command.description);
  if (state.nameTaken) throw keyNameTaken(name);
  if (state.agentKeys >= MAX_AGENT_KEYS) {
    throw capReached(MAX_AGENT_KEYS, "agent");
  }
  if (command.requireScope) refuseEmptyScope(command.canRead);
  const canRead = checkCanReadFound(command.personId, command.canRead, state.found);
  return [{
    stream: `key-${command.keyId}`,
    events: [{
      type: "AgentKeyCreated",
      data: {
        key_id: command.keyId,
        person_id: command.personId,
        name,
        description,
        key_hash: hashSecret(command.value),
        last4: lastFour(command.value),
        can_read: canRead,
      },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "no_stream",
  }];
}

/** Change an agent key's name, description or what it can read (absent: kept). */
export interface ChangeAgentKey {
  personId: string;
  keyId: string;
  name?: string;
  description?: string;
  canRead?: CanRead;
  requireScope?: boolean;
  metadata: CommandMetadata;
}

/** What a key's change needs to know. */
export interface ChangeAgentKeyState {
  /** The key, whoever's it is. */
  key: AgentKey | undefined;
  /** Whether one of the person's keys has the new name now. */
  nameTaken: boolean;
  /** The folders and documents it is given. */
  found: FoundToRead;
}

/** Decides a change: only what differs is recorded, and nothing when nothing does. */
export function decideChangeAgentKey(command: ChangeAgentKey, state: ChangeAgentKeyState): Append[] {
  const key = ownAgentKey(command.personId, command.keyId, state.key);
  const data: { key_id: string; name?: string; description?: string; can_read?: CanRead } = {
    key_id: key.key_id,
  };
  if (command.name !== undefined && command.name !== key.name) {
    data.name = checkKeyName(command.name);
    if (state.nameTaken) throw keyNameTaken(data.name);
  }
  if (command.description !== undefined && command.description !== key.description) {
    data.description = checkDescription(command.description);
  }
  if (command.canRead !== undefined) {
    if (command.requireScope) refuseEmptyScope(command.canRead);
    const canRead = checkCanReadFound(command.personId, command.canRead, state.found);
    if (JSON.stringify(canRead) !== JSON.stringify(key.can_read)) data.can_read = canRead;
  }
  if (Object.keys(data).length === 1) return [];
  return [{
    stream: `key-${key.key_id}`,
    events: [{ type: "AgentKeyChanged", data, metadata: eventMetadata(command.metadata) }],
    expectedVersion: "stream_exists",
  }];
}

/** Roll agent key `keyId` to the secret `value`; the current one works for `grace` more. */
export interface RollAgentKey {
  personId: string;
  keyId: string;
  grace: string;
  value: string;
  metadata: CommandMetadata;
}

/**
 * Decides a roll: a new value, and the current one keeps working until
 * now + grace. Older values still in their grace time keep their own expiry.
 */
export function decideRollAgentKey(command: RollAgentKey, state: { key: AgentKey | undefined }): Append[] {
  const key = ownAgentKey(command.personId, command.keyId, state.key);
  const grace = checkGrace(command.grace);
  return [{
    stream: `key-${key.key_id}`,
    events: [{
      type: "AgentKeyRolled",
      data: {
        key_id: key.key_id,
        key_hash: hashSecret(command.value),
        last4: lastFour(command.value),
        old_expires_at: new Date(command.metadata.now.getTime() + GRACE[grace]).toISOString(),
      },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Delete agent key `keyId`: every value of it stops at once. */
export interface DeleteAgentKey {
  personId: string;
  keyId: string;
  metadata: CommandMetadata;
}

/** Decides an agent key's deletion. */
export function decideDeleteAgentKey(
  command: DeleteAgentKey,
  state: { key: AgentKey | undefined },
): Append[] {
  const key = ownAgentKey(command.personId, command.keyId, state.key);
  return [{
    stream: `key-${key.key_id}`,
    events: [{
      type: "AgentKeyDeleted",
      data: { key_id: key.key_id },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Make personal key `keyId` (for the REST API) with the secret `value`. */
export interface CreatePersonalKey {
  keyId: string;
  value: string;
  personId: string;
  metadata: CommandMetadata;
}

/** Decides a personal key's creation: fewer than {@linkcode MAX_PERSONAL_KEYS} keys. */
export function decideCreatePersonalKey(
  command: CreatePersonalKey,
  state: { personalKeys: number },
): Append[] {
  if (state.personalKeys >= MAX_PERSONAL_KEYS) {
    throw capReached(MAX_PERSONAL_KEYS, "personal");
  }
  return [{
    stream: `personal-key-${command.keyId}`,
    events: [{
      type: "PersonalKeyCreated",
      data: {
        key_id: command.keyId,
        person_id: command.personId,
        key_hash: hashSecret(command.value),
        last4: lastFour(command.value),
      },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "no_stream",
  }];
}

/** Delete personal key `keyId`. */
export interface DeletePersonalKey {
  personId: string;
  keyId: string;
  metadata: CommandMetadata;
}

/** Decides a personal key's deletion: it must be one of the person's live keys. */
export function decideDeletePersonalKey(
  command: DeletePersonalKey,
  state: { personsKey: boolean },
): Append[] {
  if (!state.personsKey) {
    throw new DomainError("not_found", `No personal key with id "${command.keyId}"`);
  }
  return [{
    stream: `personal-key-${command.keyId}`,
    events: [{
      type: "PersonalKeyDeleted",
      data: { key_id: command.keyId },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Issue login token `tokenId` with the secret `value`, working for `lifetimeMs` (default 7 days). */
export interface IssueLoginToken {
  tokenId: string;
  value: string;
  personId: string;
  lifetimeMs?: number;
  metadata: CommandMetadata;
}

/** Decides a login token: it expires `lifetimeMs` after now. */
export function decideIssueLoginToken(command: IssueLoginToken): Append[] {
  const expiresAt = new Date(
    command.metadata.now.getTime() + (command.lifetimeMs ?? LOGIN_TOKEN_LIFETIME_MS),
  ).toISOString();
  return [{
    stream: `login-${command.tokenId}`,
    events: [{
      type: "LoginTokenIssued",
      data: {
        token_id: command.tokenId,
        person_id: command.personId,
        token_hash: hashSecret(command.value),
        expires_at: expiresAt,
      },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "no_stream",
  }];
}

/** Decides a login token's revocation. */
export function decideRevokeLoginToken(command: { tokenId: string; metadata: CommandMetadata }): Append[] {
  return [{
    stream: `login-${command.tokenId}`,
    events: [{
      type: "LoginTokenRevoked",
      data: { token_id: command.tokenId },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Takes back an agent key that another, first in the log, made one too many or a second holder of its name. */
export function takeBackAgentKey(keyId: string, metadata: CommandMetadata): Append {
  return {
    stream: `key-${keyId}`,
    events: [{ type: "AgentKeyDeleted", data: { key_id: keyId }, metadata: eventMetadata(metadata) }],
    expectedVersion: "stream_exists",
  };
}

/**
 * Takes back a whole change of `before` whose new name another key took first:
 * its name, and whatever else the change set.
 */
export function takeBackKeyChange(
  before: AgentKey,
  change: { description?: string; can_read?: CanRead },
  metadata: CommandMetadata,
): Append {
  const back: { key_id: string; name?: string; description?: string; can_read?: CanRead } = {
    key_id: before.key_id,
    name: before.name,
  };
  if (change.description !== undefined) back.description = before.description;
  if (change.can_read !== undefined) back.can_read = before.can_read;
  return {
    stream: `key-${before.key_id}`,
    events: [{ type: "AgentKeyChanged", data: back, metadata: eventMetadata(metadata) }],
    expectedVersion: "stream_exists",
  };
}

/** Takes back a personal key that others, first in the log, made one too many. */
export function takeBackPersonalKey(keyId: string, metadata: CommandMetadata): Append {
  return {
    stream: `personal-key-${keyId}`,
    events: [{ type: "PersonalKeyDeleted", data: { key_id: keyId }, metadata: eventMetadata(metadata) }],
    expectedVersion: "stream_exists",
  };
}

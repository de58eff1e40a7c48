/**
 * The credential rules as specifications, without a database or a clock:
 * given what a command's caller loads (the person's keys, the folders and
 * documents a key is given), when the command is decided, then these
 * appends, or this refusal.
 */
import assert from "node:assert/strict";
import type { AgentKey } from "../../projections/key_scopes.ts";
import { hashSecret } from "../../src/domain/key_format.ts";
import {
  type CreateAgentKey,
  type CreateAgentKeyState,
  decideChangeAgentKey,
  decideCreateAgentKey,
  decideCreatePersonalKey,
  decideDeleteAgentKey,
  decideDeletePersonalKey,
  decideIssueLoginToken,
  decideRevokeLoginToken,
  decideRollAgentKey,
  type FoundToRead,
  MAX_AGENT_KEYS,
  MAX_PERSONAL_KEYS,
  takeBackAgentKey,
  takeBackKeyChange,
  takeBackPersonalKey,
} from "../../src/domain/keys_decide.ts";

const metadata = { now: new Date("2026-03-01T09:30:00.000Z"), actor: "person-ava" };
const meta = { time: "2026-03-01T09:30:00.000Z", actor: "person-ava" };
const VALUE = "sgk_s_0123456789ABCDEFGHIJKLMNOPQabcdef";

const found: FoundToRead = {
  folders: new Map([["F1", { person_id: "ava" }], ["F2", { person_id: "ava" }], ["F-ben", {
    person_id: "ben",
  }]]),
  documents: new Map([["D1", { person_id: "ava" }], ["D-ben", { person_id: "ben" }]]),
};

const create: CreateAgentKey = {
  keyId: "K-new",
  value: VALUE,
  personId: "ava",
  name: "research-bot",
  description: "Reads the energy reports",
  canRead: { folders: ["F2", "F1", "F2"], documents: ["D1"] },
  metadata,
};
const free: CreateAgentKeyState = { nameTaken: false, agentKeys: 3, found };

const key: AgentKey = {
  key_id: "K1",
  person_id: "ava",
  name: "research-bot",
  description: "old",
  can_read: { folders: ["F1"], documents: [] },
  created_at: "2026-02-01T00:00:00.000Z",
  last4: "wxyz",
};

Deno.test("create agent key: given a free name and the person's folders, then AgentKeyCreated with the value's hash, folders deduped in order", () => {
  assert.deepEqual(decideCreateAgentKey(create, free), [{
    stream: "key-K-new",
    events: [{
      type: "AgentKeyCreated",
      data: {
        key_id: "K-new",
        person_id: "ava",
        name: "research-bot",
        description: "Reads the energy reports",
        key_hash: hashSecret(VALUE),
        last4: "cdef",
        can_read: { folders: ["F2", "F1"], documents: ["D1"] },
      },
      metadata: meta,
    }],
    expectedVersion: "no_stream",
  }]);
});

Deno.test("create agent key: a name in use, the 101st key, another person's folder or document, 1,001 folders: refused", () => {
  const refused = (command: Partial<CreateAgentKey>, state: Partial<CreateAgentKeyState> = {}) => () =>
    decideCreateAgentKey({ ...create, ...command }, { ...free, ...state });
  assert.throws(refused({}, { nameTaken: true }), {
    code: "conflict",
    message: 'An agent key named "research-bot" already exists',
  });
  assert.equal(decideCreateAgentKey(create, { ...free, agentKeys: MAX_AGENT_KEYS - 1 }).length, 1);
  assert.throws(refused({}, { agentKeys: MAX_AGENT_KEYS }), {
    code: "conflict",
    message: "You have 100 agent keys, the most one person may have: delete one before making another",
  });
  assert.throws(refused({ canRead: { folders: ["F-ben"], documents: [] } }), {
    code: "invalid",
    message: 'No folder with id "F-ben"',
  });
  assert.throws(refused({ canRead: { folders: ["F-gone"], documents: [] } }), {
    message: 'No folder with id "F-gone"',
  });
  assert.throws(refused({ canRead: { folders: [], documents: ["D-ben"] } }), {
    code: "invalid",
    message: 'No document with id "D-ben"',
  });
  const many = Array.from({ length: 1_001 }, (_, i) => `F${i}`);
  const manyFound = { ...found, folders: new Map(many.map((id) => [id, { person_id: "ava" }])) };
  assert.equal(
    decideCreateAgentKey({ ...create, canRead: { folders: many.slice(0, 1_000), documents: [] } }, {
      ...free,
      found: manyFound,
    })[0]!.events.length,
    1,
  );
  assert.throws(refused({ canRead: { folders: many, documents: [] } }, { found: manyFound }), {
    message: "A key can read at most 1,000 folders and 1,000 documents",
  });
  assert.throws(refused({ name: "Research Bot" }), {
    code: "invalid",
    message:
      'Key name "Research Bot" is not allowed: it must start with a lowercase letter a-z; it may use only a-z, 0-9 and - (not "R", " ", "B")',
  });
  assert.throws(refused({ description: "x".repeat(1_001) }), {
    message: "Description is too long: at most 1000 characters, got 1001",
  });
});

Deno.test("create agent key: from the console a key must read something; from a script it may read nothing yet", () => {
  const none = { folders: [], documents: [] };
  assert.throws(() => decideCreateAgentKey({ ...create, canRead: none, requireScope: true }, free), {
    code: "invalid",
    message:
      "Choose at least one folder or file for this key to read: a key that reads nothing finds nothing for its agent",
  });
  assert.deepEqual(
    (decideCreateAgentKey({ ...create, canRead: none }, free)[0]!.events[0]!.data as { can_read: unknown })
      .can_read,
    none,
  );
});

Deno.test("change agent key: only what differs is recorded; nothing differs, nothing is; a name in use is refused", () => {
  const change = (command: Parameters<typeof decideChangeAgentKey>[0], nameTaken = false) =>
    decideChangeAgentKey(command, { key, nameTaken, found });
  assert.deepEqual(
    change({ personId: "ava", keyId: "K1", name: "energy-bot", description: "old", metadata }),
    [{
      stream: "key-K1",
      events: [{ type: "AgentKeyChanged", data: { key_id: "K1", name: "energy-bot" }, metadata: meta }],
      expectedVersion: "stream_exists",
    }],
  );
  assert.deepEqual(
    change({ personId: "ava", keyId: "K1", canRead: { folders: ["F1", "F2"], documents: [] }, metadata })[0]!
      .events[0]!.data,
    { key_id: "K1", can_read: { folders: ["F1", "F2"], documents: [] } },
  );
  assert.deepEqual(
    change({
      personId: "ava",
      keyId: "K1",
      name: "research-bot",
      description: "old",
      canRead: { folders: ["F1", "F1"], documents: [] },
      metadata,
    }, true),
    [],
    "the same name, description and folders: nothing to record",
  );
  assert.throws(() => change({ personId: "ava", keyId: "K1", name: "taken-name", metadata }, true), {
    code: "conflict",
    message: 'An agent key named "taken-name" already exists',
  });
  assert.throws(() => change({ personId: "ben", keyId: "K1", description: "mine", metadata }), {
    code: "not_found",
    message: 'No agent key with id "K1"',
  });
  assert.throws(
    () =>
      change({
        personId: "ava",
        keyId: "K1",
        canRead: { folders: [], documents: [] },
        requireScope: true,
        metadata,
      }),
    { code: "invalid", message: /Choose at least one folder or file/ },
  );
});

Deno.test("roll agent key: the current value works until now + grace; an unknown grace is refused", () => {
  const roll = (grace: string) =>
    decideRollAgentKey({ personId: "ava", keyId: "K1", grace, value: VALUE, metadata }, { key });
  assert.deepEqual(roll("1h"), [{
    stream: "key-K1",
    events: [{
      type: "AgentKeyRolled",
      data: {
        key_id: "K1",
        key_hash: hashSecret(VALUE),
        last4: "cdef",
        old_expires_at: "2026-03-01T10:30:00.000Z",
      },
      metadata: meta,
    }],
    expectedVersion: "stream_exists",
  }]);
  const expiry = (grace: string) =>
    (roll(grace)[0]!.events[0]!.data as { old_expires_at: string }).old_expires_at;
  assert.equal(expiry("now"), "2026-03-01T09:30:00.000Z");
  assert.equal(expiry("24h"), "2026-03-02T09:30:00.000Z");
  assert.equal(expiry("7d"), "2026-03-08T09:30:00.000Z");
  assert.throws(() => roll("2h"), { code: "invalid", message: 'Grace "2h" is not one of: now, 1h, 24h, 7d' });
});

Deno.test("delete agent key: the person's key is deleted; another person's looks missing", () => {
  assert.deepEqual(decideDeleteAgentKey({ personId: "ava", keyId: "K1", metadata }, { key }), [{
    stream: "key-K1",
    events: [{ type: "AgentKeyDeleted", data: { key_id: "K1" }, metadata: meta }],
    expectedVersion: "stream_exists",
  }]);
  assert.throws(() => decideDeleteAgentKey({ personId: "ben", keyId: "K1", metadata }, { key }), {
    code: "not_found",
  });
});

Deno.test("personal keys: the 21st is refused; only the person's own key is deleted", () => {
  const value = "sgk_p_0123456789ABCDEFGHIJKLMNOPQabcd99";
  const create = (personalKeys: number) =>
    decideCreatePersonalKey({ keyId: "P1", value, personId: "ava", metadata }, { personalKeys });
  assert.deepEqual(create(MAX_PERSONAL_KEYS - 1), [{
    stream: "personal-key-P1",
    events: [{
      type: "PersonalKeyCreated",
      data: { key_id: "P1", person_id: "ava", key_hash: hashSecret(value), last4: "cd99" },
      metadata: meta,
    }],
    expectedVersion: "no_stream",
  }]);
  assert.throws(() => create(MAX_PERSONAL_KEYS), {
    code: "conflict",
    message: "You have 20 personal keys, the most one person may have: delete one before making another",
  });
  assert.deepEqual(
    decideDeletePersonalKey({ personId: "ava", keyId: "P1", metadata }, { personsKey: true })[0]!.events,
    [{ type: "PersonalKeyDeleted", data: { key_id: "P1" }, metadata: meta }],
  );
  assert.throws(
    () => decideDeletePersonalKey({ personId: "ava", keyId: "P9", metadata }, { personsKey: false }),
    {
      code: "not_found",
      message: 'No personal key with id "P9"',
    },
  );
});

Deno.test("login tokens: issued for 7 days unless told otherwise, with the value's hash only; revoked", () => {
  const value = "sgl_0123456789ABCDEFGHIJKLMNOPQzzzzzz";
  assert.deepEqual(decideIssueLoginToken({ tokenId: "T1", value, personId: "ava", metadata }), [{
    stream: "login-T1",
    events: [{
      type: "LoginTokenIssued",
      data: {
        token_id: "T1",
        person_id: "ava",
        token_hash: hashSecret(value),
        expires_at: "2026-03-08T09:30:00.000Z",
      },
      metadata: meta,
    }],
    expectedVersion: "no_stream",
  }]);
  const hour = decideIssueLoginToken({
    tokenId: "T2",
    value,
    personId: "ava",
    lifetimeMs: 3_600_000,
    metadata,
  });
  assert.equal((hour[0]!.events[0]!.data as { expires_at: string }).expires_at, "2026-03-01T10:30:00.000Z");
  assert.deepEqual(decideRevokeLoginToken({ tokenId: "T1", metadata }), [{
    stream: "login-T1",
    events: [{ type: "LoginTokenRevoked", data: { token_id: "T1" }, metadata: meta }],
    expectedVersion: "stream_exists",
  }]);
});

Deno.test("take-backs: a key past the cap or a second holder of a name is deleted; a change goes back whole", () => {
  assert.deepEqual(takeBackAgentKey("K-new", metadata).events, [
    { type: "AgentKeyDeleted", data: { key_id: "K-new" }, metadata: meta },
  ]);
  assert.deepEqual(takeBackPersonalKey("P1", metadata).events, [
    { type: "PersonalKeyDeleted", data: { key_id: "P1" }, metadata: meta },
  ]);
  assert.deepEqual(
    takeBackKeyChange(key, { description: "new", can_read: { folders: [], documents: [] } }, metadata),
    {
      stream: "key-K1",
      events: [{
        type: "AgentKeyChanged",
        data: {
          key_id: "K1",
          name: "research-bot",
          description: "old",
          can_read: { folders: ["F1"], documents: [] },
        },
        metadata: meta,
      }],
      expectedVersion: "stream_exists",
    },
  );
  assert.deepEqual(takeBackKeyChange(key, {}, metadata).events[0]!.data, {
    key_id: "K1",
    name: "research-bot",
  });
});

/**
 * What never leaves the install in a person's audit export: the hash of every
 * credential they were given — password, invitation and reset links, console
 * sign-ins, personal keys, agent keys and their rolls. Each record that held
 * one says which field it left out, and the export still verifies.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { exportAudit } from "../../src/audit/export.ts";
import { ensureSigningKey } from "../../src/audit/signing_key.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createAgentKey, createPersonalKey, issueLoginToken, rollAgentKey } from "../../src/domain/keys.ts";
import { addPerson, issuePasswordLink, setPasswordHash } from "../../src/domain/people.ts";
import { tempApp } from "../helpers/temp.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("an audit export holds no credential's hash: password, links, sign-ins, personal and agent keys, rolls", async () => {
  await using t = await tempApp();
  const app = t.app;
  await ensureSigningKey(app.dataDir);
  const ava = await addPerson(app, { name: "Ava Bennett", email: "ava@example.com" });
  const actor = `person-${ava.person_id}`;
  await issuePasswordLink(app, { personId: ava.person_id, purpose: "invite" }, "cli");
  await setPasswordHash(app, ava.person_id, await hashPassword("a long passphrase of my own"));
  await issuePasswordLink(app, { personId: ava.person_id, purpose: "reset" }, "cli");
  await issueLoginToken(app, { personId: ava.person_id }, actor);
  await createPersonalKey(app, { personId: ava.person_id }, actor);
  const { key } = await createAgentKey(app, {
    personId: ava.person_id,
    name: "reader",
    description: "Reads.",
    canRead: { folders: [], documents: [] },
  }, actor);
  await rollAgentKey(app, { personId: ava.person_id, keyId: key.key_id, grace: "1h" }, actor);
  const out = join(t.dir, "ava.jsonl");
  await exportAudit({
    store: app.store,
    projectionsDb: app.db,
    dataDir: app.dataDir,
    personId: ava.person_id,
    format: "jsonl",
    out,
  });
  const text = await Deno.readTextFile(out);
  const records: Json[] = text.trimEnd().split("\n").slice(0, -1).map((line) => JSON.parse(line));
  const secrets = app.store.readFrom(0, 1000).flatMap((event) => {
    const data = event.data as Record<string, unknown>;
    return ["password_hash", "token_hash", "key_hash"].flatMap((field) =>
      typeof data[field] === "string" ? [{ type: event.type, field, hash: data[field] as string }] : []
    );
  });
  assert.deepEqual(secrets.map((s) => s.type), [
    "PasswordLinkIssued",
    "PersonPasswordSet",
    "PasswordLinkIssued",
    "LoginTokenIssued",
    "PersonalKeyCreated",
    "AgentKeyCreated",
    "AgentKeyRolled",
  ]);
  for (const secret of secrets) {
    assert.ok(!text.includes(secret.hash), `${secret.type}'s ${secret.field} is exported`);
    const record = records.find((r) => r.type === secret.type && r.data[secret.field] === "[redacted]");
    assert.ok(record, `${secret.type} is exported with its ${secret.field} left out`);
    assert.ok(record.redacted.includes(secret.field));
  }
  const verified = await verifyExport(out);
  assert.ok(verified.ok, JSON.stringify(verified));
});

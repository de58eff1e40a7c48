/**
 * Commands on people: add a person, set their password, make them an
 * administrator, and the one-time links that set a password (an invitation,
 * or a reset) that administrators hand out.
 *
 * @module
 */
import {
  administratorCount,
  anyPerson,
  getPerson,
  getPersonByEmail,
  isAdministrator,
  passwordLinkByHash,
  passwordLinksOf,
  type Person,
} from "../../projections/catalogue.ts";
import { ConcurrencyError } from "../../events/store.ts";
import type { SergoApp } from "../app.ts";
import { hashSecret } from "./key_format.ts";
import { DomainError } from "./errors.ts";
import { newId, randomId } from "./ids.ts";
import { checkEmail, checkPersonName } from "./rules.ts";

/**
 * Adds a person; their email must be new. The check before the append is the
 * projection's, so two additions of one email at the same moment (two
 * requests, or the CLI beside `serve`) can both be appended: the first in log
 * order is the person, the catalogue leaves the later one out, and its
 * command fails here with the same sentence.
 */
export async function addPerson(
  app: SergoApp,
  input: { name: string; email: string },
  actor = "cli",
): Promise<Person> {
  const name = checkPersonName(input.name);
  const email = checkEmail(input.email);
  if (getPersonByEmail(app.db, email)) {
    throw new DomainError("conflict", `A person with email "${email}" already exists`);
  }
  const personId = newId();
  await app.append(`person-${personId}`, [{
    type: "PersonAdded",
    data: { person_id: personId, name, email },
    metadata: app.meta(actor),
  }], { expectedVersion: "no_stream" });
  const person = getPerson(app.db, personId);
  if (!person) throw new DomainError("conflict", `A person with email "${email}" already exists`);
  return person;
}

/** Finds a person by email or fails with a clear sentence. */
export function requirePerson(app: SergoApp, email: string): Person {
  const person = getPersonByEmail(app.db, email);
  if (!person) throw new DomainError("not_found", `No person with email "${email}"`);
  return person;
}

/** Records a person's password hash (the hash is made by the caller). */
export async function setPasswordHash(
  app: SergoApp,
  personId: string,
  passwordHash: string,
  actor = "cli",
): Promise<void> {
  await app.append(`person-${personId}`, [{
    type: "PersonPasswordSet",
    data: { person_id: personId, password_hash: passwordHash },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
}

/** How long an invitation link works. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600_000;
/** How long a password reset link works. */
export const RESET_LIFETIME_MS = 24 * 3600_000;

/** Makes a person an administrator. */
export async function makeAdministrator(app: SergoApp, personId: string, actor = "cli"): Promise<void> {
  await app.append(`person-${personId}`, [{
    type: "PersonMadeAdministrator",
    data: { person_id: personId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
}

/**
 * Takes a person's administrator rights away; their console sessions end with
 * it. Refused for the last administrator, so someone can always add people.
 */
export async function removeAdministrator(app: SergoApp, personId: string, actor = "cli"): Promise<void> {
  if (!isAdministrator(app.db, personId)) return;
  if (administratorCount(app.db) <= 1) {
    throw new DomainError(
      "conflict",
      "Cannot remove the last administrator's rights: make another person an administrator first",
    );
  }
  await app.append(`person-${personId}`, [{
    type: "PersonAdministratorRemoved",
    data: { person_id: personId },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
}

/**
 * The person id of the first administrator the setup page makes. Fixed, so
 * that the stream it is written to is too: replicas on one database each
 * print a setup address of their own, and two used at once both append to
 * `person-000000000001` as a new stream; the log takes one, the other's append
 * fails its version check. (Random ids are 12 base62 characters; this one is
 * taken by chance once in 62^12.)
 */
export const FIRST_PERSON_ID = "000000000001";

/**
 * The first person, from the setup page: added with their password hash and
 * made an administrator in one write. Refused once anyone exists, and when
 * another setup (another replica's address) made the first person first.
 */
export async function addFirstAdministrator(
  app: SergoApp,
  input: { name: string; email: string; passwordHash: string },
): Promise<Person> {
  const name = checkPersonName(input.name);
  const email = checkEmail(input.email);
  const already = new DomainError("conflict", "Sergo already has its first person");
  if (anyPerson(app.db)) throw already;
  const personId = FIRST_PERSON_ID;
  const actor = `person-${personId}`;
  await app.append(`person-${personId}`, [
    { type: "PersonAdded", data: { person_id: personId, name, email }, metadata: app.meta(actor) },
    {
      type: "PersonPasswordSet",
      data: { person_id: personId, password_hash: input.passwordHash },
      metadata: app.meta(actor),
    },
    { type: "PersonMadeAdministrator", data: { person_id: personId }, metadata: app.meta(actor) },
  ], { expectedVersion: "no_stream" }).catch((error) => {
    throw error instanceof ConcurrencyError ? already : error;
  });
  const person = getPerson(app.db, personId);
  if (!person) throw new DomainError("conflict", `A person with email "${email}" already exists`);
  return person;
}

/**
 * Makes a one-time link token that sets a person's password: `invite` for a
 * new person, `reset` for a forgotten password. Older open links of the person
 * stop working. Only the token's sha256 is recorded; the token is returned once.
 */
export async function issuePasswordLink(
  app: SergoApp,
  input: { personId: string; purpose: "invite" | "reset" },
  actor: string,
): Promise<{ token: string; expiresAt: string }> {
  const token = randomId(43);
  const linkId = newId();
  const lifetime = input.purpose === "invite" ? INVITATION_LIFETIME_MS : RESET_LIFETIME_MS;
  const expiresAt = new Date(app.now().getTime() + lifetime).toISOString();
  const closed = passwordLinksOf(app.db, input.personId).map((link) => ({
    type: "PasswordLinkUsed" as const,
    data: { link_id: link.link_id },
    metadata: app.meta(actor),
  }));
  await app.append(`person-${input.personId}`, [...closed, {
    type: "PasswordLinkIssued",
    data: {
      link_id: linkId,
      person_id: input.personId,
      token_hash: hashSecret(token),
      purpose: input.purpose,
      expires_at: expiresAt,
    },
    metadata: app.meta(actor),
  }], { expectedVersion: "stream_exists" });
  return { token, expiresAt };
}

/** The person an open, unexpired password link token belongs to, with the link; null otherwise. */
export function findPasswordLink(
  app: SergoApp,
  token: string,
): { person: Person; linkId: string; purpose: "invite" | "reset" } | null {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return null;
  const link = passwordLinkByHash(app.db, hashSecret(token));
  if (!link || Date.parse(link.expires_at) <= app.now().getTime()) return null;
  const person = getPerson(app.db, link.person_id);
  return person ? { person, linkId: link.link_id, purpose: link.purpose } : null;
}

/** Sets the password through a link, which then stops working. */
export async function usePasswordLink(
  app: SergoApp,
  input: { personId: string; linkId: string; passwordHash: string },
): Promise<void> {
  const actor = `person-${input.personId}`;
  await app.append(`person-${input.personId}`, [
    {
      type: "PersonPasswordSet",
      data: { person_id: input.personId, password_hash: input.passwordHash },
      metadata: app.meta(actor),
    },
    { type: "PasswordLinkUsed", data: { link_id: input.linkId }, metadata: app.meta(actor) },
  ], { expectedVersion: "stream_exists" });
}

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
import { appendDecided, commandMetadata } from "./_append.ts";
import { DomainError } from "./errors.ts";
import { newId, randomId } from "./ids.ts";
import { oneAtATimeIn } from "./locks.ts";
import { hashSecret } from "./key_format.ts";
import {
  decideAddPerson,
  decideFirstAdministrator,
  decideMakeAdministrator,
  decidePasswordLink,
  decideRemoveAdministrator,
  decideSetPassword,
  decideUsePasswordLink,
  emailTaken,
  FIRST_PERSON_ID,
  firstPersonExists,
} from "./people_decide.ts";

export { FIRST_PERSON_ID, INVITATION_LIFETIME_MS, RESET_LIFETIME_MS } from "./people_decide.ts";

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
  return await oneAtATimeIn(app, "people", async () => {
    const personId = newId();
    const email = input.email.trim();
    const appends = decideAddPerson({ personId, ...input, metadata: commandMetadata(app, actor) }, {
      emailTaken: getPersonByEmail(app.db, email) !== undefined,
    });
    await appendDecided(app, appends);
    const person = getPerson(app.db, personId);
    if (!person) throw new DomainError("conflict", `A person with email "${email}" already exists`);
    return person;
  });
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
  await appendDecided(
    app,
    decideSetPassword({ personId, passwordHash, metadata: commandMetadata(app, actor) }),
  );
}

/** Makes a person an administrator. */
export async function makeAdministrator(app: SergoApp, personId: string, actor = "cli"): Promise<void> {
  await appendDecided(app, decideMakeAdministrator({ personId, metadata: commandMetadata(app, actor) }));
}

/**
 * Takes a person's administrator rights away; their console sessions end with
 * it. Refused for the last administrator, so someone can always add people.
 */
export async function removeAdministrator(app: SergoApp, personId: string, actor = "cli"): Promise<void> {
  await appendDecided(
    app,
    decideRemoveAdministrator({ personId, metadata: commandMetadata(app, actor) }, {
      isAdministrator: isAdministrator(app.db, personId),
      administrators: administratorCount(app.db),
    }),
  );
}

/**
 * The first person, from the setup page: added with their password hash and
 * made an administrator in one write. Refused once anyone exists, and when
 * another setup (another replica's address) made the first person first.
 */
export async function addFirstAdministrator(
  app: SergoApp,
  input: { name: string; email: string; passwordHash: string },
): Promise<Person> {
  const appends = decideFirstAdministrator({ ...input, metadata: { now: app.now() } }, {
    anyPerson: anyPerson(app.db),
  });
  await appendDecided(app, appends).catch((error) => {
    throw error instanceof ConcurrencyError ? firstPersonExists() : error;
  });
  const person = getPerson(app.db, FIRST_PERSON_ID);
  if (!person) throw emailTaken(input.email.trim());
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
  const appends = decidePasswordLink({
    ...input,
    linkId: newId(),
    token,
    metadata: commandMetadata(app, actor),
  }, {
    openLinkIds: passwordLinksOf(app.db, input.personId).map((link) => link.link_id),
  });
  await appendDecided(app, appends);
  const issued = appends[0]!.events.at(-1)!.data as { expires_at: string };
  return { token, expiresAt: issued.expires_at };
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
  await appendDecided(app, decideUsePasswordLink({ ...input, metadata: { now: app.now() } }));
}

/**
 * The rules about people as pure deciders: add a person, the first
 * administrator, passwords, administrator rights, and the one-time links that
 * set a password. Each takes the command (with the ids and tokens its caller
 * made) and what its caller loaded, and returns the appends or refuses with
 * one sentence; nothing here reads a database or a clock.
 *
 * @module
 */
import type { Append, CommandMetadata } from "./decision.ts";
import { eventMetadata } from "./decision.ts";
import { DomainError } from "./errors.ts";
import { hashSecret } from "./key_format.ts";
import { checkEmail, checkPersonName } from "./rules.ts";

/** How long an invitation link works. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600_000;
/** How long a password reset link works. */
export const RESET_LIFETIME_MS = 24 * 3600_000;

/**
 * The person id of the first administrator the setup page makes. Fixed, so
 * that the stream it is written to is too: replicas on one database each
 * print a setup address of their own, and two used at once both append to
 * `person-000000000001` as a new stream; the log takes one, the other's append
 * fails its version check. (Random ids are 12 base62 characters; this one is
 * taken by chance once in 62^12.)
 */
export const FIRST_PERSON_ID = "000000000001";

/** The refusal of an email address another person has. */
export function emailTaken(email: string): DomainError {
  return new DomainError("conflict", `A person with email "${email}" already exists`);
}

/** Add person `personId`. */
export interface AddPerson {
  personId: string;
  name: string;
  email: string;
  metadata: CommandMetadata;
}

/** Decides a person's addition: a name, an email address, and one no one has. */
export function decideAddPerson(command: AddPerson, state: { emailTaken: boolean }): Append[] {
  const name = checkPersonName(command.name);
  const email = checkEmail(command.email);
  if (state.emailTaken) throw emailTaken(email);
  return [{
    stream: `person-${command.personId}`,
    events: [{
      type: "PersonAdded",
      data: { person_id: command.personId, name, email },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "no_stream",
  }];
}

/** The first person, from the setup page, with the hash of their password. */
export interface AddFirstAdministrator {
  name: string;
  email: string;
  passwordHash: string;
  metadata: Omit<CommandMetadata, "actor">;
}

/** The refusal of a second first person. */
export function firstPersonExists(): DomainError {
  return new DomainError("conflict", "Sergo already has its first person");
}

/**
 * Decides the first person: added with their password hash and made an
 * administrator in one write, as {@linkcode FIRST_PERSON_ID}, acting for
 * themselves. Refused once anyone exists.
 */
export function decideFirstAdministrator(
  command: AddFirstAdministrator,
  state: { anyPerson: boolean },
): Append[] {
  const name = checkPersonName(command.name);
  const email = checkEmail(command.email);
  if (state.anyPerson) throw firstPersonExists();
  const personId = FIRST_PERSON_ID;
  const metadata = () => eventMetadata({ now: command.metadata.now, actor: `person-${personId}` });
  return [{
    stream: `person-${personId}`,
    events: [
      { type: "PersonAdded", data: { person_id: personId, name, email }, metadata: metadata() },
      {
        type: "PersonPasswordSet",
        data: { person_id: personId, password_hash: command.passwordHash },
        metadata: metadata(),
      },
      { type: "PersonMadeAdministrator", data: { person_id: personId }, metadata: metadata() },
    ],
    expectedVersion: "no_stream",
  }];
}

/** Record the hash of person `personId`'s password (the hash is made by the caller). */
export interface SetPassword {
  personId: string;
  passwordHash: string;
  metadata: CommandMetadata;
}

/** Decides a password: its hash is recorded. */
export function decideSetPassword(command: SetPassword): Append[] {
  return [{
    stream: `person-${command.personId}`,
    events: [{
      type: "PersonPasswordSet",
      data: { person_id: command.personId, password_hash: command.passwordHash },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Make person `personId` an administrator. */
export function decideMakeAdministrator(command: { personId: string; metadata: CommandMetadata }): Append[] {
  return [{
    stream: `person-${command.personId}`,
    events: [{
      type: "PersonMadeAdministrator",
      data: { person_id: command.personId },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** What taking administrator rights away needs to know. */
export interface RemoveAdministratorState {
  /** Whether the person is an administrator now. */
  isAdministrator: boolean;
  /** How many administrators there are now. */
  administrators: number;
}

/**
 * Decides taking a person's administrator rights away: nothing for one who
 * has none; refused for the last administrator, so someone can always add
 * people.
 */
export function decideRemoveAdministrator(
  command: { personId: string; metadata: CommandMetadata },
  state: RemoveAdministratorState,
): Append[] {
  if (!state.isAdministrator) return [];
  if (state.administrators <= 1) {
    throw new DomainError(
      "conflict",
      "Cannot remove the last administrator's rights: make another person an administrator first",
    );
  }
  return [{
    stream: `person-${command.personId}`,
    events: [{
      type: "PersonAdministratorRemoved",
      data: { person_id: command.personId },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Issue link `linkId` with the one-time `token` (made by the caller) that sets person `personId`'s password. */
export interface IssuePasswordLink {
  personId: string;
  linkId: string;
  token: string;
  purpose: "invite" | "reset";
  metadata: CommandMetadata;
}

/**
 * Decides a password link: `invite` for a new person (7 days), `reset` for a
 * forgotten password (24 hours). The person's older open links stop working
 * in the same write. Only the token's sha256 is recorded.
 */
export function decidePasswordLink(
  command: IssuePasswordLink,
  state: { openLinkIds: readonly string[] },
): Append[] {
  const lifetime = command.purpose === "invite" ? INVITATION_LIFETIME_MS : RESET_LIFETIME_MS;
  const expiresAt = new Date(command.metadata.now.getTime() + lifetime).toISOString();
  const closed = state.openLinkIds.map((linkId) => ({
    type: "PasswordLinkUsed" as const,
    data: { link_id: linkId },
    metadata: eventMetadata(command.metadata),
  }));
  return [{
    stream: `person-${command.personId}`,
    events: [...closed, {
      type: "PasswordLinkIssued",
      data: {
        link_id: command.linkId,
        person_id: command.personId,
        token_hash: hashSecret(command.token),
        purpose: command.purpose,
        expires_at: expiresAt,
      },
      metadata: eventMetadata(command.metadata),
    }],
    expectedVersion: "stream_exists",
  }];
}

/** Set person `personId`'s password through link `linkId`, which then stops working. */
export interface UsePasswordLink {
  personId: string;
  linkId: string;
  passwordHash: string;
  metadata: Omit<CommandMetadata, "actor">;
}

/** Decides a password set through a link: the person acts for themselves, and the link is used up. */
export function decideUsePasswordLink(command: UsePasswordLink): Append[] {
  const metadata = () => eventMetadata({ now: command.metadata.now, actor: `person-${command.personId}` });
  return [{
    stream: `person-${command.personId}`,
    events: [
      {
        type: "PersonPasswordSet",
        data: { person_id: command.personId, password_hash: command.passwordHash },
        metadata: metadata(),
      },
      { type: "PasswordLinkUsed", data: { link_id: command.linkId }, metadata: metadata() },
    ],
    expectedVersion: "stream_exists",
  }];
}

/**
 * Commands on people: add a person, set their password.
 *
 * @module
 */
import { getPerson, getPersonByEmail, type Person } from "../../projections/catalogue.ts";
import type { SergoApp } from "../app.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";
import { checkEmail, checkPersonName } from "./rules.ts";

/** Adds a person; their email must be new (checked in the log itself, so two processes cannot both add it). */
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
  return getPerson(app.db, personId)!;
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

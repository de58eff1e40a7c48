/**
 * The API's account routes: who the caller is, and signing out.
 *
 * @module
 */
import { getPerson } from "../../projections/catalogue.ts";
import { DomainError } from "../domain/errors.ts";
import { revokeLoginToken } from "../domain/keys.ts";
import { json } from "../http/json.ts";
import { route } from "./route.ts";

/** `GET /api/me`: the caller. */
export const ME_ROUTE = route("GET", "/api/me", {
  summary: "The caller: who they are",
  handle: ({ caller }, s) => {
    const person = getPerson(s.app.db, caller.personId)!;
    return Promise.resolve(
      json({ id: person.person_id, name: person.name, email: person.email, via: caller.kind }),
    );
  },
});

/** `DELETE /api/session`: sign out. */
export const SIGN_OUT_ROUTE = route("DELETE", "/api/session", {
  summary: "Sign out: revoke the login token this request carries",
  handle: async ({ caller, actor }, s) => {
    if (caller.kind !== "login") {
      throw new DomainError("invalid", "Only a login token can sign out; this request used a personal key");
    }
    await revokeLoginToken(s.app, { tokenId: caller.credentialId }, actor);
    return new Response(null, { status: 204 });
  },
});

/**
 * The API's key routes: agent keys (masked, with what they can read, rolled
 * with a grace time) and personal keys.
 *
 * @module
 */
import { z } from "zod";
import { type AgentKey, listAgentKeys, oldValues, personalKeys } from "../../projections/key_scopes.ts";
import { maskKey } from "../domain/key_format.ts";
import {
  changeAgentKey,
  createAgentKey,
  createPersonalKey,
  deleteAgentKey,
  deletePersonalKey,
  requireAgentKey,
  rollAgentKey,
} from "../domain/keys.ts";
import { json } from "../http/json.ts";
import { type ApiDeps, type Route, route } from "./route.ts";

const canRead = z.object({
  folders: z.array(z.string()).max(1000).default([]),
  documents: z.array(z.string()).max(1000).default([]),
}).strict();
const keyBody = z.object({
  name: z.string(),
  description: z.string().default(""),
  can_read: canRead.default({ folders: [], documents: [] }),
}).strict();
const keyPatch = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  can_read: canRead.optional(),
}).strict();
const rollBody = z.object({ grace: z.enum(["now", "1h", "24h", "7d"]) }).strict();

/** An agent key as the API shows it: masked, with its old values still in their grace time. */
export function keyJson(services: ApiDeps, key: AgentKey): Record<string, unknown> {
  return {
    id: key.key_id,
    name: key.name,
    description: key.description,
    can_read: key.can_read,
    key: maskKey("agent", key.last4),
    created: key.created_at,
    old_values: oldValues(services.app.db, key.key_id, services.app.now()).map((v) => ({
      key: maskKey("agent", v.last4),
      works_until: v.expires_at,
    })),
  };
}

/** The agent key routes, then the personal key routes. */
export const KEY_ROUTES: Route[] = [
  route("GET", "/api/keys", {
    summary: "The caller's agent keys, masked",
    handle: ({ caller }, s) =>
      Promise.resolve(json({ keys: listAgentKeys(s.app.db, caller.personId).map((k) => keyJson(s, k)) })),
  }),
  route("POST", "/api/keys", {
    summary: "Create an agent key; its value is in this answer only",
    body: keyBody,
    handle: async ({ caller, body, actor }, s) => {
      const b = body as z.infer<typeof keyBody>;
      const { key, value } = await createAgentKey(s.app, {
        personId: caller.personId,
        name: b.name,
        description: b.description,
        canRead: b.can_read,
        requireScope: caller.kind === "login",
      }, actor);
      return json({ ...keyJson(s, key), value }, 201);
    },
  }),
  route("PATCH", "/api/keys/:id", {
    summary: "Change an agent key's name, description or what it can read",
    body: keyPatch,
    handle: async ({ caller, params, body, actor }, s) => {
      const b = body as z.infer<typeof keyPatch>;
      const key = await changeAgentKey(s.app, {
        personId: caller.personId,
        keyId: params.id!,
        name: b.name,
        description: b.description,
        canRead: b.can_read,
        requireScope: caller.kind === "login",
      }, actor);
      return json(keyJson(s, key));
    },
  }),
  route("POST", "/api/keys/:id/roll", {
    summary: "Roll an agent key: a new value; the old one works for the grace time",
    body: rollBody,
    handle: async ({ caller, params, body, actor }, s) => {
      const b = body as z.infer<typeof rollBody>;
      const rolled = await rollAgentKey(s.app, {
        personId: caller.personId,
        keyId: params.id!,
        grace: b.grace,
      }, actor);
      return json({
        ...keyJson(s, rolled.key),
        value: rolled.value,
        old_value_works_until: rolled.oldExpiresAt,
      });
    },
  }),
  route("DELETE", "/api/keys/:id", {
    summary: "Delete an agent key: every value stops at once",
    handle: async ({ caller, params, actor }, s) => {
      requireAgentKey(s.app.db, caller.personId, params.id!);
      await deleteAgentKey(s.app, { personId: caller.personId, keyId: params.id! }, actor);
      return new Response(null, { status: 204 });
    },
  }),
  route("GET", "/api/personal-keys", {
    summary: "The caller's personal keys, masked",
    handle: ({ caller }, s) =>
      Promise.resolve(json({
        keys: personalKeys(s.app.db, caller.personId).map((k) => ({
          id: k.key_id,
          key: maskKey("personal", k.last4),
          created: k.created_at,
        })),
      })),
  }),
  route("POST", "/api/personal-keys", {
    summary: "Create a personal key; its value is in this answer only",
    handle: async ({ caller, actor }, s) => {
      const { keyId, value } = await createPersonalKey(s.app, { personId: caller.personId }, actor);
      return json({ id: keyId, value }, 201);
    },
  }),
  route("DELETE", "/api/personal-keys/:id", {
    summary: "Delete a personal key",
    handle: async ({ caller, params, actor }, s) => {
      await deletePersonalKey(s.app, { personId: caller.personId, keyId: params.id! }, actor);
      return new Response(null, { status: 204 });
    },
  }),
];

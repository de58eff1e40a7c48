/**
 * Planted bugs in the OAuth grant rules (`src/domain/grants.ts`), which the
 * given/when/then tests of the decider catch without a server.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const GRANTS = "test/domain/grants_test.ts";

/** The grant rules' planted bugs. */
export const MUTATIONS_OAUTH: Mutation[] = [
  {
    name: "grants: a person revokes another person's grant from the key's page",
    file: "src/domain/grants.ts",
    from:
      'if (!grant || grant.person_id !== command.by.personId) return refused("not_found", "No such app");',
    to: 'if (!grant) return refused("not_found", "No such app");',
    tests: [GRANTS],
  },
  {
    name: "grants: an app revokes another app's grant with its token (RFC 7009)",
    file: "src/domain/grants.ts",
    from: "if (!grant || grant.client_id !== (clientId ?? grant.client_id)) {",
    to: "if (!grant) {",
    tests: [GRANTS],
  },
  {
    name: "grants: an ended grant ended a second time",
    file: "src/domain/grants.ts",
    from: "events: grant.revoked !== null ? [] : [{",
    to: "events: [{",
    tests: [GRANTS],
  },
  {
    name: "grants: an authorization code works for a minute per second of codeSeconds",
    file: "src/domain/grants.ts",
    from: "code_expires_at: new Date(now.getTime() + command.codeSeconds * 1000).toISOString(),",
    to: "code_expires_at: new Date(now.getTime() + command.codeSeconds * 60_000).toISOString(),",
    tests: [GRANTS],
  },
  {
    name: "grants: a confidential client registered",
    file: "src/domain/grants.ts",
    from: 'if (method !== "none") {',
    to: "if (false) {",
    tests: [GRANTS],
  },
  {
    name: 'grants: an app registered without a name is called "An app" whatever its redirect URIs',
    file: "src/domain/grants.ts",
    from: 'const clientName = (rawName || hosts[0] || "An app").slice(0, 200);',
    to: 'const clientName = (rawName || "An app").slice(0, 200);',
    tests: [GRANTS],
  },
];

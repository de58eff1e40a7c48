/**
 * The OAuth grant rules as specifications: given a grant (as the projection
 * holds it), when a command at a time, then these events at this stream
 * version, or this refusal. No database, no clock: the time is passed in.
 */
import assert from "node:assert/strict";
import type { OAuthGrant } from "../../projections/oauth_grants.ts";
import {
  decide,
  type ExchangeCode,
  type GrantState,
  type NewTokens,
  NO_GRANT,
  type RefreshTokens,
  type RegisterClient,
  s256,
} from "../../src/domain/grants.ts";

const NOW = new Date("2026-03-01T12:00:00.000Z");
const VERIFIER = "v".repeat(43);
const A = "a".repeat(64);
const R = "b".repeat(64);
const C = "c".repeat(64);
const TOKENS: NewTokens = { accessHash: A, refreshHash: R, accessSeconds: 3600, refreshSeconds: 86400 };
const APP = "https://app.example/client.json";
const MCP = "https://sergo.example/mcp";

/** A grant made a few seconds before NOW whose code has not been exchanged. */
function granted(changes: Partial<OAuthGrant> = {}): OAuthGrant {
  return {
    grant_id: "g1",
    key_id: "k1",
    person_id: "p1",
    client_id: APP,
    client_name: "Checker",
    metadata_url: APP,
    redirect_uri: "https://app.example/back",
    resource: MCP,
    code_challenge: s256(VERIFIER),
    code_expires_at: "2026-03-01T12:00:30.000Z",
    code_used: false,
    access_expires_at: null,
    refresh_expires_at: null,
    revoked: null,
    created_at: "2026-03-01T11:59:50.000Z",
    last_used_at: null,
    version: 1,
    ...changes,
  };
}

/** The same grant after its code was exchanged (version 2, tokens valid for a day). */
function exchanged(changes: Partial<OAuthGrant> = {}): OAuthGrant {
  return granted({
    code_used: true,
    access_expires_at: "2026-03-01T13:00:00.000Z",
    refresh_expires_at: "2026-03-02T12:00:00.000Z",
    version: 2,
    ...changes,
  });
}

function exchange(changes: Partial<ExchangeCode> = {}): ExchangeCode {
  return {
    type: "ExchangeCode",
    clientId: APP,
    redirectUri: "https://app.example/back",
    codeVerifier: VERIFIER,
    resources: [],
    tokens: TOKENS,
    ...changes,
  };
}

function refresh(changes: Partial<RefreshTokens> = {}): RefreshTokens {
  return { type: "RefreshTokens", clientId: APP, resources: [], tokens: TOKENS, ...changes };
}

function register(metadata: Record<string, unknown>): RegisterClient {
  return { type: "RegisterClient", clientId: "sgc_x", metadata };
}

const live = (grant: OAuthGrant): GrantState => ({ grant, keyExists: true });

function assertRefused(
  decision: ReturnType<typeof decide>,
  error: string,
  description: string,
  events: unknown[] = [],
): void {
  assert.equal(decision.ok, false, "refused");
  if (decision.ok) return;
  assert.equal(decision.error, error);
  assert.equal(decision.description, description);
  assert.deepEqual(decision.events, events);
}

const REVOKED = (reason: string) => [{ type: "OAuthGrantRevoked", data: { grant_id: "g1", reason } }];

// Consent: the grant and its code.

Deno.test("when a person allows an app, then a new grant stream holds its code, working for codeSeconds", () => {
  const decision = decide(
    {
      type: "GrantAccess",
      grantId: "g1",
      keyId: "k1",
      personId: "p1",
      client: { client_id: APP, client_name: "Checker", metadata_url: APP },
      redirectUri: "https://app.example/back",
      resource: MCP,
      codeChallenge: s256(VERIFIER),
      codeHash: C,
      codeSeconds: 60,
    },
    NO_GRANT,
    NOW,
  );
  assert.deepEqual(decision, {
    ok: true,
    stream: "grant-g1",
    expectedVersion: "no_stream",
    events: [{
      type: "OAuthGranted",
      data: {
        grant_id: "g1",
        key_id: "k1",
        person_id: "p1",
        client_id: APP,
        client_name: "Checker",
        metadata_url: APP,
        redirect_uri: "https://app.example/back",
        resource: MCP,
        code_hash: C,
        code_challenge: s256(VERIFIER),
        code_expires_at: "2026-03-01T12:01:00.000Z",
      },
    }],
  });
});

// Code exchange.

Deno.test("given a fresh grant, when its app exchanges the code with the right verifier, then tokens at the grant's version", () => {
  const decision = decide(exchange({ resources: [MCP] }), live(granted()), NOW);
  assert.deepEqual(decision, {
    ok: true,
    stream: "grant-g1",
    expectedVersion: 1,
    events: [{
      type: "OAuthTokensIssued",
      data: {
        grant_id: "g1",
        grant_type: "authorization_code",
        access_hash: A,
        access_expires_at: "2026-03-01T13:00:00.000Z",
        refresh_hash: R,
        refresh_expires_at: "2026-03-02T12:00:00.000Z",
      },
    }],
  });
});

Deno.test("given no grant for the code, or another app's, when exchanged, then invalid_grant and nothing appended", () => {
  const unknown = "The code is unknown, or was given to another app.";
  assertRefused(decide(exchange(), { grant: null, keyExists: true }, NOW), "invalid_grant", unknown);
  assertRefused(decide(exchange({ clientId: "sgc_other" }), live(granted()), NOW), "invalid_grant", unknown);
});

Deno.test("given a code exchanged already, when exchanged again, then the grant is revoked for code reuse", () => {
  const message = "The code was used already; the app's access is revoked.";
  const decision = decide(exchange(), live(exchanged()), NOW);
  assertRefused(decision, "invalid_grant", message, REVOKED("code_reused"));
  assert.equal(decision.stream, "grant-g1");
  // A grant that ended already is not ended twice.
  assertRefused(decide(exchange(), live(exchanged({ revoked: "revoked" })), NOW), "invalid_grant", message);
  // A revoked grant's unused code counts as reuse too, without a second end.
  assertRefused(decide(exchange(), live(granted({ revoked: "revoked" })), NOW), "invalid_grant", message);
});

Deno.test("given a code past its time, when exchanged at that very moment, then it has expired", () => {
  const grant = granted({ code_expires_at: NOW.toISOString() });
  assertRefused(
    decide(exchange(), live(grant), NOW),
    "invalid_grant",
    "The code has expired: sign in again.",
  );
  const before = new Date(NOW.getTime() - 1);
  assert.equal(decide(exchange(), live(grant), before).ok, true);
});

Deno.test("given a grant, when exchanged with another redirect_uri, then invalid_grant", () => {
  assertRefused(
    decide(exchange({ redirectUri: "https://app.example/elsewhere" }), live(granted()), NOW),
    "invalid_grant",
    "The redirect_uri differs from the authorization request's.",
  );
});

Deno.test("given a grant, when exchanged with a wrong or malformed verifier, then invalid_grant", () => {
  const message = "The code_verifier does not match the code_challenge.";
  assertRefused(
    decide(exchange({ codeVerifier: "w".repeat(43) }), live(granted()), NOW),
    "invalid_grant",
    message,
  );
  // The challenge of a too-short verifier matches, but the verifier is not one (RFC 7636: 43 to 128 characters).
  const short = "v".repeat(42);
  assertRefused(
    decide(exchange({ codeVerifier: short }), live(granted({ code_challenge: s256(short) })), NOW),
    "invalid_grant",
    message,
  );
});

Deno.test("given a grant for /mcp, when exchanged for another resource or two, then invalid_target", () => {
  const message = `This grant is for ${MCP} only.`;
  const sse = "https://sergo.example/sse";
  assertRefused(decide(exchange({ resources: [sse] }), live(granted()), NOW), "invalid_target", message);
  assertRefused(decide(exchange({ resources: [MCP, MCP] }), live(granted()), NOW), "invalid_target", message);
});

Deno.test("given a grant whose key was deleted, when its code is exchanged, then invalid_grant", () => {
  assertRefused(
    decide(exchange(), { grant: granted(), keyExists: false }, NOW),
    "invalid_grant",
    "The agent key this app was given was deleted.",
  );
});

// Refresh rotation.

Deno.test("given exchanged tokens, when the app refreshes, then a new pair at the grant's version", () => {
  const decision = decide(refresh(), live(exchanged()), NOW);
  assert.equal(decision.ok, true);
  assert.equal(decision.expectedVersion, 2);
  assert.deepEqual(decision.events, [{
    type: "OAuthTokensIssued",
    data: {
      grant_id: "g1",
      grant_type: "refresh_token",
      access_hash: A,
      access_expires_at: "2026-03-01T13:00:00.000Z",
      refresh_hash: R,
      refresh_expires_at: "2026-03-02T12:00:00.000Z",
    },
  }]);
});

Deno.test("given a refresh token rotated away, when its app uses it again, then the grant is revoked for reuse", () => {
  const spent: GrantState = { grant: exchanged(), spent: true, keyExists: true };
  assertRefused(
    decide(refresh(), spent, NOW),
    "invalid_grant",
    "The refresh token was used already; the app's access is revoked.",
    REVOKED("refresh_reused"),
  );
  // Another app holding the spent token learns nothing and ends nothing.
  assertRefused(
    decide(refresh({ clientId: "sgc_other" }), spent, NOW),
    "invalid_grant",
    "The refresh token is unknown.",
  );
});

Deno.test("given no grant for the refresh token, when used, then it is unknown", () => {
  assertRefused(decide(refresh(), { grant: null }, NOW), "invalid_grant", "The refresh token is unknown.");
  assertRefused(
    decide(refresh(), { grant: null, spent: true }, NOW),
    "invalid_grant",
    "The refresh token is unknown.",
  );
});

Deno.test("given another app's grant, when its refresh token is used, then invalid_grant and nothing ends", () => {
  assertRefused(
    decide(refresh({ clientId: "sgc_other" }), live(exchanged()), NOW),
    "invalid_grant",
    "The refresh token was given to another app.",
  );
});

Deno.test("given a revoked grant or a deleted key, when refreshed, then the access was revoked", () => {
  const message = "The app's access was revoked: sign in again.";
  assertRefused(decide(refresh(), live(exchanged({ revoked: "revoked" })), NOW), "invalid_grant", message);
  assertRefused(decide(refresh(), { grant: exchanged(), keyExists: false }, NOW), "invalid_grant", message);
});

Deno.test("given a refresh token past its time, when used at that very moment, then it has expired", () => {
  const grant = exchanged({ refresh_expires_at: NOW.toISOString() });
  const message = "The refresh token has expired: sign in again.";
  assertRefused(decide(refresh(), live(grant), NOW), "invalid_grant", message);
  assert.equal(decide(refresh(), live(grant), new Date(NOW.getTime() - 1)).ok, true);
});

Deno.test("given a grant for /mcp, when refreshed for another resource, then invalid_target", () => {
  assertRefused(
    decide(refresh({ resources: ["https://sergo.example/sse"] }), live(exchanged()), NOW),
    "invalid_target",
    `This grant is for ${MCP} only.`,
  );
});

// Revocation.

Deno.test("given a person's grant, when they revoke it on the key's page, then it ends; another person's is not found", () => {
  const mine = decide({ type: "RevokeGrant", by: { personId: "p1" } }, live(exchanged()), NOW);
  assert.deepEqual(mine, {
    ok: true,
    stream: "grant-g1",
    expectedVersion: "any",
    events: REVOKED("revoked"),
  });
  assertRefused(
    decide({ type: "RevokeGrant", by: { personId: "p2" } }, live(exchanged()), NOW),
    "not_found",
    "No such app",
  );
  assertRefused(
    decide({ type: "RevokeGrant", by: { personId: "p1" } }, NO_GRANT, NOW),
    "not_found",
    "No such app",
  );
  const again = decide(
    { type: "RevokeGrant", by: { personId: "p1" } },
    live(exchanged({ revoked: "revoked" })),
    NOW,
  );
  assert.deepEqual(again.events, [], "a revoked grant is not revoked twice");
});

Deno.test("given a grant, when an app revokes one of its tokens (RFC 7009), then it ends only for its own app", () => {
  const own = decide({ type: "RevokeGrant", by: { clientId: APP } }, live(exchanged()), NOW);
  assert.deepEqual(own.events, REVOKED("revoked"));
  const unnamed = decide({ type: "RevokeGrant", by: { clientId: null } }, live(exchanged()), NOW);
  assert.deepEqual(unnamed.events, REVOKED("revoked"), "no client_id: the token's own app");
  const other = decide({ type: "RevokeGrant", by: { clientId: "sgc_other" } }, live(exchanged()), NOW);
  assert.deepEqual([other.ok, other.events], [true, []], "answered as done, nothing ended");
  const unknown = decide({ type: "RevokeGrant", by: { clientId: APP } }, NO_GRANT, NOW);
  assert.deepEqual([unknown.ok, unknown.events], [true, []]);
});

// Registration.

Deno.test("when an app registers with https and app-scheme redirect URIs, then the client is recorded under its name", () => {
  const decision = decide(
    register({ client_name: "  Cursor  ", redirect_uris: ["cursor://anysphere/cb", "https://c.example/cb"] }),
    NO_GRANT,
    NOW,
  );
  assert.deepEqual(decision, {
    ok: true,
    stream: "client-sgc_x",
    expectedVersion: "no_stream",
    events: [{
      type: "OAuthClientRegistered",
      data: {
        client_id: "sgc_x",
        client_name: "Cursor",
        redirect_uris: ["cursor://anysphere/cb", "https://c.example/cb"],
      },
    }],
  });
});

Deno.test("when an app registers without a name, then it is named by its first redirect URI's host", () => {
  const decision = decide(register({ redirect_uris: ["http://127.0.0.1:3000/cb"] }), NO_GRANT, NOW);
  assert.equal(
    decision.events[0]?.type === "OAuthClientRegistered" && decision.events[0].data.client_name,
    "127.0.0.1:3000",
  );
});

Deno.test("when an app registers bad redirect URIs, then invalid_redirect_uri saying which and why", () => {
  const refusedWith = (metadata: Record<string, unknown>, description: string) =>
    assertRefused(decide(register(metadata), NO_GRANT, NOW), "invalid_redirect_uri", description);
  refusedWith({}, "Give redirect_uris: 1 to 10 URLs.");
  refusedWith({ redirect_uris: [] }, "Give redirect_uris: 1 to 10 URLs.");
  refusedWith({ redirect_uris: Array(11).fill("https://a.example/") }, "Give redirect_uris: 1 to 10 URLs.");
  refusedWith({ redirect_uris: [42] }, "Give redirect_uris: 1 to 10 URLs.");
  refusedWith(
    { redirect_uris: ["http://app.example/cb"] },
    'This redirect URI cannot be used: "http://app.example/cb" is http on a public host.',
  );
  refusedWith(
    { redirect_uris: ["https://a.example/cb#x"] },
    'This redirect URI cannot be used: "https://a.example/cb#x" has a fragment.',
  );
  refusedWith(
    { redirect_uris: ["javascript:alert(1)"] },
    'This redirect URI cannot be used: "javascript:alert(1)" uses the javascript: scheme.',
  );
});

Deno.test("when an app registers as a confidential client or for other grant types, then invalid_client_metadata", () => {
  assertRefused(
    decide(
      register({
        redirect_uris: ["https://a.example/cb"],
        token_endpoint_auth_method: "client_secret_basic",
      }),
      NO_GRANT,
      NOW,
    ),
    "invalid_client_metadata",
    'Sergo registers public clients only: token_endpoint_auth_method must be "none", not "client_secret_basic".',
  );
  assertRefused(
    decide(register({ redirect_uris: ["https://a.example/cb"], grant_types: ["implicit"] }), NO_GRANT, NOW),
    "invalid_client_metadata",
    "grant_types may be authorization_code and refresh_token only.",
  );
});

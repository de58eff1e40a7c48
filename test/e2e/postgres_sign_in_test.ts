/**
 * The console's sign-in throttle and the OAuth client registration limit hold
 * across real `serve` replicas on one PostgreSQL (test/helpers/replicas.ts):
 * failed sign-ins and registrations through one replica count on the other,
 * so an attacker behind a load balancer gets the allowance once, not once per
 * replica. The SQL versions decide as the in-memory ones do, step by step on
 * one clock (test/console/sign_in_test.ts and test/auth/oauth_limits_test.ts
 * have the in-memory ones' own tests).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { LocalRegistrationLimit, SharedRegistrationLimit } from "../../src/auth/oauth/registration_limit.ts";
import { SharedSignInThrottle } from "../../src/console/shared_sign_in_throttle.ts";
import { type SignInAttempter, SignInThrottle } from "../../src/console/sign_in_throttle.ts";
import { testDatabase } from "../helpers/postgres.ts";
import { testReplicas } from "../helpers/replicas.ts";

Deno.test("PostgreSQL replicas: failed sign-ins and client registrations through one replica count on the other", async (t) => {
  await using cluster = await testReplicas({ count: 2 });
  const [r1, r2] = cluster.replicas;
  await t.step("failed sign-ins", () => signInsCount(r1!, r2!));
  await t.step("client registrations from one address", async () => {
    const register = async (replica: { url: string }, i: number) => {
      const response = await fetch(`${replica.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: `App ${i}`, redirect_uris: ["http://127.0.0.1:33418/callback"] }),
      });
      return {
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        body: await response.json(),
      };
    };
    // The default: 20 an hour from one address. Through both replicas in turn, ten each.
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await register(i % 2 === 0 ? r1! : r2!, i)).status);
    assert.deepEqual(statuses, Array(20).fill(201));
    for (const [i, replica] of [r1!, r2!].entries()) {
      assert.deepEqual(await register(replica, 20 + i), {
        status: 429,
        retryAfter: "3600",
        body: {
          error: "slow_down",
          error_description: "Too many registrations: at most 20 an hour from one address — try again later.",
        },
      });
    }
    // The twenty are recorded, the refused ones not.
    const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM sergo_events WHERE type = 'OAuthClientRegistered'`;
      assert.equal(row!.n, 20);
    } finally {
      await sql.end();
    }
  });
});

async function signInsCount(r1: { url: string }, r2: { url: string }): Promise<void> {
  const page = await fetch(`${r1!.url}/sign-in`);
  await page.body?.cancel();
  const csrf = /sergo_csrf=([A-Za-z0-9]+)/.exec(page.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(csrf, "the sign-in page sets the CSRF cookie");
  const attempt = async (replica: { url: string }, email: string) => {
    const response = await fetch(`${replica.url}/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `sergo_csrf=${csrf}` },
      body: new URLSearchParams({ email, password: "not the password", csrf }).toString(),
    });
    return { status: response.status, text: await response.text() };
  };
  // The defaults: 5 failures of one account from one address are free, then the next waits.
  const statuses = [];
  for (const replica of [r1, r2, r1, r2, r1]) {
    statuses.push((await attempt(replica, "ava@example.com")).status);
  }
  assert.deepEqual(statuses, [401, 401, 401, 401, 401]);
  for (const replica of [r2, r1]) {
    const refused = await attempt(replica, "Ava@Example.com");
    assert.equal(refused.status, 429, refused.text.slice(0, 300));
    // The wait counts from the last failure: whole seconds, or "1 minute" when it rounds up to 60 s.
    assert.match(refused.text, /Too many failed sign-ins — wait (1 minute|\d+ seconds?) and try again\./);
  }
  // Another account from the same address is not held up by these five.
  assert.equal((await attempt(r2, "ben@example.com")).status, 401);
}

Deno.test("the shared sign-in throttle decides as the in-memory one, on the same clock", async () => {
  await using db = await testDatabase();
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  try {
    const options = { freeFailures: 2, firstWaitMs: 1000, addressFreeFailures: 4, accountFreeFailures: 3 };
    let now = 1_000_000;
    const memory = new SignInThrottle({ ...options, now: () => now });
    const shared = new SharedSignInThrottle(sql, options);
    const steps: { who: SignInAttempter; right?: boolean; advance?: number }[] = [
      // One account from one address: 2 free, then 1 s, 2 s…
      { who: { email: "ava@example.com", address: "10.0.0.1" } },
      { who: { email: "ava@example.com", address: "10.0.0.1" } },
      { who: { email: "ava@example.com", address: "10.0.0.1" } },
      { who: { email: "ava@example.com", address: "10.0.0.1" }, advance: 1000 },
      { who: { email: "ava@example.com", address: "10.0.0.1" }, advance: 1500 },
      { who: { email: "ava@example.com", address: "10.0.0.1" }, advance: 600 },
      // The account from other addresses: its own count (3 free), then waits.
      { who: { email: "ava@example.com", address: "10.0.0.2" } },
      { who: { email: "ava@example.com", address: "10.0.0.3" } },
      // The address over many accounts: 4 free.
      { who: { email: "ben@example.com", address: "10.0.0.1" } },
      { who: { email: "cy@example.com", address: "10.0.0.1" } },
      // The owner signs in from an address of theirs once the waits are over…
      { who: { email: "dee@example.com", address: "10.0.0.9" }, right: true, advance: 120_000 },
      { who: { email: "dee@example.com", address: "10.0.0.8" } },
      { who: { email: "dee@example.com", address: "10.0.0.7" } },
      { who: { email: "dee@example.com", address: "10.0.0.6" } },
      { who: { email: "dee@example.com", address: "10.0.0.5" } },
      // …and is not held by the account's count from there.
      { who: { email: "dee@example.com", address: "10.0.0.9" }, right: true },
      // An hour after the last failure, everything is forgotten.
      { who: { email: "ava@example.com", address: "10.0.0.1" }, advance: 60 * 60_000 + 1 },
      { who: { email: "ava@example.com", address: "10.0.0.1" } },
      { who: { email: "ava@example.com", address: "10.0.0.1" } },
    ];
    for (const [i, step] of steps.entries()) {
      now += step.advance ?? 0;
      const a = memory.reserve(step.who);
      const b = await shared.reserve(step.who, now);
      const said = (r: typeof a) => "waitMs" in r ? `wait ${r.waitMs}` : "go";
      assert.equal(said(b), said(a), `step ${i}: ${JSON.stringify(step)}`);
      if (step.right && !("waitMs" in a) && !("waitMs" in b)) {
        a.succeed();
        await b.succeed();
      }
    }
  } finally {
    await sql.end();
  }
});

Deno.test("the shared registration limit decides as the in-memory one, on the same clock", async () => {
  await using db = await testDatabase();
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  try {
    // 3 an hour from one address, 5 over all addresses.
    let now = 1_000_000;
    const memory = new LocalRegistrationLimit(3, 5);
    const shared = new SharedRegistrationLimit(sql, 3, 5);
    const steps: { address: string; advance?: number; allowed: boolean }[] = [
      { address: "10.0.0.1", allowed: true },
      { address: "10.0.0.1", allowed: true, advance: 10_000 },
      { address: "10.0.0.1", allowed: true, advance: 10_000 },
      { address: "10.0.0.1", allowed: false },
      { address: "10.0.0.2", allowed: true },
      { address: "10.0.0.2", allowed: true },
      // All addresses' five are spent.
      { address: "10.0.0.3", allowed: false },
      // The hour slides: the first of 10.0.0.1's three (and of the five) is forgotten, not the others.
      { address: "10.0.0.1", allowed: true, advance: 60 * 60_000 - 20_000 + 1 },
      { address: "10.0.0.1", allowed: false },
    ];
    for (const [i, step] of steps.entries()) {
      now += step.advance ?? 0;
      const said = [await memory.take(step.address, now), await shared.take(step.address, now, now)];
      assert.deepEqual(said, [step.allowed, step.allowed], `step ${i}: ${JSON.stringify(step)}`);
    }
  } finally {
    await sql.end();
  }
});

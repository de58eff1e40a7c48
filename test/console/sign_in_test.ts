import assert from "node:assert/strict";
import { openApp } from "../../src/app.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { loadConfig } from "../../src/config.ts";
import { signIn } from "../../src/console/sign_in.ts";
import { SignInThrottle } from "../../src/console/sign_in_throttle.ts";
import { addPerson, setPasswordHash } from "../../src/domain/people.ts";
import { createServices, type Services } from "../../src/server/services.ts";

const PASSWORD = "correct horse battery staple";

async function world(): Promise<{ services: Services; emails: string[] } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "sergo-sign-in-" });
  const app = await openApp(dir);
  const services = await createServices(app, loadConfig(["--data", dir]));
  const emails = ["ava@example.com", "ben@example.com"];
  const hash = await hashPassword(PASSWORD);
  for (const email of emails) {
    const person = await addPerson(app, { name: email.split("@")[0]!, email });
    await setPasswordHash(app, person.person_id, hash);
  }
  return {
    services,
    emails,
    async [Symbol.asyncDispose]() {
      await services.close();
      await app.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

function attempt(
  services: Services,
  throttle: SignInThrottle,
  email: string,
  password: string,
  address: string,
) {
  return signIn(services, { email, password, next: "" }, { address, secure: false, throttle });
}

Deno.test("sign-in: 201 simultaneous attempts from one address check only the 5 passwords allowed", async () => {
  await using w = await world();
  // The default allowances; the clock stands still, so no wait runs out however slow the machine is.
  const throttle = new SignInThrottle({ now: () => 0 });
  const results = await Promise.all(
    Array.from(
      { length: 201 },
      (_, i) => attempt(w.services, throttle, w.emails[0]!, `guess ${i}`, "10.0.0.9"),
    ),
  );
  const checked = results.filter((r) => !r.ok && r.status === 401).length;
  const slowed = results.filter((r) => !r.ok && r.status === 429);
  assert.equal(checked, 5, "only five passwords were checked");
  assert.equal(slowed.length, 196);
  assert.match(
    slowed[0]!.ok ? "" : slowed[0]!.message,
    /^Too many failed sign-ins — wait \d+ (seconds?|minutes?) and try again\.$/,
  );
  // The owner, from elsewhere, is not locked out.
  const owner = await attempt(w.services, throttle, w.emails[0]!, PASSWORD, "192.0.2.7");
  assert.equal(owner.ok, true, "the owner signs in from another address");
  // The same address, even with the right password, waits.
  const same = await attempt(w.services, throttle, w.emails[0]!, PASSWORD, "10.0.0.9");
  assert.equal(same.ok ? 200 : same.status, 429);
});

Deno.test("sign-in: one address guessing many accounts is slowed, and those accounts still sign in from elsewhere", async () => {
  await using w = await world();
  const throttle = new SignInThrottle({ addressFreeFailures: 4, now: () => 0 });
  const results = await Promise.all(
    Array.from(
      { length: 12 },
      (_, i) => attempt(w.services, throttle, `someone${i}@example.com`, "password1", "203.0.113.5"),
    ),
  );
  assert.equal(results.filter((r) => !r.ok && r.status === 401).length, 4);
  const next = await attempt(w.services, throttle, w.emails[1]!, PASSWORD, "203.0.113.5");
  assert.equal(next.ok ? 200 : next.status, 429, "the address waits, whatever the account");
  const elsewhere = await attempt(w.services, throttle, w.emails[1]!, PASSWORD, "198.51.100.1");
  assert.equal(elsewhere.ok, true, "the account is not locked for other addresses");
});

Deno.test("sign-in throttle: guesses spread over many addresses slow new addresses for at most a minute, never a known one", () => {
  const throttle = new SignInThrottle();
  const ava = (address: string) => ({ email: "ava@example.com", address });
  const home = throttle.reserve(ava("192.0.2.1"), 0);
  assert.ok("succeed" in home);
  home.succeed();
  for (let i = 0; i < 200; i++) {
    const r = throttle.reserve(ava(`10.1.${Math.floor(i / 250)}.${i % 250}`), 1000 + i);
    if (i < 20) assert.ok("succeed" in r, `attempt ${i} from a fresh address goes ahead`);
  }
  const fresh = throttle.reserve(ava("198.51.100.77"), 2000);
  assert.ok("waitMs" in fresh, "a new address waits once the account has many failures");
  assert.ok(fresh.waitMs <= 60_000, `the wait is at most a minute, got ${fresh.waitMs} ms`);
  assert.ok(
    "succeed" in throttle.reserve(ava("198.51.100.77"), 2000 + 60_001),
    "after a minute it goes ahead",
  );
  assert.ok(
    "succeed" in throttle.reserve(ava("192.0.2.1"), 2000),
    "the address that signed in before goes ahead",
  );
});

Deno.test("sign-in throttle: after 5 failures of an account from an address the waits double, 1 s, 2 s, 4 s…, up to 15 minutes, and end with a success", () => {
  let now = 0;
  const throttle = new SignInThrottle({ now: () => now });
  const who = { email: "ava@example.com", address: "192.0.2.7" };
  const fail = () => {
    const attempt = throttle.reserve(who);
    assert.ok(!("waitMs" in attempt), `an attempt at ${now} ms may go ahead`);
  };
  const wait = () => {
    const attempt = throttle.reserve(who);
    return "waitMs" in attempt ? attempt.waitMs : 0;
  };
  for (let i = 0; i < 5; i++) fail();
  const waits: number[] = [];
  for (let i = 0; i < 12; i++) {
    waits.push(wait());
    now += waits.at(-1)! - 1;
    assert.equal(wait(), 1, "1 ms before its wait is over, an attempt still waits 1 ms");
    now += 1;
    fail();
  }
  assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900].map((s) => s * 1000));
  // A success forgets the failures of that account from that address.
  now += wait();
  const success = throttle.reserve(who);
  assert.ok(!("waitMs" in success));
  success.succeed();
  assert.equal(wait(), 0);
});

/**
 * Two replicas on one new database each print a first-run setup address of
 * their own; both used at the same moment make one first administrator, not
 * two: the log takes one setup, and the other replica answers with the
 * not-valid page, as a second use of one address does.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { testReplicas } from "../helpers/replicas.ts";

const NOT_VALID =
  "This setup address is not valid: it works once, while Sergo has nobody, from the line serve printed.";
const PASSWORD = "a long passphrase of my own";

/** Opens a replica's own setup address (its CSRF cookie), then posts the form to it. */
async function setUp(url: string, token: string, email: string): Promise<{ status: number; text: string }> {
  const page = await fetch(`${url}/setup?token=${token}`);
  assert.equal(page.status, 200, `${url}: the setup page`);
  await page.body?.cancel();
  const csrf = /sergo_csrf=([^;]+)/.exec(page.headers.getSetCookie().join("\n"))?.[1];
  assert.ok(csrf, "the setup page sets the CSRF cookie");
  const response = await fetch(`${url}/setup`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: `sergo_csrf=${csrf}`,
      origin: new URL(url).origin,
    },
    body: new URLSearchParams({
      csrf,
      token,
      name: email.split("@")[0]!,
      email,
      password: PASSWORD,
      password2: PASSWORD,
    }),
  });
  return { status: response.status, text: await response.text() };
}

Deno.test("two replicas' setup addresses used at once make one first administrator", async () => {
  await using cluster = await testReplicas({ count: 2 });
  const tokens = cluster.replicas.map((replica) => {
    assert.ok(replica.setupUrl, `replica ${replica.index} printed no setup address:\n${replica.output()}`);
    return new URL(replica.setupUrl).searchParams.get("token")!;
  });
  assert.notEqual(tokens[0], tokens[1]);
  const answers = await Promise.all(
    cluster.replicas.map((replica, i) => setUp(replica.url, tokens[i]!, `admin${i + 1}@example.com`)),
  );
  const made = answers.filter((answer) => answer.status === 303);
  const refused = answers.filter((answer) => answer.status === 404 && answer.text.includes(NOT_VALID));
  assert.equal(made.length, 1, JSON.stringify(answers.map((answer) => answer.status)));
  assert.equal(
    refused.length,
    1,
    JSON.stringify(answers.map((answer) => [answer.status, answer.text.slice(0, 200)])),
  );

  const sql = postgres(cluster.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ type: string; n: number }[]>`
      SELECT type, count(*)::int AS n FROM sergo_events
      WHERE type IN ('PersonAdded', 'PersonMadeAdministrator') GROUP BY type ORDER BY type`;
    assert.deepEqual(rows.map((row) => [row.type, row.n]), [["PersonAdded", 1], [
      "PersonMadeAdministrator",
      1,
    ]]);
  } finally {
    await sql.end();
  }
  // Neither address works any more, on either replica.
  for (const [i, replica] of cluster.replicas.entries()) {
    const again = await fetch(`${replica.url}/setup?token=${tokens[i]}`);
    const deadline = Date.now() + 5000;
    let status = again.status;
    await again.body?.cancel();
    // The replica that lost learns of the winner's person within its poll.
    while (status !== 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const response = await fetch(`${replica.url}/setup?token=${tokens[i]}`);
      status = response.status;
      await response.body?.cancel();
    }
    assert.equal(status, 404, `replica ${replica.index}'s setup address still opens`);
  }
});

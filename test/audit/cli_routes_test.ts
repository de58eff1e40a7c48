import assert from "node:assert/strict";
import { join } from "node:path";
import { unzipSync } from "fflate";
import { publicKeyPem } from "../../src/audit/signing_key.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { startServer } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { runCli } from "../helpers/temp.ts";
import { copyWorkload } from "./_workload.ts";

Deno.test("audit export, verify and public-key through main.ts, and a changed cell fails verify", async () => {
  const { dir, dataDir } = await copyWorkload();
  try {
    const out = join(dir, "ava.csv");
    const exported = await runCli([
      "audit",
      "export",
      "--person",
      "ava@example.com",
      "--format",
      "csv",
      "--out",
      out,
      "--data",
      dataDir,
    ]);
    assert.equal(exported.code, 0, exported.stderr);
    const manifest = JSON.parse(await Deno.readTextFile(`${out}.manifest.json`));
    assert.equal(manifest.count, 23);
    const publicKey = await runCli(["audit", "public-key", "--data", dataDir]);
    assert.equal(publicKey.code, 0, publicKey.stderr);
    assert.equal(publicKey.stdout.trim(), (await publicKeyPem(dataDir)).trim());
    const mode = (await Deno.stat(join(dataDir, "audit-signing-key.json"))).mode! & 0o777;
    assert.equal(mode, 0o600, "the signing key is readable by its owner alone");
    const keyFile = join(dir, "key.pem");
    await Deno.writeTextFile(keyFile, publicKey.stdout);
    const verified = await runCli(["audit", "verify", out, "--public-key", keyFile]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(
      verified.stdout,
      /^Intact: 23 records, positions 1-34, chain head 35 [0-9a-f]{64}; 6 with secret fields left out; signed by the given key\n$/,
    );
    const text = await Deno.readTextFile(out);
    assert.ok(text.includes("Energy outlooks/Basic"));
    // The folder first shows by that name where it is made: record 5, position 7.
    await Deno.writeTextFile(out, text.replace("Energy outlooks/Basic", "Energy outlooks/Bas1c"));
    const changed = await runCli(["audit", "verify", out]);
    assert.equal(changed.code, 1);
    assert.equal(changed.stdout, "");
    assert.match(
      changed.stderr,
      /^Not intact: Record 5 \(position 7\): its audit fields do not match its link: it was changed, or a record before it is missing\n$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bad audit arguments through main.ts: exit 2 and the sentence that says what to do", async () => {
  const { dir, dataDir } = await copyWorkload();
  try {
    const cases: Array<[string[], string]> = [
      [["export"], "Give the person to export with --person EMAIL"],
      [
        ["export", "--person", "nobody@example.com", "--out", join(dir, "x")],
        'No person with the email "nobody@example.com"',
      ],
      [
        ["export", "--person", "ava@example.com", "--format", "xml"],
        'Unknown format "xml": use jsonl or csv',
      ],
      [
        ["export", "--person", "ava@example.com", "--from", "yesterday"],
        'Cannot read --from "yesterday": expected an ISO 8601 date or time',
      ],
      [
        ["export", "--person", "ava@example.com", "--format", "csv"],
        "A CSV export needs --out FILE (its manifest goes beside it)",
      ],
      [["verify"], "Give one export file to verify: sergo audit verify FILE"],
      [["shred"], 'Unknown audit command "shred": use export, verify or public-key'],
    ];
    const runs = await Promise.all(cases.map(([args]) => runCli(["audit", ...args, "--data", dataDir])));
    for (const [i, run] of runs.entries()) {
      assert.deepEqual(
        [run.code, run.stderr.trim(), run.stdout],
        [2, `${cases[i]![1]} (see sergo audit --help)`, ""],
        cases[i]![0].join(" "),
      );
    }
    const help = await runCli(["audit", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage:\n {2}sergo audit export --person EMAIL/);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["data"], "no export file was written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the audit API, through serve with a personal key: lists, streams exports that verify, serves the public key", async () => {
  const { dir, dataDir, workload } = await copyWorkload();
  const running = await startServer(loadConfig(["--data", dataDir, "--port", "0"], () => undefined), {
    quiet: true,
  });
  try {
    const get = (key: string, path: string) =>
      fetch(new URL(path, running.url), { headers: { authorization: `Bearer ${key}` } });
    const ava = workload.ava.personalKey, ben = workload.ben.personalKey;
    const list = await get(ava, "/api/audit?action=mcp%20search&limit=2");
    assert.equal(list.status, 200);
    const page = await list.json();
    assert.deepEqual(page.entries.map((e: { details: { query: string } }) => e.details.query), [
      "footnote",
      "merged cells",
    ]);
    assert.equal(typeof page.next_before, "number");
    const bad = await get(ava, "/api/audit?limit=0");
    assert.equal(bad.status, 400);
    await bad.body?.cancel();

    const jsonl = await get(ava, "/api/audit/export?key=research");
    assert.equal(jsonl.status, 200);
    assert.equal(jsonl.headers.get("content-type"), "application/x-ndjson; charset=utf-8");
    const path = join(dir, "api.jsonl");
    await Deno.writeFile(path, new Uint8Array(await jsonl.arrayBuffer()));
    const publicKey = await (await get(ava, "/api/audit/public-key")).text();
    assert.equal(publicKey, await publicKeyPem(dataDir));
    const result = await verifyExport(path, { publicKey });
    assert.ok(result.ok && result.count === 10 && result.trusted_key, JSON.stringify(result));

    // Ben asks for Ava's key by name: his export holds none of her entries.
    const others = await get(ben, "/api/audit/export?key=research");
    const othersPath = join(dir, "others.jsonl");
    await Deno.writeFile(othersPath, new Uint8Array(await others.arrayBuffer()));
    const othersResult = await verifyExport(othersPath);
    assert.ok(othersResult.ok && othersResult.count === 0, JSON.stringify(othersResult));

    const zip = await get(ben, "/api/audit/export?format=csv");
    assert.equal(zip.headers.get("content-type"), "application/zip");
    const files = unzipSync(new Uint8Array(await zip.arrayBuffer()));
    const names = Object.keys(files).sort();
    assert.equal(names.length, 2);
    const csvPath = join(dir, "ben.csv");
    await Deno.writeFile(csvPath, files[names[0]!]!);
    await Deno.writeFile(`${csvPath}.manifest.json`, files[names[1]!]!);
    const csv = await verifyExport(csvPath);
    assert.ok(csv.ok && csv.count === 12, JSON.stringify(csv));
    assert.ok(!new TextDecoder().decode(files[names[0]!]!).includes("Ava Bennett"));
    const badFormat = await get(ava, "/api/audit/export?format=xml");
    assert.equal(badFormat.status, 400);
    await badFormat.body?.cancel();
  } finally {
    await running.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { unzipSync } from "fflate";
import { auditCommand } from "../../src/audit/cli.ts";
import { type AuditRouteDeps, auditRoutes } from "../../src/audit/routes.ts";
import { publicKeyPem } from "../../src/audit/signing_key.ts";
import { verifyExport } from "../../src/audit/verify.ts";
import { auditView } from "../../projections/audit_view.ts";
import { catalogue } from "../../projections/catalogue.ts";
import { openProjector } from "../../projections/projector.ts";
import { appendWorkload, openInstall } from "./_workload.ts";

async function withInstall(
  fn: (dir: string, deps: AuditRouteDeps, cli: Parameters<typeof auditCommand>[1]) => Promise<void>,
) {
  const install = await openInstall();
  await appendWorkload(install.store);
  const projector = openProjector(join(install.dataDir, "full.db"), [catalogue, auditView]);
  projector.catchUp(install.store);
  try {
    await fn(
      install.dir,
      { projectionsDb: projector.db, dataDir: install.dataDir, eventsDbPath: install.eventsPath },
      { dataDir: install.dataDir, openStore: () => install.store, openProjections: () => projector.db },
    );
  } finally {
    projector.close();
    await install.close();
  }
}

Deno.test("audit export, verify and public-key on the command line", async () => {
  await withInstall(async (dir, _deps, context) => {
    const out = join(dir, "ava.csv");
    assert.equal(
      await auditCommand(["export", "--person", "ava@example.com", "--format", "csv", "--out", out], context),
      0,
    );
    assert.ok((await Deno.stat(`${out}.manifest.json`)).isFile);
    const keyFile = join(dir, "key.pem");
    await Deno.writeTextFile(keyFile, await publicKeyPem(context.dataDir));
    assert.equal(await auditCommand(["verify", out, "--public-key", keyFile], context), 0);
    await Deno.writeTextFile(
      out,
      (await Deno.readTextFile(out)).replace("Energy outlooks/Basic", "Energy outlooks/Bas1c"),
    );
    assert.equal(await auditCommand(["verify", out], context), 1);
    assert.equal(await auditCommand(["public-key"], context), 0);
    const mode = (await Deno.stat(join(context.dataDir, "audit-signing-key.json"))).mode! & 0o777;
    assert.equal(mode, 0o600);
  });
});

Deno.test("bad audit arguments exit non-zero", async () => {
  await withInstall(async (_dir, _deps, context) => {
    assert.equal(await auditCommand(["export"], context), 2);
    assert.equal(
      await auditCommand(["export", "--person", "nobody@example.com", "--out", "/tmp/x"], context),
      2,
    );
    assert.equal(
      await auditCommand(["export", "--person", "ava@example.com", "--format", "xml"], context),
      2,
    );
    assert.equal(
      await auditCommand(["export", "--person", "ava@example.com", "--from", "yesterday"], context),
      2,
    );
    assert.equal(
      await auditCommand(["export", "--person", "ava@example.com", "--format", "csv"], context),
      2,
    );
    assert.equal(await auditCommand(["verify"], context), 2);
    assert.equal(await auditCommand(["shred"], context), 2);
    assert.equal(await auditCommand(["--help"], context), 0);
  });
});

Deno.test("the audit API lists entries, streams exports that verify, and serves the public key", async () => {
  await withInstall(async (dir, deps) => {
    const list = await auditRoutes.list(
      new Request("http://x/api/audit?action=mcp%20search&limit=2"),
      "pAva",
      deps,
    );
    assert.equal(list.status, 200);
    const page = await list.json();
    assert.equal(page.entries.length, 2);
    assert.equal(page.entries[0].details.query, "electric vehicles 4");
    assert.equal(typeof page.next_before, "number");
    const bad = await auditRoutes.list(new Request("http://x/api/audit?limit=0"), "pAva", deps);
    assert.equal(bad.status, 400);

    const jsonl = await auditRoutes.export(
      new Request("http://x/api/audit/export?key=research"),
      "pAva",
      deps,
    );
    assert.equal(jsonl.headers.get("content-type"), "application/x-ndjson; charset=utf-8");
    const path = join(dir, "api.jsonl");
    await Deno.writeFile(path, new Uint8Array(await jsonl.arrayBuffer()));
    const result = await verifyExport(path, {
      publicKey: await (await auditRoutes.publicKey(new Request("http://x"), "pAva", deps)).text(),
    });
    assert.ok(result.ok && result.count === 9 && result.trusted_key, JSON.stringify(result));

    const zip = await auditRoutes.export(new Request("http://x/api/audit/export?format=csv"), "pBen", deps);
    assert.equal(zip.headers.get("content-type"), "application/zip");
    const files = unzipSync(new Uint8Array(await zip.arrayBuffer()));
    const names = Object.keys(files).sort();
    assert.equal(names.length, 2);
    const csvPath = join(dir, "ben.csv");
    await Deno.writeFile(csvPath, files[names[0]!]!);
    await Deno.writeFile(`${csvPath}.manifest.json`, files[names[1]!]!);
    const csv = await verifyExport(csvPath);
    assert.ok(csv.ok && csv.count === 10, JSON.stringify(csv));
    const badFormat = await auditRoutes.export(
      new Request("http://x/api/audit/export?format=xml"),
      "pAva",
      deps,
    );
    assert.equal(badFormat.status, 400);
  });
});

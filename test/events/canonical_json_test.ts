/**
 * Canonical JSON decides every event's hash: its output must never change for
 * a value, or stored logs would stop verifying.
 */
import assert from "node:assert/strict";
import { canonicalJson } from "../../events/_canonical_json.ts";

Deno.test("canonical JSON: keys sorted by UTF-16 code units, undefined members left out, no whitespace", () => {
  assert.equal(
    canonicalJson({
      b: 1,
      a: [3, undefined, { d: null, c: "x" }],
      é: true,
      Z: undefined,
      "\u{1F600}": 0,
      "\uFB01": 1,
    }),
    '{"a":[3,null,{"c":"x","d":null}],"b":1,"é":true,"\u{1F600}":0,"\uFB01":1}', // U+D83D… before U+FB01
  );
  assert.equal(canonicalJson({}), "{}");
  assert.equal(canonicalJson([]), "[]");
  assert.equal(canonicalJson({ only: undefined }), "{}");
  assert.equal(canonicalJson('line\nbreak "quoted"'), '"line\\nbreak \\"quoted\\""');
  assert.equal(canonicalJson(1e21), "1e+21");
  assert.equal(canonicalJson(-0.5), "-0.5");
  assert.throws(() => canonicalJson(Number.NaN), /non-finite/);
});

Deno.test("canonical JSON: an event's hash input is stable (a known value and its known text)", () => {
  const event = {
    position: 7,
    stream: "key-k1",
    stream_version: 3,
    type: "McpCalled",
    schema_version: 1,
    data: { tool: "search", arguments: { query: "heat pumps", limit: 5 }, is_error: false, details: {} },
    metadata: { time: "2026-11-30T01:00:00.000Z", actor: "key-k1" },
  };
  assert.equal(
    canonicalJson(event),
    '{"data":{"arguments":{"limit":5,"query":"heat pumps"},"details":{},"is_error":false,"tool":"search"},' +
      '"metadata":{"actor":"key-k1","time":"2026-11-30T01:00:00.000Z"},"position":7,"schema_version":1,' +
      '"stream":"key-k1","stream_version":3,"type":"McpCalled"}',
  );
});

/**
 * Every JSON-RPC message gets an answer, in bounded time: shapes the SDK
 * drops without a word (params that are not an object, a malformed `_meta`,
 * a request carrying a result, ids that are not ids) are answered with the
 * error JSON-RPC prescribes, and a request the SDK takes but does not answer
 * in time is answered with an error instead of waiting for ever.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { Fixture, post } from "./_fixture.ts";

/** Each test's own data: Ava and a key over a thread writer, and `answer` to post to its endpoint. */
async function openWorld() {
  const fixture = await Fixture.open({ writer: "thread" });
  const ava = await fixture.person("Ava Bennett");
  const { value: key } = await fixture.agentKey(ava, "everything", "Ava's files.", {
    folders: [],
    documents: [],
  });
  const endpoint = fixture.endpoint({ answerTimeoutMs: 300 });

  /** The answer, or a failure (not a hang) when none comes within five seconds. */
  async function answer(body: string, headers: Record<string, string> = {}): Promise<[number, string]> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`No answer within 5 s to ${body.slice(0, 100)}`)), 5_000);
    });
    try {
      const response = await Promise.race([post(endpoint, key, body, headers), late]);
      return [response.status, await response.text()];
    } finally {
      clearTimeout(timer);
    }
  }

  return { fixture, answer, [Symbol.asyncDispose]: () => fixture.dispose() };
}

Deno.test("a request whose params is not an object is answered -32600 with its id, at once", async () => {
  await using world = await openWorld();
  const { answer } = world;
  for (const params of ["5", '"x"', "[1]", "null", "true"]) {
    for (const method of ["ping", "tools/call", "initialize", "tools/list"]) {
      const [status, text] = await answer(`{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}`);
      assert.equal(status, 400, `${method} ${params}`);
      assert.equal(
        text,
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid request: params must be an object."}}',
      );
    }
  }
});

Deno.test("other shapes the SDK drops are answered too: a bad _meta, a request with a result, odd ids", async () => {
  await using world = await openWorld();
  const { answer } = world;
  const cases: Array<[string, number, string]> = [
    [
      '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":5}}',
      200,
      '{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: the message does not have the shape of a JSON-RPC request."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"progressToken":{}}}}',
      200,
      '{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Invalid request: the message does not have the shape of a JSON-RPC request."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}',
      400,
      '{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request: a request cannot carry a result or an error."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":{},"method":"ping"}',
      400,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: id must be a string or a number."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":true,"method":"ping"}',
      400,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: id must be a string or a number."}}',
    ],
    [
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","params":5}]',
      400,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: params must be an object."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}',
      200,
      '{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: tools/call takes a tool `name` (a string) and `arguments` (an object)."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":[1]}}',
      200,
      '{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params: tools/call takes a tool `name` (a string) and `arguments` (an object)."}}',
    ],
    [
      '{"jsonrpc":"2.0","id":7,"method":"resources/list"}',
      200,
      '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}',
    ],
    [
      '{"jsonrpc":"2.0","id":8,"method":"notifications/initialized"}',
      200,
      '{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found"}}',
    ],
  ];
  for (const [body, status, expected] of cases) {
    assert.deepEqual(await answer(body), [status, expected], body);
  }
  // Responses and notifications are accepted without an answer, as Streamable HTTP says.
  for (
    const body of ['{"jsonrpc":"2.0","id":1,"result":{}}', '{"jsonrpc":"2.0","method":"notifications/x"}']
  ) {
    assert.deepEqual(await answer(body), [202, ""], body);
  }
  const [, fine] = await answer('{"jsonrpc":"2.0","id":9,"method":"ping"}');
  assert.equal(fine, '{"jsonrpc":"2.0","id":9,"result":{}}');
});

Deno.test("a request the SDK takes but does not answer in time is answered -32603, and the next one works", async () => {
  await using world = await openWorld();
  const { fixture, answer } = world;
  // Another connection holds the log's write lock, so the call's audit entry waits for it.
  const audited = fixture.auditEvents().length;
  const lock = new DatabaseSync(join(fixture.dir, "events.db"));
  lock.exec("BEGIN IMMEDIATE");
  // `_meta` makes the call go through the SDK rather than the plain tools/call path.
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 11,
    method: "tools/call",
    params: { name: "list_documents", arguments: {}, _meta: { progressToken: "p" } },
  });
  const [status, text] = await answer(body);
  lock.exec("ROLLBACK");
  lock.close();
  assert.equal(status, 200);
  assert.equal(
    text,
    '{"jsonrpc":"2.0","id":11,"error":{"code":-32603,"message":"The server did not answer this request within 300 ms."}}',
  );
  const [, again] = await answer('{"jsonrpc":"2.0","id":12,"method":"ping"}');
  assert.equal(again, '{"jsonrpc":"2.0","id":12,"result":{}}');
  // The call itself ran, and its audit entry lands once the lock is gone.
  for (let i = 0; i < 100 && fixture.auditEvents().length === audited; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(fixture.auditEvents().length, audited + 1);
});

function deepCall(id: number, levels: number, open: string, close: string): string {
  const deep = `${open.repeat(levels)}1${close.repeat(levels)}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search","arguments":{"query":"x","extra":${deep}}}}`;
}

Deno.test("tool calls nested 3,000 (objects) or 3,600 (arrays) deep are refused alone and freeze nothing", async () => {
  await using world = await openWorld();
  const { fixture, answer } = world;
  const before = fixture.auditEvents().length;
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all([
      answer(deepCall(1, 3_000, '{"a":', "}")),
      answer(deepCall(2, 3_600, "[", "]")),
      answer(
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}',
      ),
      answer(deepCall(4, 3_000, '{"a":', "}")),
      answer('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_documents"}}'),
    ]);
    for (const i of [0, 1, 3]) {
      assert.deepEqual(answers[i], [
        400,
        `{"jsonrpc":"2.0","id":${
          i + 1
        },"error":{"code":-32600,"message":"Invalid request: the message nests deeper than 32 levels."}}`,
      ]);
    }
    assert.equal(answers[2]![0], 200);
    assert.match(
      answers[2]![1],
      /^\{"jsonrpc":"2.0","id":3,"result":\{"content":\[\{"text":"Nothing matched\."/,
    );
    assert.equal(answers[4]![0], 200);
  }
  // Only the calls that were answered were audited, and nothing of the refused ones reached the log.
  assert.equal(fixture.auditEvents().length - before, 6);
});

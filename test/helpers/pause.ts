/**
 * Shared by the e2e tests of a workflow that pauses during a synchronous call
 * (`serve-pause*.test.ts`): the fixture folder, a marks file that counts runs of its first step,
 * and raw 2026-07-28 `tools/call`s with retry material beside them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, tempDir } from './cli.js';
import { MODERN_VERSION, rpc, send } from './http-server.js';

/** The fixture: `Approve` marks a file in step `Mark`, then pauses in step `Review`. */
export const PAUSE_FOLDER = resolve(REPO_ROOT, 'test/fixtures/pause');
/** The reason `Approve` pauses with. */
export const REASON = 'approve the release: answer approved = yes';
/** Approve pauses in its step Review: that is the key its input request is asked under. */
export const KEY = 'Review';

export type Json = Record<string, unknown>;

/** A fresh marks file path (not yet created) and a way to count the lines written to it. */
export function marks(): { path: string; count: () => number } {
  const path = join(tempDir('mhl-pause-'), 'marks');
  const count = () =>
    existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0;
  return { path, count };
}

/** The client capabilities of a client that takes form elicitation. */
export const FORM = { elicitation: { form: {} } };

/** A 2026-07-28 `tools/call`, with extra params (`inputResponses`, `requestState`) beside it. */
export async function modernCall(
  port: number,
  name: string,
  args: Json,
  extra: Json = {},
  capabilities: Json = FORM,
): Promise<Json> {
  const reply = await send(port, {
    headers: {
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: rpc(1, 'tools/call', {
      name,
      arguments: args,
      ...extra,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
      },
    }),
  });
  return reply.json() as Json;
}

/** The result of an answer, which must be one. */
export function resultOf(answer: Json): Json {
  assert.ok(answer['result'], JSON.stringify(answer));
  return answer['result'] as Json;
}

/** The JSON-RPC error of an answer, which must be one. */
export function errorOf(answer: Json): Json {
  assert.ok(answer['error'], JSON.stringify(answer));
  return answer['error'] as Json;
}

/** `_meta["mhl/diagnostic"]` of a tool error, which the result must be. */
export function diagnostic(result: Json): Json {
  assert.equal(result['isError'], true, JSON.stringify(result));
  return (result['_meta'] as Json)['mhl/diagnostic'] as Json;
}

/** Retry material accepting the pause of `state` with `content`. */
export const accept = (state: string, content: Json) => ({
  inputResponses: { [KEY]: { action: 'accept', content } },
  requestState: state,
});

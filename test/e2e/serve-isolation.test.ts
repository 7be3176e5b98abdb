/**
 * What a served process does not share (issue 10): `kv` memories belong to one run, so two
 * callers of one served workflow that reads, writes and reads back a kv memory never see each
 * other's values, whether they are two principals (`--token` + `--principal-header`, stateless
 * requests) or two legacy sessions, by synchronous calls or async runs; and the folders the
 * server makes for itself in $TMPDIR are gone when it stops. The built CLI over real HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';
import {
  inLegacySession,
  modern,
  openLegacySession,
  type Reply,
  serverStarter,
} from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/kv');
const start = serverStarter(FOLDER);

interface Seen {
  readonly before: unknown;
  readonly after: unknown;
}

/** A JSON-RPC reply's `result`, from a JSON body or the last SSE event; fails on an error. */
function resultOf(reply: Reply): Record<string, unknown> {
  const text = reply.headers['content-type']?.startsWith('text/event-stream')
    ? (reply.text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .at(-1)
        ?.slice(5) ?? '')
    : reply.text;
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.equal(body['error'], undefined, reply.text);
  return body['result'] as Record<string, unknown>;
}

/** What one synchronous call of Remember saw: the value before its write, and after it. */
function seenIn(result: Record<string, unknown>): Seen {
  assert.notEqual(result['isError'], true, JSON.stringify(result));
  const vars = result['structuredContent'] as Record<string, unknown>;
  return { before: vars['before'], after: vars['after'] };
}

describe('kv memories are scoped to one run', () => {
  it('two principals calling the same workflow never see each other’s kv values', async () => {
    const server = start(['--token', 'k', '--principal-header', 'X-Who']);
    const port = await server.ready;
    const as = (who: string) => ({ authorization: 'Bearer k', 'x-who': who });
    const remember = async (who: string, secret: string): Promise<Seen> =>
      seenIn(
        resultOf(
          await modern(port, 'tools/call', { name: 'Remember', arguments: { secret } }, as(who)),
        ),
      );
    assert.deepEqual(await remember('ann', 'ann-secret'), { before: 'none', after: 'ann-secret' });
    assert.deepEqual(await remember('bob', 'bob-secret'), { before: 'none', after: 'bob-secret' });
    // Not even the same caller's earlier run: a kv memory lives and dies with its run.
    assert.deepEqual(await remember('ann', 'ann-again'), { before: 'none', after: 'ann-again' });
    // Calls at the same time, too.
    const both = await Promise.all([remember('ann', 'a3'), remember('bob', 'b3')]);
    assert.deepEqual(both, [
      { before: 'none', after: 'a3' },
      { before: 'none', after: 'b3' },
    ]);

    // Async runs: each run's kv is its own as well.
    const runOf = async (who: string, secret: string): Promise<Seen> => {
      const started = resultOf(
        await modern(port, 'run/start', { name: 'Remember', arguments: { secret } }, as(who)),
      );
      const runId = started['runId'] as string;
      const done = await until(
        async () => {
          const view = resultOf(await modern(port, 'run/status', { runId }, as(who)));
          if (view['state'] === 'completed') return view;
          assert.ok(['working', 'queued'].includes(String(view['state'])), JSON.stringify(view));
          return undefined;
        },
        { what: `${who}'s run to complete`, timeoutMs: 30_000 },
      );
      const vars = done['vars'] as Record<string, unknown>;
      return { before: vars['before'], after: vars['after'] };
    };
    assert.deepEqual(await runOf('ann', 'run-a'), { before: 'none', after: 'run-a' });
    assert.deepEqual(await runOf('bob', 'run-b'), { before: 'none', after: 'run-b' });
  });

  it('two legacy sessions calling the same workflow never see each other’s kv values', async () => {
    const server = start();
    const port = await server.ready;
    const [one, two] = await Promise.all([openLegacySession(port), openLegacySession(port)]);
    const remember = async (session: string, secret: string): Promise<Seen> =>
      seenIn(
        resultOf(
          await inLegacySession(port, session, 'tools/call', {
            name: 'Remember',
            arguments: { secret },
          }),
        ),
      );
    assert.deepEqual(await remember(one, 'first'), { before: 'none', after: 'first' });
    assert.deepEqual(await remember(two, 'second'), { before: 'none', after: 'second' });
    assert.deepEqual(await remember(one, 'third'), { before: 'none', after: 'third' });
  });

  it('removes the folders it made in $TMPDIR (agent caches, temporary run state) when it stops', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'mhl-iso-tmp-'));
    const server = start([], { TMPDIR: tmp });
    const port = await server.ready;
    const reply = await modern(port, 'tools/call', {
      name: 'Remember',
      arguments: { secret: 's' },
    });
    seenIn(resultOf(reply));
    const made = readdirSync(tmp).sort();
    assert.ok(
      made.some((name) => name.startsWith('mhl-cache-')),
      `the server owns a cache root: ${made}`,
    );
    assert.equal(await server.stop('SIGTERM'), 0);
    assert.deepEqual(readdirSync(tmp), []);
  });
});

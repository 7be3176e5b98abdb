/**
 * Two mhl server processes on one workspace (same planning root, same key), each driven by its
 * own SDK client: concurrent mutating calls on one session from both are serialised by the
 * folder's lock file, so none fails (no lost update, no false SEAL_MISMATCH from a torn read),
 * every event lands and `seq` counts every write.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import type { ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';

const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'corpus');
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';
const json = (r: ToolCallResult) => JSON.parse(text(r));

describe('sessions across two server processes', () => {
  let dir: string;
  let a: Connected;
  let b: Connected;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-mp-'));
    [a, b] = await Promise.all([startMhl(CLI, CORPUS, dir), startMhl(CLI, CORPUS, dir)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('concurrent record_usage from both processes: no failure, every event, seq counts all', async () => {
    const index = json(await a.call('start_session', { workflow_id: 'ponytail' })).session_index;
    const n = await b.call('next_activity', {
      session_index: index,
      activity_id: 'intake-and-scope',
    });
    assert.equal(n.isError, undefined, text(n));
    const seq0 = json(await a.call('inspect_session', { session_index: index, view: 'identity' }))
      .seq as number;
    const N = 25;
    const calls = [];
    for (let i = 0; i < N; i++) {
      for (const [name, server] of [
        ['a', a],
        ['b', b],
      ] as const) {
        calls.push(
          server.call('record_usage', {
            session_index: index,
            activity: 'intake-and-scope',
            usage: { tokens: i, from: name },
            basis: 'delta',
          }),
        );
      }
      // Reads from both processes run beside the writes: none may see a torn pair.
      calls.push(b.call('inspect_session', { session_index: index, view: 'identity' }));
    }
    const results = await Promise.all(calls);
    const failed = results.filter((r) => r.isError === true).map(text);
    assert.deepEqual(failed, []);
    const identity = json(
      await b.call('inspect_session', { session_index: index, view: 'identity' }),
    );
    assert.equal(identity.seq, seq0 + 2 * N);
    const last = json(
      await a.call('record_usage', {
        session_index: index,
        activity: 'intake-and-scope',
        usage: { tokens: 0 },
        basis: 'delta',
      }),
    );
    assert.equal(last.usage_events, 2 * N + 1, 'every usage event kept');
  });
});

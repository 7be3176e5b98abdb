/**
 * Sealed sessions under tampering, through the built CLI and the SDK client: changing any one
 * byte of `session.json`, or of `.session-token`, makes every call on the session fail with
 * SEAL_MISMATCH before anything is parsed or written (the files stay exactly as tampered), and
 * restoring the bytes restores the session with its state unchanged. Missing, truncated and
 * padded seals are refused the same way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import type { ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';

const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'corpus');

const code = (r: ToolCallResult) =>
  (r._meta?.['mhl/diagnostic'] as { code?: string } | undefined)?.code;
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';

describe('sessions seal', () => {
  let dir: string;
  let server: Connected;
  let index: string;
  let folder: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-seal-'));
    server = await startMhl(CLI, CORPUS, dir);
    const started = JSON.parse(
      text(await server.call('start_session', { workflow_id: 'ponytail' })),
    );
    index = started.session_index;
    folder = started.planning_folder_path;
    await server.call('next_activity', { session_index: index, activity_id: 'intake-and-scope' });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const files = () => ({
    json: readFileSync(join(folder, 'session.json')),
    seal: readFileSync(join(folder, '.session-token')),
  });
  // A mutating call: were the seal not checked first, it would write a new state.
  const move = () =>
    server.call('next_activity', { session_index: index, activity_id: 'apply-ladder' });

  async function assertRefused(what: string) {
    const before = files();
    const r = await move();
    assert.equal(r.isError, true, what);
    assert.equal(code(r), 'SEAL_MISMATCH', what);
    const now = files();
    assert.ok(
      now.json.equals(before.json) && now.seal.equals(before.seal),
      `${what}: nothing written`,
    );
  }

  test('writes both files 0600 and the seal is 64 hex digits', () => {
    for (const name of ['session.json', '.session-token']) {
      assert.equal(statSync(join(folder, name)).mode & 0o777, 0o600, name);
    }
    assert.match(files().seal.toString(), /^[0-9a-f]{64}$/);
  });

  test('any changed byte of session.json is SEAL_MISMATCH, with no state change', async () => {
    const original = files();
    for (let i = 0; i < original.json.length; i++) {
      const bad = Buffer.from(original.json);
      bad[i] = (bad[i] as number) ^ (i % 2 === 0 ? 0x01 : 0x20);
      writeFileSync(join(folder, 'session.json'), bad);
      await assertRefused(`session.json byte ${i}`);
    }
    writeFileSync(join(folder, 'session.json'), original.json);
    const status = await server.call('inspect_session', { session_index: index, view: 'identity' });
    assert.equal(status.isError, undefined);
    assert.equal(JSON.parse(text(status)).seq, JSON.parse(original.json.toString()).seq);
    assert.ok(files().json.equals(original.json));
  });

  test('any changed byte of .session-token is SEAL_MISMATCH, with no state change', async () => {
    const original = files();
    for (let i = 0; i < original.seal.length; i++) {
      const bad = Buffer.from(original.seal);
      // Another hex digit, so the token still looks like a seal.
      bad[i] = bad[i] === 0x30 ? 0x31 : 0x30;
      writeFileSync(join(folder, '.session-token'), bad);
      await assertRefused(`.session-token byte ${i}`);
    }
    for (const [what, bytes] of [
      ['truncated', original.seal.subarray(0, 63)],
      ['padded', Buffer.concat([original.seal, Buffer.from('0')])],
      ['empty', Buffer.alloc(0)],
      ['seal of other bytes', Buffer.from('0'.repeat(64))],
      // Only the writer's shapes verify: a good seal beside a junk or blank line does not.
      ['junk line after', Buffer.concat([original.seal, Buffer.from('\njunk')])],
      ['junk line before', Buffer.concat([Buffer.from('junk\n'), original.seal])],
      ['blank line between', Buffer.concat([original.seal, Buffer.from('\n\n'), original.seal])],
      ['upper-case hex', Buffer.from(original.seal.toString().toUpperCase())],
    ] as const) {
      writeFileSync(join(folder, '.session-token'), bytes);
      await assertRefused(what);
    }
    unlinkSync(join(folder, '.session-token'));
    const r = await move();
    assert.equal(code(r), 'SEAL_MISMATCH', 'missing seal');
    writeFileSync(join(folder, '.session-token'), original.seal);
    const ok = await move();
    assert.equal(ok.isError, undefined, 'restored bytes verify again');
  });

  test('a malformed session_index is refused by the schema and leaks no path', async () => {
    for (const bad of ['abc', 'AAAAA1', '../../etc', 'A'.repeat(7)]) {
      const r = await server.call('next_activity', { session_index: bad, activity_id: 'x' });
      assert.equal(r.isError, true);
      assert.equal(code(r), 'INVALID_ARGUMENT');
      assert.ok(!text(r).includes(dir), 'no server path in the message');
    }
    const unknown = await server.call('get_workflow', { session_index: 'AAAAAA' });
    assert.equal(code(unknown), 'NOT_FOUND');
  });
});

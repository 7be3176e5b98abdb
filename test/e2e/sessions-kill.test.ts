/**
 * SIGKILL during session writes: a real child process (test/helpers/session-writer.mjs, the
 * built store) advances one sealed session in a loop and is killed at a random moment, 200
 * times. After every kill the folder must hold a complete sealed state: the seal covers the
 * exact bytes, the state parses, and it is no older than the last write the child reported
 * done. A state accepted without its seal fails the test; so does a kill that leaves a pair that
 * does not verify (SEAL_MISMATCH), which the two-seal write order rules out.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadKey } from '../../src/surfaces/sessions/store/key.js';
import { SessionStore } from '../../src/surfaces/sessions/store/session-store.js';

const WRITER = join(import.meta.dirname, '..', 'helpers', 'session-writer.mjs');
const KILLS = Number(process.env['SESSIONS_KILLS'] ?? 200);

/** Runs the writer until it printed `ready`, kills it `delayMs` later; the last seq it reported. */
function runAndKill(planningRoot: string, keyDir: string, delayMs: number): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [WRITER, planningRoot, keyDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '' },
    });
    let out = '';
    let err = '';
    let last = -1;
    child.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      const first = out === '';
      out += d;
      for (const m of out.matchAll(/seq (\d+)/g)) last = Math.max(last, Number(m[1]));
      if (first && out.startsWith('ready')) setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.on('close', (codeOrNull, signal) => {
      if (signal !== 'SIGKILL') fail(new Error(`writer exited ${codeOrNull}: ${err}`));
      else done(last);
    });
  });
}

describe('sessions store under SIGKILL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-kill-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test(`${KILLS} random kills never leave a state accepted without its seal`, async () => {
    const planningRoot = join(dir, 'planning');
    const keyDir = join(dir, 'key');
    const folder = join(planningRoot, 'killed');
    let accepted = 0;
    let refused = 0;
    let maxSeq = 0;
    // A fixed seed: the kill moments are random but the run can be replayed.
    let seed = Number(process.env['SESSIONS_KILL_SEED'] ?? 20261201);
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < KILLS; i++) {
      const reported = await runAndKill(planningRoot, keyDir, Math.floor(random() * 12));
      const store = new SessionStore({ planningRoot, key: loadKey(keyDir) });
      let state: ReturnType<SessionStore['readFolder']> | undefined;
      try {
        state = store.readFolder(folder);
      } catch (e) {
        assert.equal((e as { code?: string }).code, 'SEAL_MISMATCH', `kill ${i}`);
      }
      if (state === undefined) {
        refused++;
        continue;
      }
      accepted++;
      const bytes = readFileSync(join(folder, 'session.json'));
      const seal = readFileSync(join(folder, '.session-token'), 'utf8');
      const expected = createHmac('sha256', loadKey(keyDir)).update(bytes).digest('hex');
      assert.ok(
        seal.trim().split('\n').includes(expected),
        `kill ${i}: an accepted state is exactly the sealed bytes`,
      );
      assert.deepEqual(JSON.parse(bytes.toString()).seq, state.seq);
      assert.ok(
        state.seq >= reported,
        `kill ${i}: a write reported done survives (${state.seq} < ${reported})`,
      );
      maxSeq = Math.max(maxSeq, state.seq);
      const strays = readdirSync(folder).filter(
        (n) => n !== 'session.json' && n !== '.session-token' && !n.startsWith('.tmp-'),
      );
      assert.deepEqual(strays, []);
    }
    assert.equal(accepted + refused, KILLS);
    assert.ok(maxSeq > 0, 'kills landed while writes were under way');
    // The seal file names the old and the new seal across the file's rename: no kill loses both.
    assert.equal(refused, 0, 'every kill left a pair that verifies');
    process.stdout.write(
      `# kills ${KILLS}: ${accepted} sealed states, ${refused} SEAL_MISMATCH, max seq ${maxSeq}\n`,
    );
  });
});

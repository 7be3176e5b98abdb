/**
 * The vault lock behind a dead holder: of many waiters that all find the same dead pid, the
 * takeover lets exactly one hold the lock at a time, leaves no tomb behind, and never removes
 * a live holder's lock.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { link, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { type LockFs, withVaultLock } from '../../../src/secrets/lock.js';
import { tempDir } from '../../helpers/cli.js';

/** The pid of a process that has exited. */
function deadPid(): number {
  const gone = spawnSync(process.execPath, ['-e', '']);
  assert.equal(gone.status, 0);
  return gone.pid as number;
}

describe('withVaultLock', () => {
  it('lets one waiter at a time through behind a dead holder, and leaves no tomb', async () => {
    const dir = tempDir('mhl-lock-');
    const file = join(dir, 'vault.lock');
    writeFileSync(file, String(deadPid()), { mode: 0o600 });
    let inside = 0;
    let most = 0;
    const entered: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        withVaultLock(file, async () => {
          inside += 1;
          most = Math.max(most, inside);
          entered.push(i);
          // Yield several turns, so a second holder would be seen inside.
          for (let t = 0; t < 5; t++) await tick();
          inside -= 1;
        }),
      ),
    );
    assert.equal(most, 1, 'never two holders at once');
    assert.equal(entered.length, 8);
    assert.equal(existsSync(file), false);
    assert.deepEqual(readdirSync(dir), [], 'no tomb left behind');
  });

  it('leaves a lock alone that another waiter took over while this one looked (ordered race)', async () => {
    const dir = tempDir('mhl-lock-');
    const file = join(dir, 'vault.lock');
    const dead = String(deadPid());
    writeFileSync(file, dead, { mode: 0o600 });
    // Waiter 0 reads the dead pid, then is held until waiter 1 has taken the lock over and
    // entered; waiter 1 stays inside until waiter 0 has tried again after its look.
    let slowRead = true;
    let inside = 0;
    let most = 0;
    let entered!: () => void;
    const oneEntered = new Promise<void>((done) => {
      entered = done;
    });
    let retried!: () => void;
    const zeroRetried = new Promise<void>((done) => {
      retried = done;
    });
    const slow: LockFs = {
      open: async (...args: Parameters<typeof open>) => {
        if (slowRead) return open(...args);
        try {
          return await open(...args);
        } finally {
          retried();
        }
      },
      readFile: async (path, encoding) => {
        const text = await readFile(path, encoding);
        if (path === file && text === dead && slowRead) {
          await oneEntered;
          slowRead = false;
        }
        return text;
      },
      unlink,
      link,
    };
    const task = (first: boolean) => async () => {
      inside += 1;
      most = Math.max(most, inside);
      if (first) {
        entered();
        await zeroRetried;
        for (let t = 0; t < 5; t++) await tick();
      }
      inside -= 1;
    };
    const zero = withVaultLock(file, task(false), slow);
    await tick();
    await withVaultLock(file, task(true));
    await zero;
    assert.equal(most, 1, 'never two holders at once');
    assert.deepEqual(readdirSync(dir), []);
  });

  it('never takes over a live holder', async () => {
    const dir = tempDir('mhl-lock-');
    const file = join(dir, 'vault.lock');
    writeFileSync(file, String(process.pid), { mode: 0o600 });
    await assert.rejects(
      withVaultLock(file, async () => undefined),
      (error: { code?: string }) => error.code === 'VAULT_BUSY',
    );
    assert.equal(existsSync(file), true);
  });
});

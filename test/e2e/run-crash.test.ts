/**
 * Crash safety: `mhl run` is killed with SIGKILL at 50 random moments of a 20-step pipeline and
 * resumed each time. Every step appends one line to a side-effect file; after each kill we read
 * the checkpoint. The invariant: an attempt never re-runs a step whose checkpoint was written,
 * and at the end each step's effect happened exactly once plus once per kill that caught it
 * after its effect and before its checkpoint.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, tempDir } from '../helpers/cli.js';

const STEPS = 20;
const KILLS = 50;

function pipelineSource(): string {
  const steps = Array.from(
    { length: STEPS },
    (_, i) =>
      `    step S${i + 1} {\n        time.sleep(15ms)\n        fs.append("effects.log", "S${i + 1}\\n")\n        count += 1\n        time.sleep(15ms)\n    }`,
  );
  return `pipeline Twenty {\n    var count = 0\n${steps.join('\n')}\n}\n`;
}

/** Runs `mhl run --resume --session <s>`, killing it after `killAfterMs` unless it exits first. */
function attempt(
  dir: string,
  session: string,
  killAfterMs: number,
): Promise<{ killed: boolean; code: number | null }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [CLI, 'run', 'twenty.mh', '--resume', '--session', session, '--format', 'json'],
      { cwd: dir, stdio: 'ignore' },
    );
    let killed = false;
    const timer = setTimeout(() => {
      killed = child.kill('SIGKILL');
    }, killAfterMs);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ killed: killed && code === null, code });
    });
  });
}

function checkpointed(dir: string, session: string): string[] {
  const file = join(dir, '.mhl/state', session, 'Twenty.json');
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, 'utf8')) as { completed_steps: string[] }).completed_steps;
}

function effects(dir: string): string[] {
  const file = join(dir, 'effects.log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('mhl run under SIGKILL', () => {
  it(`resumes after ${KILLS} random kills without repeating a checkpointed step`, async (t) => {
    let dir = tempDir('mhl-crash-');
    writeFileSync(join(dir, 'twenty.mh'), pipelineSource());
    let session = 'crash0';
    let extra = new Map<string, number>();
    let before = { effects: 0, completed: [] as string[] };
    let kills = 0;
    let sessions = 1;

    const verifyCompleted = () => {
      const counts = new Map<string, number>();
      for (const e of effects(dir)) counts.set(e, (counts.get(e) ?? 0) + 1);
      for (let i = 1; i <= STEPS; i++) {
        const s = `S${i}`;
        assert.equal(
          counts.get(s),
          1 + (extra.get(s) ?? 0),
          `${s} ran ${counts.get(s)} times in ${session}`,
        );
      }
      const result = JSON.parse(
        readFileSync(join(dir, '.mhl/state', session, 'result.json'), 'utf8'),
      ) as { variables: { count: number } };
      assert.ok(result.variables.count >= STEPS);
    };

    while (kills < KILLS) {
      const run = await attempt(dir, session, 150 + Math.floor(Math.random() * 450));
      // A kill that lands after the result was written caught a finished run.
      const killed = run.killed && !existsSync(join(dir, '.mhl/state', session, 'result.json'));
      const now = effects(dir);
      const during = now.slice(before.effects);
      const completed = killed
        ? checkpointed(dir, session)
        : Array.from({ length: STEPS }, (_, i) => `S${i + 1}`);
      // Nothing that was already checkpointed ran again in this attempt.
      for (const s of during)
        assert.ok(
          !before.completed.includes(s),
          `${s} ran again after its checkpoint (attempt ${kills + 1})`,
        );
      // At most one step ran without reaching its checkpoint: the one the kill interrupted.
      const unfinished = during.filter((s) => !completed.includes(s));
      assert.ok(unfinished.length <= 1, `steps ${unfinished.join(', ')} ran without checkpoints`);
      for (const s of unfinished) extra.set(s, (extra.get(s) ?? 0) + 1);
      if (!killed) {
        verifyCompleted();
        dir = tempDir('mhl-crash-');
        writeFileSync(join(dir, 'twenty.mh'), pipelineSource());
        session = `crash${sessions++}`;
        extra = new Map();
        before = { effects: 0, completed: [] };
        continue;
      }
      kills++;
      before = { effects: now.length, completed };
    }
    const final = await attempt(dir, session, 60_000);
    assert.equal(final.code, 0);
    verifyCompleted();
    t.diagnostic(`${kills} kills over ${sessions} sessions`);
  });
});

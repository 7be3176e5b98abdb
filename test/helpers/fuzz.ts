/**
 * How the property tests under test/fuzz run: a small count in `npm test` (so CI stays fast) and
 * a large one under `npm run fuzz`, from the same properties. Every failure is reported with its
 * seed and shrink path, and `FUZZ_SEED` / `FUZZ_PATH` replay it exactly:
 *
 *   FUZZ_RUNS   runs per property (overrides each property's CI count)
 *   FUZZ_SEED   the seed to replay (printed on every run, and in every failure)
 *   FUZZ_PATH   the shrink path of a failure (printed with it); replays only the counterexample
 */
import type { TestContext } from 'node:test';
import type { IAsyncProperty, IProperty } from 'fast-check';
import * as fc from 'fast-check';

export { fc };

function envInt(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got ${text}`);
  return value;
}

/** The number of runs a property gets: FUZZ_RUNS when set, else its own CI count. */
export function runsFor(ciRuns: number): number {
  return envInt('FUZZ_RUNS') ?? ciRuns;
}

/** True when FUZZ_PATH replays one counterexample (so counts over a whole run mean nothing). */
export function replaying(): boolean {
  return (process.env['FUZZ_PATH'] ?? '') !== '';
}

/**
 * Checks `property` with `ciRuns` runs (or FUZZ_RUNS) and fails the test with the seed, the
 * path and the counterexample, so the failure replays with FUZZ_SEED=… FUZZ_PATH=….
 */
export async function holds<Ts>(
  t: TestContext,
  property: IAsyncProperty<Ts> | IProperty<Ts>,
  ciRuns: number,
): Promise<void> {
  const seed = envInt('FUZZ_SEED') ?? (Date.now() ^ (Math.random() * 0x1_0000_0000)) | 0;
  const path = process.env['FUZZ_PATH'];
  const numRuns = runsFor(ciRuns);
  t.diagnostic(`seed ${seed}, ${numRuns} runs (replay with FUZZ_SEED=${seed})`);
  const details = await fc.check(property, {
    seed,
    numRuns,
    ...(path === undefined || path === '' ? {} : { path }),
    // A run that hangs fails with its seed instead of running into the test timeout.
    timeout: 15_000,
    // Under `npm test` (2 min per test), shrinking a failure whose every step waits on such a
    // timeout stops in time to report the best counterexample so far, with its seed and path.
    ...(envInt('FUZZ_RUNS') === undefined ? { interruptAfterTimeLimit: 90_000 } : {}),
  });
  if (!details.failed) return;
  const replay = `FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ''}`;
  const report = fc.defaultReportMessage(details) ?? 'property failed';
  const cause = details.errorInstance;
  const why = cause instanceof Error ? cause.message : String(cause);
  // On stderr too, so a failure deep in a long `npm run fuzz` is easy to find and replay.
  process.stderr.write(`\nfuzz failure in "${t.name}": replay with ${replay}\n`);
  throw new Error(`${t.name}: replay with ${replay}\n${why}\n${report}`);
}

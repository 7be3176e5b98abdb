// Checkpoint write cost: 1,000 sequential CheckpointStore.save calls of a realistic record (about
// 20 variables, two registered secrets) on the dir store, against a bare open → write → fsync →
// close → rename of the same bytes in the same run (absolute figures drift with the disk; the
// ratio does not). The dir store also fsyncs the directory after the rename, so a second baseline
// adds that fsync: the gap to it is the store's own overhead. A memory-store figure isolates the
// CPU part (validation, redaction, JSON).
// Writes under bench/out/ so fsync hits the real disk, not a tmpfs. One JSON line per figure.
import { mkdirSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointStore } from '../dist/runtime/checkpoints/checkpoints.js';
import { newObject } from '../dist/runtime/interpreter/values.js';
import { Redactor } from '../dist/runtime/services/redact.js';
import { DirStore, MemoryStore } from '../dist/store/index.js';

const OPS = 1_000;
const WARMUP = 50;
const ROUNDS = 3;
const SESSION = '0123456789abcdef0123456789abcdef';
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, 'out', `checkpoint-write-${process.pid}`);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A checkpoint the size of a mid-run build pipeline: paths, logs, lists, a nested report. */
function draft(i) {
  const lines = Array.from({ length: 12 }, (_, n) => `${(i * 31 + n).toString(16)} fix: step ${n}`);
  const variables = {
    __last_step: 'Verify',
    repo: '/home/dev/src/project',
    branch: 'feature/checkpoints',
    commits: 12,
    recent: lines,
    changed: ['src/a.ts', 'src/b.ts', 'test/a.test.ts'],
    largest: ['4120 dist/bundle.js', '880 package-lock.json'],
    summary: `Iteration ${i}: ${'all checks passed, '.repeat(20)}done`,
    token_header: 'Bearer ghp_0123456789abcdefABCDEF0123456789',
    api_url: 'https://api.example.test/v2/builds',
    attempt: i,
    ok: true,
    ratio: 0.731,
    labels: newObject([
      ['team', 'runtime'],
      ['tier', 'gold'],
    ]),
    report: newObject([
      ['tests', 412],
      ['failed', 0],
      ['coverage', newObject([['lines', 91.2]])],
    ]),
    plan: `Plan:\n${'- refactor the store layer\n'.repeat(10)}`,
    reviewer: 'octocat',
    started_at: '2026-03-01T10:00:00.000Z',
    tags: ['ci', 'nightly', 'linux'],
    notes: null,
  };
  return {
    last_step: 'Verify',
    next_step: 'Publish',
    completed_steps: ['History', 'Status', 'Largest', 'Verify'],
    variables,
    ttl_seconds: 86_400,
    digest: 'f'.repeat(64),
  };
}

function redactor() {
  const r = new Redactor();
  r.register('ghp_0123456789abcdefABCDEF0123456789');
  r.register('s3cr3t-database-password');
  return r;
}

async function timeSaves(state) {
  for (let i = 0; i < WARMUP; i++) await state.save(SESSION, 'Build', draft(i));
  const drafts = Array.from({ length: OPS }, (_, i) => draft(i));
  const started = process.hrtime.bigint();
  for (const d of drafts) await state.save(SESSION, 'Build', d);
  return Number(process.hrtime.bigint() - started) / 1e3 / OPS;
}

/** The same bytes with no store: open, write, fsync, close, rename (then fsync the directory). */
async function timeBare(dir, bytes, syncDir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, 'Build.json');
  const write = async (n) => {
    const tmp = join(dir, `.tmp-${n}`);
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, target);
    if (syncDir) {
      const handle = await open(dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  };
  for (let i = 0; i < WARMUP; i++) await write(i);
  const started = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) await write(i);
  return Number(process.hrtime.bigint() - started) / 1e3 / OPS;
}

rmSync(root, { recursive: true, force: true });
try {
  const dirStore = new DirStore(join(root, 'store'));
  const onDisk = new CheckpointStore(dirStore, redactor());
  await onDisk.save(SESSION, 'Build', draft(0));
  const bytes = Buffer.from(await dirStore.get(`state/${SESSION}/Build.json`), 'utf8');
  const inMemory = new CheckpointStore(new MemoryStore(), redactor());

  const samples = { dir: [], bare: [], bareDirSync: [], memory: [] };
  for (let round = 0; round < ROUNDS; round++) {
    samples.bare.push(await timeBare(join(root, 'bare'), bytes, false));
    samples.bareDirSync.push(await timeBare(join(root, 'bare'), bytes, true));
    samples.dir.push(await timeSaves(onDisk));
    samples.memory.push(await timeSaves(inMemory));
  }
  const figures = {
    checkpoint_save_dir_store: median(samples.dir),
    bare_write_fsync_rename: median(samples.bare),
    bare_write_fsync_rename_dirsync: median(samples.bareDirSync),
    checkpoint_save_memory_store: median(samples.memory),
  };
  for (const [figure, perOp] of Object.entries(figures)) {
    const line = { bench: 'checkpoint-write', figure, per_op_us: Math.round(perOp), ops: OPS };
    console.log(JSON.stringify({ ...line, bytes: bytes.length, rounds: ROUNDS }));
  }
  console.log(
    JSON.stringify({
      bench: 'checkpoint-write',
      figure: 'save_vs_bare',
      ratio: +(figures.checkpoint_save_dir_store / figures.bare_write_fsync_rename).toFixed(2),
    }),
  );
  console.log(
    JSON.stringify({
      bench: 'checkpoint-write',
      figure: 'save_vs_bare_dirsync',
      ratio: +(figures.checkpoint_save_dir_store / figures.bare_write_fsync_rename_dirsync).toFixed(
        2,
      ),
    }),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}

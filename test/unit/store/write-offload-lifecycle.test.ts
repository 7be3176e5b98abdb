/**
 * How the write worker (`src/store/write-offload.ts`) starts, stops and dies, on real threads
 * and files: it starts after `startAfter` writes, stops when idle and a later write starts
 * another, a worker killed mid-write loses nothing (the write lands once, no temp file stays), a
 * stopped worker whose exit arrives late leaves its successor's write alone, an abort in flight
 * keeps the old file, no abort listener outlives its write, and a rename across devices copies.
 *
 * To hold a worker at a known point, a test's `spawn` wraps the real worker code with gates,
 * FIFOs in a gate folder named after a write's target. At `<name>.before` the worker blocks
 * opening the FIFO before it writes, until the test opens it too; at `<name>.after` it does the
 * same once it has replied. It tells the test first. A terminated worker blocked there cannot
 * exit until the test releases it, so its exit comes when the test says.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { getEventListeners, once } from 'node:events';
import {
  closeSync,
  constants,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { NODE_FS, WriteOffloader, writeAtomic } from '../../../src/store/index.js';
import { tempDir as makeTempDir, REPO_ROOT } from '../../helpers/cli.js';
import { needMount } from '../../helpers/tmpfs.js';

const roots: string[] = [];
const offloaders: WriteOffloader[] = [];
/** Gates made; every one is released before the workers stop, even after a failure. */
const fifos: string[] = [];
/** Gates released: held open, so a worker that reaches one late still passes. */
const opened: number[] = [];
after(async () => {
  for (const fifo of fifos) release(fifo);
  await Promise.all(offloaders.map((o) => o.stop()));
  for (const fd of opened.splice(0)) closeSync(fd);
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = makeTempDir('mhl-offload-life-');
  roots.push(dir);
  return dir;
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** An offloader the suite stops at the end, its workers recorded in `workers`. */
function offloaderWith(
  workers: Worker[],
  options: { startAfter?: number; idleMs?: number; gates?: string } = {},
): WriteOffloader {
  const { gates, ...rest } = options;
  const offloader = new WriteOffloader({
    startAfter: 0,
    ...rest,
    spawn: (source: string, workerOptions: WorkerOptions) => {
      const code = gates === undefined ? source : gatedSource(gates, source);
      const worker = new Worker(code, workerOptions);
      workers.push(worker);
      return worker;
    },
  });
  offloaders.push(offloader);
  return offloader;
}

/** The worker's code with a gate before its write and one after its reply (see the header). */
function gatedSource(gates: string, source: string): string {
  const gate = (when: 'before' | 'after') => `{
  const { parentPort } = require('node:worker_threads');
  const fs = require('node:fs');
  const { basename, join } = require('node:path');
  parentPort.on('message', (m) => {
    const gate = join(${JSON.stringify(gates)}, basename(m.path) + '.${when}');
    if (!fs.existsSync(gate)) return;
    ${
      when === 'before'
        ? `parentPort.postMessage({ id: -1, held: 'before' });
    fs.closeSync(fs.openSync(gate, 'r'));`
        : `parentPort.postMessage({ id: -1, held: 'after' });
    fs.closeSync(fs.openSync(gate, 'r'));`
    }
  });
}`;
  return `'use strict';\n${gate('before')}\n${source}\n${gate('after')}\n`;
}

/** Makes a gate: the FIFO a worker blocks on when it writes `name`. */
function gate(gates: string, name: string, when: 'before' | 'after'): string {
  const fifo = join(gates, `${name}.${when}`);
  const made = spawnSync('mkfifo', ['-m', '600', fifo]);
  assert.equal(made.status, 0, `mkfifo ${fifo}`);
  fifos.push(fifo);
  return fifo;
}

/** Lets a worker through `fifo`, whether it waits there already or gets there later. */
function release(fifo: string): void {
  // Linux opens a FIFO read-write without waiting, and while that stays open a reader's open
  // returns at once.
  opened.push(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
}

/** Resolves once `worker` says a write of it is held at a `when` gate. */
function held(worker: Worker | undefined, when: 'before' | 'after'): Promise<void> {
  assert.ok(worker);
  return new Promise((resolve) => {
    const onMessage = (m: { id: number; held?: string }) => {
      if (m.id !== -1 || m.held !== when) return;
      worker.off('message', onMessage);
      resolve();
    };
    worker.on('message', onMessage);
  });
}

/**
 * One round of the race: worker A is stopped while idle but stuck in a gate, B starts and takes
 * a write, then A exits. 'missed' when A exited before B took the write (nothing raced).
 */
async function lateExitRound(): Promise<'raced' | 'missed'> {
  const workers: Worker[] = [];
  const gates = tempDir();
  const offloader = offloaderWith(workers, { gates });
  const dir = tempDir();
  assert.equal(await offloader.start(), true);
  const [old] = workers;
  assert.ok(old);
  let oldExited = false;
  old.once('exit', () => {
    oldExited = true;
  });
  // A replies, then sticks in a gate: idle to the offloader, yet slow to exit.
  const oldGate = gate(gates, 'one', 'after');
  const oldHeld = held(old, 'after');
  const one = offloader.write(join(dir, '.tmp-1'), join(dir, 'one'), bytes('1'), 0o600);
  assert.deepEqual(await one, { kind: 'written' });
  await oldHeld;
  const oldStopped = offloader.stop();
  assert.equal(
    offloader.write(join(dir, '.tmp-2'), join(dir, 'two'), bytes('2'), 0o600),
    undefined,
  );
  assert.equal(await offloader.start(), true);
  const newGate = gate(gates, 'three', 'before');
  const newHeld = held(workers[1], 'before');
  const three = offloader.write(join(dir, '.tmp-3'), join(dir, 'three'), bytes('3'), 0o600);
  assert.ok(three, 'the new worker takes the write');
  let threeSettled = false;
  void three.then(() => {
    threeSettled = true;
  });
  await newHeld;
  const raced = !oldExited;
  release(oldGate);
  await oldStopped;
  assert.equal(threeSettled, false, 'the old exit left the new write in flight');
  assert.equal(offloader.running, true, 'the old exit left the new worker running');
  release(newGate);
  assert.deepEqual(await three, { kind: 'written' });
  assert.equal(readFileSync(join(dir, 'three'), 'utf8'), '3');
  assert.deepEqual(readdirSync(dir).sort(), ['one', 'three']);
  await offloader.stop();
  return raced ? 'raced' : 'missed';
}

describe('WriteOffloader', () => {
  // An idle worker never holds the event loop open (the first test is about that), so a test
  // that waits on a worker's events holds it open itself.
  let keepAlive: NodeJS.Timeout | undefined;
  beforeEach(() => {
    keepAlive = setInterval(() => {}, 60_000);
  });
  afterEach(() => clearInterval(keepAlive));

  it('never keeps a process alive once its writes are done, even while its worker is starting', async () => {
    // The write that starts the worker is declined (written through the thread pool) and the
    // process then has nothing left to do: it must exit, not wait out the hour-long idle stop.
    const dir = tempDir();
    const store = pathToFileURL(join(REPO_ROOT, 'src/store/index.ts')).href;
    const script = `import { WriteOffloader } from ${JSON.stringify(store)};
const offloader = new WriteOffloader({ startAfter: 1, idleMs: 3_600_000 });
const declined = offloader.write(${JSON.stringify(join(dir, '.tmp-1'))}, ${JSON.stringify(join(dir, 'k'))}, new Uint8Array([1]), 0o600);
process.stdout.write(declined === undefined ? 'declined' : 'taken');`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    assert.equal(out, 'declined');
  });

  it('declines writes to the thread pool until it has seen startAfter of them', async () => {
    const workers: Worker[] = [];
    const offloader = offloaderWith(workers, { startAfter: 3 });
    const dir = tempDir();
    for (let i = 1; i <= 3; i++) {
      const tmp = join(dir, `.tmp-${i}`);
      assert.equal(offloader.write(tmp, join(dir, 'k'), bytes('v'), 0o600), undefined);
      assert.equal(workers.length, i === 3 ? 1 : 0, `workers after write ${i}`);
    }
    assert.equal(await offloader.start(), true);
    assert.equal(workers.length, 1);
  });

  it('stops an idle worker, and a later write starts another that writes', async () => {
    const workers: Worker[] = [];
    const offloader = offloaderWith(workers, { idleMs: 20 });
    const dir = tempDir();
    assert.equal(await offloader.start(), true);
    const first = offloader.write(join(dir, '.tmp-1'), join(dir, 'k'), bytes('one'), 0o600);
    assert.deepEqual(await first, { kind: 'written' });
    assert.ok(workers[0]);
    await once(workers[0], 'exit');
    assert.equal(offloader.running, false);
    assert.equal(
      offloader.write(join(dir, '.tmp-2'), join(dir, 'k'), bytes('two'), 0o600),
      undefined,
    );
    assert.equal(workers.length, 2);
    assert.equal(await offloader.start(), true);
    const third = offloader.write(join(dir, '.tmp-3'), join(dir, 'k'), bytes('three'), 0o600);
    assert.deepEqual(await third, { kind: 'written' });
    assert.equal(readFileSync(join(dir, 'k'), 'utf8'), 'three');
    assert.deepEqual(readdirSync(dir), ['k']);
  });

  it('settles a write lost when its worker is stopped holding it', async () => {
    const workers: Worker[] = [];
    const gates = tempDir();
    const offloader = offloaderWith(workers, { gates });
    const dir = tempDir();
    assert.equal(await offloader.start(), true);
    const fifo = gate(gates, 'k', 'before');
    const holding = held(workers[0], 'before');
    const write = offloader.write(join(dir, '.tmp-1'), join(dir, 'k'), bytes('v'), 0o600);
    await holding;
    const stopped = offloader.stop();
    release(fifo);
    assert.deepEqual(await write, { kind: 'lost' });
    await stopped;
    assert.deepEqual(readdirSync(dir), []);
  });

  it('lands a write once, leaving no temp file, when its worker is killed mid-write', async () => {
    const offloader = offloaderWith([]);
    const dir = tempDir();
    const path = join(dir, 'Build.json');
    assert.equal(await offloader.start(), true);
    await writeAtomic(NODE_FS, path, bytes('old'), { offloader });
    // Large enough that the worker is still writing it when the stop arrives.
    const data = Buffer.alloc(8 << 20, 7);
    const writing = writeAtomic(NODE_FS, path, data, { offloader });
    const stopped = offloader.stop();
    await writing;
    await stopped;
    assert.ok(readFileSync(path).equals(data), 'the new bytes, whole');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['Build.json']);
  });

  it('leaves the new worker its write when the stopped one exits after it started', async () => {
    // The old worker is stopped while it sits in a gate just after posting that it is there; on
    // a loaded machine it can be stopped in the instant before it blocks, and then exits too
    // soon to race anything. Such a round tests nothing, so another round is made.
    for (let round = 1; ; round++) {
      if ((await lateExitRound()) === 'raced') return;
      assert.ok(round < 5, 'the old worker blocked in its gate in one of five rounds');
    }
  });

  it('keeps the old file when the signal aborts while the write is in flight', async () => {
    const workers: Worker[] = [];
    const gates = tempDir();
    const offloader = offloaderWith(workers, { gates });
    const dir = tempDir();
    const path = join(dir, 'k');
    writeFileSync(path, 'old');
    assert.equal(await offloader.start(), true);
    const fifo = gate(gates, 'k', 'before');
    const holding = held(workers[0], 'before');
    const controller = new AbortController();
    const write = offloader.write(
      join(dir, '.tmp-1'),
      path,
      bytes('new'),
      0o600,
      controller.signal,
    );
    await holding;
    controller.abort();
    release(fifo);
    assert.deepEqual(await write, { kind: 'aborted', stranded: false });
    assert.equal(readFileSync(path, 'utf8'), 'old');
    assert.deepEqual(readdirSync(dir), ['k']);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('removes its abort listener once a write settles', async () => {
    const offloader = offloaderWith([]);
    const dir = tempDir();
    assert.equal(await offloader.start(), true);
    const { signal } = new AbortController();
    for (const text of ['one', 'two']) {
      const write = offloader.write(
        join(dir, `.tmp-${text}`),
        join(dir, 'k'),
        bytes(text),
        0o600,
        signal,
      );
      assert.ok(write);
      assert.equal(getEventListeners(signal, 'abort').length, 1, 'listening while in flight');
      assert.deepEqual(await write, { kind: 'written' });
      assert.equal(getEventListeners(signal, 'abort').length, 0, 'removed once settled');
    }
  });

  it('copies the file into place when the rename crosses devices (EXDEV)', async (t) => {
    const disk = needMount(t, '1m');
    if (!disk) return;
    const offloader = offloaderWith([]);
    const dir = tempDir();
    assert.notEqual(statSync(dir).dev, statSync(disk.dir).dev, 'two devices');
    const path = join(disk.dir, 'k');
    writeFileSync(path, 'old', { mode: 0o600 });
    assert.equal(await offloader.start(), true);
    const write = offloader.write(join(dir, '.tmp-1'), path, bytes('new'), 0o600);
    assert.deepEqual(await write, { kind: 'written' });
    assert.equal(readFileSync(path, 'utf8'), 'new');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), []);
  });
});

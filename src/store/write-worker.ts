/**
 * The source of the atomic-write worker thread that `write-offload.ts` starts, and the layout of
 * the shared memory the two threads talk through. The worker makes the same steps as
 * `writeAtomic` (temp file 0600 → write → fsync → close → rename → directory fsync for a new
 * name, the in-place rewrite on `EXDEV`, the temp file removed on failure) with synchronous calls
 * on its own thread, so a write costs the event loop one wake-up instead of one per system call,
 * and never blocks it.
 *
 * It is source text, evaluated by `new Worker(…, {eval: true})`, because the CLI is bundled
 * into chunks (scripts/bundle.mjs) and a worker needs a file or text of its own. Plain
 * CommonJS, no dependencies; `test/unit/store/write-offload.test.ts` runs it.
 *
 * No message crosses a port per write. The main thread puts the request in two shared buffers
 * (`workerData.control`, Int32 fields at the `CONTROL` indices; `workerData.region`, the bytes),
 * sets `STATE` to `REQUESTED` and wakes the worker (`Atomics.notify`), which sleeps in
 * `Atomics.wait` between writes; the worker puts the outcome in the same buffers, sets `STATE`
 * to `DONE` and wakes the main thread, which waits with `Atomics.waitAsync`. A request too big for
 * the region comes with a larger one, sent first on `workerData.regions` (a port the worker reads
 * with `receiveMessageOnPort`, never with listeners) and flagged by `NEW_REGION`.
 *
 * The region holds `tmp`, then `path` (UTF-8), then the data. After the write it holds the
 * error's `code`, `syscall` and `message` (UTF-8, each length in its field; -1 for an absent
 * `code` or `syscall`), the message cut to fit. `ABORT` is raised by the main thread while the
 * write is in flight; the worker reads it before the rename. `STRANDED` says the temp file could
 * not be removed (the disk turned read-only between the write and the rename).
 *
 * The worker hands each request, as `{tmp, path, data, mode}`, to its `parentPort`'s `message`
 * listeners, as if it had come as a message: its own listener writes it, and code wrapped
 * around this source (the lifecycle tests' gates) sees each write before and after.
 */

/** Indices of the Int32 control fields shared by the main thread and the worker. */
export const CONTROL = {
  STATE: 0,
  ABORT: 1,
  KIND: 2,
  STRANDED: 3,
  HAS_ERRNO: 4,
  ERRNO: 5,
  TMP_LEN: 6,
  PATH_LEN: 7,
  DATA_LEN: 8,
  MODE: 9,
  NEW_REGION: 10,
  CODE_LEN: 11,
  SYSCALL_LEN: 12,
  MESSAGE_LEN: 13,
  /** How many fields there are. */
  SIZE: 14,
} as const;

/** Values of `CONTROL.STATE`: no write yet, a write posted, its outcome ready. */
export const STATE = { IDLE: 0, REQUESTED: 1, DONE: 2 } as const;

/** Values of `CONTROL.KIND`. */
export const KIND = { WRITTEN: 0, ABORTED: 1, FAILED: 2 } as const;

export const WRITE_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const fs = require('node:fs');
const { dirname } = require('node:path');
const C = ${JSON.stringify(CONTROL)};
const S = ${JSON.stringify(STATE)};
const K = ${JSON.stringify(KIND)};
const control = new Int32Array(workerData.control);
let region = Buffer.from(workerData.region);
const ABORTED = Symbol('aborted');

function writeAll(fd, data) {
  let offset = 0;
  while (offset < data.length) offset += fs.writeSync(fd, data, offset, data.length - offset);
}

function writeSynced(path, flags, mode, data) {
  const fd = fs.openSync(path, flags, mode);
  try {
    writeAll(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

// Best effort, as syncDir in atomic-file.ts: some file systems refuse to fsync a directory.
function syncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
  } finally {
    if (fd !== undefined) try { fs.closeSync(fd); } catch {}
  }
}

function exists(path) {
  try {
    fs.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function renameOrCopy(tmp, path, data, mode) {
  try {
    fs.renameSync(tmp, path);
    return;
  } catch (err) {
    if (err.code !== 'EXDEV') throw err;
  }
  writeSynced(path, 'w', mode, data);
  fs.unlinkSync(tmp);
}

// Puts a string in the region at offset, cut to room bytes; returns the bytes written.
function put(text, offset, room) {
  return room > 0 ? region.write(text, offset, room, 'utf8') : 0;
}

function fail(err, stranded) {
  control[C.KIND] = K.FAILED;
  control[C.STRANDED] = stranded ? 1 : 0;
  const { code, errno, syscall, message } = err ?? {};
  control[C.HAS_ERRNO] = typeof errno === 'number' ? 1 : 0;
  control[C.ERRNO] = typeof errno === 'number' ? errno : 0;
  let at = 0;
  const codeLen = typeof code === 'string' ? put(code, at, region.length - at) : -1;
  at += Math.max(codeLen, 0);
  const syscallLen = typeof syscall === 'string' ? put(syscall, at, region.length - at) : -1;
  at += Math.max(syscallLen, 0);
  control[C.CODE_LEN] = codeLen;
  control[C.SYSCALL_LEN] = syscallLen;
  control[C.MESSAGE_LEN] = put(String(message), at, region.length - at);
}

function write(m) {
  let replacing = false;
  try {
    writeSynced(m.tmp, 'wx', m.mode, m.data);
    if (Atomics.load(control, C.ABORT) !== 0) throw ABORTED;
    replacing = exists(m.path);
    renameOrCopy(m.tmp, m.path, m.data, m.mode);
  } catch (err) {
    let stranded = false;
    try {
      fs.unlinkSync(m.tmp);
    } catch (unlinkErr) {
      stranded = unlinkErr.code !== 'ENOENT';
    }
    if (err === ABORTED) {
      control[C.KIND] = K.ABORTED;
      control[C.STRANDED] = stranded ? 1 : 0;
    } else {
      fail(err, stranded);
    }
    return;
  }
  if (!replacing) syncDir(dirname(m.path));
  control[C.KIND] = K.WRITTEN;
}

function serve(m) {
  write(m);
  Atomics.store(control, C.STATE, S.DONE);
  Atomics.notify(control, C.STATE);
}
parentPort.on('message', serve);

function request() {
  if (control[C.NEW_REGION] !== 0) {
    region = Buffer.from(receiveMessageOnPort(workerData.regions).message);
    control[C.NEW_REGION] = 0;
  }
  const tmpLen = control[C.TMP_LEN];
  const pathLen = control[C.PATH_LEN];
  const start = tmpLen + pathLen;
  return {
    tmp: region.toString('utf8', 0, tmpLen),
    path: region.toString('utf8', tmpLen, start),
    data: region.subarray(start, start + control[C.DATA_LEN]),
    mode: control[C.MODE],
  };
}

// Started once this source (and any code after it) has run: it never returns. The thread
// sleeps in Atomics.wait between writes; terminate() ends it there too.
setImmediate(() => {
  for (;;) {
    const state = Atomics.load(control, C.STATE);
    if (state !== S.REQUESTED) {
      Atomics.wait(control, C.STATE, state);
      continue;
    }
    parentPort.emit('message', request());
  }
});
`;

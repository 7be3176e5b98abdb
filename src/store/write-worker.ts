/**
 * The source of the atomic-write worker thread that `write-offload.ts` starts: the same steps as
 * `writeAtomic` (temp file 0600 → write → fsync → close → rename → directory fsync for a new
 * name, the in-place rewrite on `EXDEV`, the temp file removed on failure), made with
 * synchronous calls on the worker's own thread. One message in, one out, so a write costs the
 * event loop one round trip instead of one per system call, and never blocks it.
 *
 * It is source text, evaluated by `new Worker(…, {eval: true})`, because the CLI is bundled
 * into chunks (scripts/bundle.mjs) and a worker needs a file or text of its own. Plain
 * CommonJS, no dependencies; `test/unit/store/write-offload.test.ts` runs it.
 *
 * Request: `{id, tmp, path, data, mode}`. Reply: `{id}` once written, `{id, aborted: true}` when
 * the abort flag (`workerData.abort[0]`, set by the main thread) was up before the rename, or
 * `{id, error: {code, errno, syscall, message}, stranded}`, `stranded` when the temp file could
 * not be removed (the disk turned read-only between the write and the rename).
 */
export const WRITE_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { dirname } = require('node:path');
const abortFlag = new Int32Array(workerData.abort);
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

function write(m) {
  let replacing = false;
  try {
    writeSynced(m.tmp, 'wx', m.mode, m.data);
    if (Atomics.load(abortFlag, 0) !== 0) throw ABORTED;
    replacing = exists(m.path);
    renameOrCopy(m.tmp, m.path, m.data, m.mode);
  } catch (err) {
    let stranded = false;
    try {
      fs.unlinkSync(m.tmp);
    } catch (unlinkErr) {
      stranded = unlinkErr.code !== 'ENOENT';
    }
    if (err === ABORTED) return { id: m.id, aborted: true, stranded };
    const { code, errno, syscall, message } = err;
    return { id: m.id, error: { code, errno, syscall, message: String(message) }, stranded };
  }
  if (!replacing) syncDir(dirname(m.path));
  return { id: m.id };
}

parentPort.on('message', (m) => parentPort.postMessage(write(m)));
`;

/**
 * Storage faults under the real server (issue 18): `--state-dir` on a 1 MiB tmpfs the test
 * mounts. A full disk fails the run with a stable code, loses no earlier checkpoint, leaves no
 * torn record or temp file, and the server keeps answering; freed space lets the run resume. A
 * read-only state dir stops `mhl serve` at start, naming the directory (a full one is a warning:
 * the server serves, runs are refused until space is freed), and `mhl run` on a full one says so
 * instead of crashing.
 *
 * Needs root to mount; without it the tests skip (and fail under CI=true), see helpers/tmpfs.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { call, modern, send, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { readPid } from '../helpers/processes.js';
import { settle } from '../helpers/runs.js';
import { freeBytes, needMount, writeFiller } from '../helpers/tmpfs.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/faults');
const start = serverStarter(FOLDER, 'SIGKILL');

/** Every file under `root`, relative, with its text. */
function files(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(root, path), readFileSync(path, 'utf8'));
  }
  return out;
}

/**
 * The state files are whole: no temp file left behind, every record parses as JSON and every
 * `latest` pointer holds a whole session id.
 */
function assertWhole(root: string): Map<string, string> {
  const found = files(root);
  for (const [name, text] of found) {
    assert.doesNotMatch(name, /(^|\/)\.tmp-/, `a temp file was left behind: ${name}`);
    if (name.endsWith('.latest')) assert.match(text, /^[0-9a-f]{32}\n$/, `${name} is torn`);
    else assert.doesNotThrow(() => JSON.parse(text), `${name} is not whole JSON`);
  }
  return found;
}

describe('storage faults', () => {
  it('a full state dir fails the run with STATE_STORAGE_FULL, keeps its checkpoints whole, and serves on', async (t) => {
    const disk = needMount(t, '1m');
    if (!disk) return;
    const scratch = tempDir();
    const server = start(['--state-dir', disk.dir]);
    const port = await server.ready;
    const state = join(disk.dir, '.mhl');

    const view = await call(port, 'run/start', {
      name: 'Fill',
      arguments: { dir: scratch, kib: 256 },
    });
    const runId = view['runId'] as string;
    await until(() => readPid(join(scratch, 'hold.pid')), { what: 'the Hold step to start' });
    // Small's checkpoint is on disk. Leave 128 KiB: room for Hold's, not for Big's 256 KiB.
    assertWhole(state);
    writeFiller(join(disk.dir, 'filler'), freeBytes(disk.dir) - 128 * 1024);
    writeFileSync(join(scratch, 'go'), '');

    const failed = await settle(port, runId);
    assert.equal(failed['state'], 'failed');
    assert.equal(failed['errorCode'], 'STATE_STORAGE_FULL');
    assert.equal(failed['resumable'], true);
    assert.ok(!String(failed['error']).includes(disk.dir), `a path leaked: ${failed['error']}`);
    // The operator's log keeps what the caller is not shown: the store's key and errno.
    await server.logged('the run state could not be saved');
    assert.match(server.stderr, /no space left \(ENOSPC\)/);
    // run/status answers from memory; the failed record reaches the disk just after it.
    const recordFile = join(state, `state/${runId}/mhl-run.json`);
    await until(() => /"state":\s*"failed"/.test(readFileSync(recordFile, 'utf8')), {
      what: 'the failed run record on disk',
    });
    // The failed write left the last checkpoint that fit (Hold's) whole, and no temp file.
    const after = assertWhole(state);
    const saved = JSON.parse(after.get(`state/${runId}/Fill.json`) ?? '{}');
    assert.deepEqual(saved.completed_steps, ['Small', 'Hold']);
    assert.equal(saved.next_step, 'Big');
    assert.equal(saved.variables.blob, '');
    const record = JSON.parse(after.get(`state/${runId}/mhl-run.json`) ?? '{}');
    assert.equal(record.view.state, 'failed');
    assert.equal(record.view.errorCode, 'STATE_STORAGE_FULL');

    // Completely full now: other calls are still answered, a new run is refused with the code.
    writeFiller(join(disk.dir, 'filler2'), freeBytes(disk.dir));
    const listed = (await call(port, 'tools/list'))['tools'] as { name: string }[];
    assert.ok(listed.some((tool) => tool.name === 'Fill'));
    const echoed = await call(port, 'tools/call', { name: 'Echo', arguments: { text: 'hi' } });
    assert.notEqual(echoed['isError'], true, JSON.stringify(echoed));
    assert.deepEqual(echoed['structuredContent'], { text: 'hi' });
    const refused = (
      await modern(port, 'run/start', { name: 'Echo', arguments: { text: 'x' } })
    ).json()['error'] as { code: number; data?: { code?: string }; message: string };
    assert.equal(refused.code, -32000, JSON.stringify(refused));
    assert.equal(refused.data?.code, 'STATE_STORAGE_FULL');
    assert.ok(!refused.message.includes(disk.dir), refused.message);
    const tool = await call(port, 'tools/call', {
      name: 'mhl_run_start',
      arguments: { workflow: 'Echo', arguments: { text: 'x' } },
    });
    assert.equal(tool['isError'], true);
    assert.equal(
      (tool['_meta'] as Record<string, { code: string }>)['mhl/diagnostic']?.code,
      'STATE_STORAGE_FULL',
    );
    // Jobs and sync calls keep their state in memory: a full disk does not touch them.
    const job = await call(port, 'tools/call', {
      name: 'job.start',
      arguments: { tool: 'Echo', arguments: { text: 'job' } },
    });
    const jobId = (job['structuredContent'] as { job_id: string }).job_id;
    await until(
      async () => {
        const status = await call(port, 'tools/call', {
          name: 'job.status',
          arguments: { job_id: jobId },
        });
        return (status['structuredContent'] as { status: string }).status === 'succeeded';
      },
      { what: 'the Echo job to succeed' },
    );
    assert.equal((await send(port, { method: 'GET', path: '/readyz' })).status, 200);
    assert.equal((await call(port, 'run/status', { runId }))['state'], 'failed');
    assertWhole(state);

    // Space freed: the failed run resumes from its checkpoint and completes; new runs start.
    rmSync(join(disk.dir, 'filler'));
    rmSync(join(disk.dir, 'filler2'));
    const resumed = await call(port, 'run/resume', { runId });
    assert.equal(resumed['errorCode'], undefined);
    const done = await settle(port, runId);
    assert.equal(done['state'], 'completed', JSON.stringify(done));
    assert.deepEqual(done['reached'], ['Small', 'Hold', 'Big']);
    const fresh = await call(port, 'run/start', {
      name: 'Fill',
      arguments: { dir: scratch, kib: 16 },
    });
    assert.equal((await settle(port, fresh['runId'] as string))['state'], 'completed');
    assertWhole(state);
  });

  it('a state dir that turns read-only under the server fails the run as STATE_STORE_FAILED', async (t) => {
    const disk = needMount(t, '1m');
    if (!disk) return;
    const scratch = tempDir();
    const server = start(['--state-dir', disk.dir]);
    const port = await server.ready;
    const { runId } = (await call(port, 'run/start', {
      name: 'Fill',
      arguments: { dir: scratch, kib: 16 },
    })) as { runId: string };
    await until(() => readPid(join(scratch, 'hold.pid')), { what: 'the Hold step to start' });
    disk.remount(true);
    writeFileSync(join(scratch, 'go'), '');
    const failed = await settle(port, runId);
    assert.equal(failed['state'], 'failed');
    assert.equal(failed['errorCode'], 'STATE_STORE_FAILED');
    assert.equal(failed['resumable'], true);
    // A new run's directory does not exist yet: the log names the real cause, not ENOENT.
    const refused = (
      await modern(port, 'run/start', { name: 'Echo', arguments: { text: 'x' } })
    ).json()['error'] as { code: number; data?: { code?: string } };
    assert.equal(refused.code, -32000, JSON.stringify(refused));
    assert.equal(refused.data?.code, 'STATE_STORE_FAILED');
    await server.logged('could not persist the run record');
    assert.match(server.stderr, /could not write the state file \(EROFS\)/);
    assert.doesNotMatch(server.stderr, /\(ENOENT\)/);
    const echoed = await call(port, 'tools/call', { name: 'Echo', arguments: { text: 'hi' } });
    assert.deepEqual(echoed['structuredContent'], { text: 'hi' });
    disk.remount(false);
    await call(port, 'run/resume', { runId });
    assert.equal((await settle(port, runId))['state'], 'completed');
    // A temp file the read-only disk would not let a failed write remove is removed by a later
    // write that succeeds. The state a run reports is published before its last record write
    // ends, so a further run is written in full, and the leftover must then be gone.
    const later = await call(port, 'run/start', { name: 'Echo', arguments: { text: 'after' } });
    assert.equal((await settle(port, later['runId'] as string))['state'], 'completed');
    const root = join(disk.dir, '.mhl');
    await until(() => ![...files(root).keys()].some((name) => /(^|\/)\.tmp-/.test(name)), {
      what: 'the temp file stranded by the read-only disk to be removed',
    });
    assertWhole(root);
  });

  it('a read-only state dir stops the server at start, naming the directory', async (t) => {
    const disk = needMount(t, '1m', true);
    if (!disk) return;
    for (const transport of [[], ['--http', '--port', '0']]) {
      const served = await runCli(['serve', 'mcp', FOLDER, '--state-dir', disk.dir, ...transport]);
      assert.equal(served.code, 1, served.stderr);
      assert.ok(served.stderr.includes(disk.dir), served.stderr);
      assert.match(served.stderr, /--state-dir/);
      assert.match(served.stderr, /EROFS/);
    }
  });

  it('a full state dir at start is a warning naming the directory; the server serves, runs are refused', async (t) => {
    const disk = needMount(t, '1m');
    if (!disk) return;
    writeFiller(join(disk.dir, 'filler'), freeBytes(disk.dir));
    const server = start(['--state-dir', disk.dir]);
    const port = await server.ready;
    assert.ok(server.stderr.includes(disk.dir), server.stderr);
    assert.match(server.stderr, /ENOSPC/);
    const echoed = await call(port, 'tools/call', { name: 'Echo', arguments: { text: 'hi' } });
    assert.notEqual(echoed['isError'], true, JSON.stringify(echoed));
    const refused = (
      await modern(port, 'run/start', { name: 'Echo', arguments: { text: 'x' } })
    ).json();
    const error = refused['error'] as { code: number; data: { code: string } };
    assert.deepEqual([error.code, error.data.code], [-32000, 'STATE_STORAGE_FULL']);
    rmSync(join(disk.dir, 'filler'));
    const started = await call(port, 'run/start', { name: 'Echo', arguments: { text: 'y' } });
    assert.equal((await settle(port, started['runId'] as string))['state'], 'completed');
  });

  it('mhl run on a full state dir says where and what to do, without a stack trace', async (t) => {
    const disk = needMount(t, '1m');
    if (!disk) return;
    const scratch = tempDir();
    writeFileSync(join(scratch, 'go'), '');
    writeFiller(join(disk.dir, 'filler'), freeBytes(disk.dir));
    const file = join(FOLDER, 'fill.mh');
    const ran = await runCli(['run', file, '--input', `dir=${scratch}`, '--state-dir', disk.dir]);
    assert.equal(ran.code, 1, ran.stderr);
    assert.ok(ran.stderr.includes(disk.dir), ran.stderr);
    assert.match(ran.stderr, /--resume/);
    assert.doesNotMatch(ran.stderr, /StoreError|\n\s+at /, 'no stack trace');
    assertWhole(join(disk.dir, '.mhl'));
  });
});

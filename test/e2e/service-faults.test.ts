/**
 * `mhl service` under faults and hostile input, end to end as a user would run it: bad flags,
 * a held lock, corrupt state, units it does not own, an unreachable or failing manager, a unit
 * that fails or hangs, a worker that is gone. The built CLI runs against the systemctl stand-in
 * (test/fixtures/service/bin), which starts the unit's real ExecStart. Each test is its own
 * isolated user.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { diagnostic, freePort, json, serviceUser } from '../helpers/service-env.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');

interface Runtime {
  state: string;
  pid: number | null;
  instance_id: string | null;
  version: string | null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('mhl service faults', () => {
  it('refuses bad flags with exit status 2 before touching anything', async () => {
    const user = serviceUser();
    const cases = [
      ['install', FOLDER, '--port', '0'],
      ['install', FOLDER, '--port', '65536'],
      ['install', FOLDER, '--port', 'abc'],
      ['install', FOLDER, '--port', '-1'],
      ['install', FOLDER, '--max-active', '0'],
      ['install', FOLDER, '--max-active', '1e3'],
      ['install', FOLDER, '--default-timeout-ms', '99999999999999999999'],
      ['install', join(FOLDER, 'missing')],
      ['install', FOLDER, '--cwd', join(FOLDER, 'greet.mh')],
      ['install', FOLDER, '--bogus'],
      ['start', 'extra'],
      ['status', '--port', '1'],
    ];
    for (const args of cases) {
      const result = await user.service(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    }
    const newline = tempDir('mhl-new\nline-');
    assert.equal((await user.service(['install', newline])).code, 2);
    assert.deepEqual(user.calls(), [], 'the manager was never asked anything');
    assert.equal(existsSync(user.unitPath), false);
  });

  it('reports NOT_INSTALLED, BUSY, STATE_INVALID and conflicts with their codes', async () => {
    const user = serviceUser();
    for (const verb of ['start', 'stop', 'restart']) {
      assert.equal(diagnostic(await user.service([verb, '--json'])), 'MCP_SERVICE_NOT_INSTALLED');
    }
    const none = json(await user.service(['status', '--json']));
    assert.deepEqual([none['state'], none['configuration_id']], ['not_installed', null]);
    const port = String(await freePort());
    assert.equal((await user.service(['install', FOLDER, '--port', port, '--no-start'])).code, 0);

    // A lock held by another command: every mutation is refused; status shows who holds it.
    const { acquireLifecycleLock } = await import('../../src/service/index.js');
    const lock = await acquireLifecycleLock(join(user.stateDir, 'lifecycle.lock'), 'restart');
    try {
      for (const verb of ['start', 'stop', 'restart', 'uninstall']) {
        assert.equal(diagnostic(await user.service([verb, '--json'])), 'MCP_SERVICE_BUSY', verb);
      }
      const busy = json(await user.service(['status', '--json']));
      assert.deepEqual(busy['lifecycle'], {
        state: 'busy',
        holder_pid: process.pid,
        holder_command: 'restart',
        last_command: 'install',
        last_action: 'installed',
        last_diagnostic_code: null,
        at: (busy['lifecycle'] as { at: string }).at,
      });
    } finally {
      await lock.release();
    }

    // Corrupt state: named, refused; install repairs the index it owns.
    const current = join(user.stateDir, 'current.json');
    const good = readFileSync(current, 'utf8');
    for (const text of ['{', '{"schema_version":1}', `${good.slice(0, -3)}, "x": 1}`]) {
      writeFileSync(current, text);
      const start = await user.service(['start']);
      assert.equal(diagnostic(start), 'MCP_SERVICE_STATE_INVALID');
      assert.match(start.stderr, /current\.json/);
      assert.doesNotMatch(start.stderr, /\n\s+at /, 'no stack trace');
      // current.json is a repairable index: status reports it beside every other layer, exit 0.
      const status = await user.service(['status', '--json']);
      assert.equal(status.code, 0, status.stderr);
      const snapshot = json(status);
      assert.deepEqual(
        [snapshot['state'], snapshot['diagnostic_code'], snapshot['configuration_id']],
        ['state_invalid', 'MCP_SERVICE_STATE_INVALID', JSON.parse(good)['configuration_id']],
      );
      assert.deepEqual(snapshot['drift'], [
        { layer: 'state', property: 'current.json', expected: 'valid', actual: 'invalid' },
      ]);
      assert.equal((snapshot['registration'] as { state: string }).state, 'installed');
      assert.equal((snapshot['manager'] as { state: string }).state, 'reachable');
      assert.equal((await user.service(['status'])).code, 0);
    }
    // uninstall proceeds past a damaged index when the unit names a definition that verifies.
    assert.equal(json(await user.service(['uninstall', '--json']))['action'], 'uninstalled');
    assert.equal(existsSync(user.unitPath), false);
    assert.equal(existsSync(current), false);
    assert.equal((await user.service(['install', FOLDER, '--port', port, '--no-start'])).code, 0);
    const runtime = join(user.stateDir, 'runtime.json');
    writeFileSync(runtime, '{"schema_version":1,"pid":"1; rm -rf /"}');
    assert.equal(diagnostic(await user.service(['status'])), 'MCP_SERVICE_STATE_INVALID');
    writeFileSync(runtime, '{"schema_version":1}');
    assert.equal(diagnostic(await user.service(['uninstall'])), 'MCP_SERVICE_STATE_INVALID');
    writeFileSync(runtime, '');
    assert.equal(diagnostic(await user.service(['uninstall'])), 'MCP_SERVICE_STATE_INVALID');
    writeFileSync(join(user.stateDir, 'lifecycle.lock'), 'not an anchor');
    assert.equal(diagnostic(await user.service(['start'])), 'MCP_SERVICE_STATE_INVALID');
  });

  it('never overwrites a unit it does not own', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    mkdirSync(join(user.home, 'config/systemd/user'), { recursive: true });
    const theirs = '[Service]\nExecStart=/bin/true\n';
    writeFileSync(user.unitPath, theirs);
    const result = await user.service(['install', FOLDER, '--port', port, '--json']);
    assert.equal(diagnostic(result), 'MCP_SERVICE_TASK_CONFLICT');
    assert.equal(readFileSync(user.unitPath, 'utf8'), theirs);
    const status = json(await user.service(['status', '--json']));
    assert.deepEqual(
      [status['state'], status['diagnostic_code']],
      ['conflict', 'MCP_SERVICE_TASK_CONFLICT'],
    );
    assert.equal(
      json(await user.service(['uninstall', '--json']))['action'],
      'already_uninstalled',
    );
    assert.equal(readFileSync(user.unitPath, 'utf8'), theirs);
    const other = `[Unit]\nX-MhlManaged=mhl-managed-mcp.service@99999\n${theirs}`;
    writeFileSync(user.unitPath, other);
    const again = await user.service(['install', FOLDER, '--port', port]);
    assert.equal(diagnostic(again), 'MCP_SERVICE_INSTALLATION_CONFLICT');
    assert.equal(readFileSync(user.unitPath, 'utf8'), other);
  });

  it("reports the manager's own message when systemctl --user cannot reach it", async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const noManager = { XDG_RUNTIME_DIR: '' };
    const install = await user.service(['install', FOLDER, '--port', port], noManager);
    assert.equal(diagnostic(install), 'MCP_SERVICE_SCHEDULER_FAILED');
    assert.match(install.stderr, /Failed to connect to bus/);
    assert.equal(existsSync(user.unitPath), false, 'nothing written without a manager');
    const status = await user.service(['status', '--json'], noManager);
    assert.equal(status.code, 0);
    const manager = json(status)['manager'] as { state: string; message: string };
    assert.equal(manager.state, 'unreachable');
    assert.match(manager.message, /Failed to connect to bus/);
    // The real systemctl, where the machine has one, says so in its own words too.
    if (existsSync('/usr/bin/systemctl')) {
      const real = await user.service(['status', '--json'], {
        ...noManager,
        PATH: '/usr/bin:/bin',
      });
      const said = json(real)['manager'] as { state: string; message: string };
      assert.equal(said.state, 'unreachable');
      assert.match(said.message, /bus/i);
    }
    const refused = await user.service(['install', FOLDER, '--port', port], {
      SHIM_FAIL_VERB: 'start',
    });
    assert.equal(diagnostic(refused), 'MCP_SERVICE_SCHEDULER_FAILED');
    assert.match(refused.stderr, /Access denied/);
  });

  it('reports a unit that fails before readiness, and a worker that is gone', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const broken = tempDir('mhl-broken-');
    writeFileSync(join(broken, 'bad.mh'), 'pipeline Broken {\n  step (\n');
    const failed = await user.service(['install', broken, '--port', port]);
    assert.equal(diagnostic(failed), 'MCP_SERVICE_SCHEDULER_FAILED');
    assert.match(failed.stderr, /failed before it was ready/);
    const status = json(await user.service(['status', '--json']));
    assert.equal((status['runtime'] as { state: string }).state, 'failed');
    assert.equal((await user.service(['uninstall'])).code, 0);

    // An mhl that was moved away after install: start says which executable is gone.
    const copy = tempDir('mhl-copy-');
    cpSync(join(REPO_ROOT, 'dist/bin'), join(copy, 'dist/bin'), { recursive: true });
    cpSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
    const copied = join(copy, 'dist/bin/mhl.js');
    const args = ['service', 'install', FOLDER, '--port', port, '--no-start'];
    const viaCopy = spawnSync(process.execPath, [copied, ...args], {
      env: { ...process.env, ...user.env },
      encoding: 'utf8',
    });
    assert.equal(viaCopy.status, 0, viaCopy.stderr);
    rmSync(copied);
    const start = await user.service(['start']);
    assert.equal(diagnostic(start), 'MCP_SERVICE_WORKER_MISSING');
  });

  it('stops nothing it cannot prove, and leaves a failed restart or uninstall retryable', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const installed = json(await user.service(['install', FOLDER, '--port', port, '--json']));
    const pid = (installed['runtime'] as Runtime).pid as number;
    // A hung server answers no readiness: its identity is unproven, so it is not stopped.
    process.kill(pid, 'SIGSTOP');
    try {
      const unsafe = await user.service(['stop', '--json']);
      assert.equal(diagnostic(unsafe), 'MCP_SERVICE_STOP_UNSAFE');
      assert.ok(!user.calls().some((c) => c[1] === 'stop'), 'the manager was not asked to stop it');
      assert.equal(alive(pid), true);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const failed = await user.service(['restart', '--json'], { SHIM_FAIL_VERB: 'start' });
    assert.equal(diagnostic(failed), 'MCP_SERVICE_RESTART_FAILED');
    assert.match(failed.stderr, /MCP_SERVICE_SCHEDULER_FAILED/);
    assert.equal(alive(pid), false, 'stopped, and not resurrected');
    const after = json(await user.service(['status', '--json']));
    assert.deepEqual(
      [after['state'], (after['registration'] as { state: string }).state],
      ['stopped', 'installed'],
    );
    assert.equal(
      (after['lifecycle'] as { last_diagnostic_code: string }).last_diagnostic_code,
      'MCP_SERVICE_RESTART_FAILED',
    );
    assert.equal(json(await user.service(['start', '--json']))['action'], 'started');
    const partial = await user.service(['uninstall', '--json'], { SHIM_FAIL_VERB: 'disable' });
    assert.equal(diagnostic(partial), 'MCP_SERVICE_UNINSTALL_INCOMPLETE');
    assert.ok(existsSync(user.unitPath));
    assert.equal(json(await user.service(['uninstall', '--json']))['action'], 'uninstalled');
    assert.equal(existsSync(user.unitPath), false);
  });

  it('never stops a drifted unit, nor an instance runtime.json does not record', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const installed = json(await user.service(['install', FOLDER, '--port', port, '--json']));
    const pid = (installed['runtime'] as Runtime).pid as number;
    const unit = readFileSync(user.unitPath, 'utf8');
    const runtimeFile = join(user.stateDir, 'runtime.json');
    const recorded = readFileSync(runtimeFile, 'utf8');
    writeFileSync(user.unitPath, `${unit}\n[Service]\nNice=5\n`);
    for (const verb of ['stop', 'uninstall']) {
      const drifted = await user.service([verb, '--json']);
      assert.equal(diagnostic(drifted), 'MCP_SERVICE_CONFIGURATION_DRIFT', verb);
    }
    writeFileSync(user.unitPath, unit);
    const other = recorded.replace(
      /"instance_id":\s*"[^"]+"/,
      '"instance_id":"550e8400-e29b-41d4-a716-446655440000"',
    );
    const otherPid = recorded.replace(/"pid":\s*\d+/, `"pid":${pid + 1}`);
    for (const text of [other, otherPid, undefined]) {
      if (text === undefined) rmSync(runtimeFile);
      else {
        assert.notEqual(text, recorded);
        writeFileSync(runtimeFile, text);
      }
      const refused = await user.service(['stop', '--json']);
      assert.equal(diagnostic(refused), 'MCP_SERVICE_STOP_UNSAFE', String(text));
    }
    assert.ok(!user.calls().some((c) => c[1] === 'stop'), 'the manager was not asked to stop it');
    assert.equal(alive(pid), true);
    // start proves and records the running instance; then stop proves it.
    assert.equal(json(await user.service(['start', '--json']))['action'], 'already_running');
    assert.equal(json(await user.service(['stop', '--json']))['action'], 'stopped');
    assert.equal(alive(pid), false);
    assert.equal((await user.service(['uninstall', '--quiet'])).code, 0);
  });

  it('times out a start whose process never answers readiness, and will not stop it', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const copy = tempDir('mhl-hung-');
    cpSync(join(REPO_ROOT, 'dist/bin'), join(copy, 'dist/bin'), { recursive: true });
    cpSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
    const copied = join(copy, 'dist/bin/mhl.js');
    const args = ['service', 'install', FOLDER, '--port', port, '--no-start'];
    const install = spawnSync(process.execPath, [copied, ...args], {
      env: { ...process.env, ...user.env },
      encoding: 'utf8',
    });
    assert.equal(install.status, 0, install.stderr);
    // The mhl the unit runs now hangs without ever listening.
    writeFileSync(copied, 'setInterval(() => {}, 60_000);\n');
    const began = Date.now();
    const start = await user.service(['start', '--json']);
    const took = Date.now() - began;
    assert.equal(diagnostic(start), 'MCP_SERVICE_START_TIMEOUT');
    assert.ok(took >= 15_000 && took < 25_000, `gave up after ${took} ms`);
    const status = json(await user.service(['status', '--json']));
    assert.equal((status['runtime'] as Runtime).state, 'starting');
    assert.equal(diagnostic(await user.service(['stop', '--json'])), 'MCP_SERVICE_STOP_UNSAFE');
    assert.equal(
      diagnostic(await user.service(['uninstall', '--json'])),
      'MCP_SERVICE_STOP_UNSAFE',
    );
    assert.ok(existsSync(user.unitPath), 'nothing removed while its process runs unproven');
  });

  it('forces only a proven unit that ignores shutdown, and starts no unit edited mid-restart', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    stubbornInstall(user, port);
    const ignore = { STUBBORN_MODE: 'ignore-shutdown' };
    const start = await user.service(['start', '--json'], ignore);
    assert.equal(start.code, 0, start.stderr);
    const began = Date.now();
    const stop = await user.service(['stop', '--json']);
    const took = Date.now() - began;
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(json(stop)['action'], 'forced_stopped');
    assert.ok(took >= 5_000 && took < 15_000, `stopped after ${took} ms`);
    const stops = user.calls().filter((c) => c[1] === 'stop');
    assert.deepEqual(stops, [['--user', 'stop', 'mhl-managed-mcp.service']]);

    // A unit edited while the old process stopped is not started.
    const edit = { STUBBORN_MODE: 'edit-unit', STUBBORN_UNIT: user.unitPath };
    assert.equal((await user.service(['start'], edit)).code, 0);
    const restart = await user.service(['restart', '--json'], edit);
    assert.equal(diagnostic(restart), 'MCP_SERVICE_TASK_CHANGED');
    const status = json(await user.service(['status', '--json']));
    assert.deepEqual(
      [status['state'], (status['runtime'] as Runtime).state],
      ['drifted', 'stopped'],
    );
  });
});

/**
 * Installs (without starting) from a copy of the built CLI, then puts the stubborn server
 * fixture in place of the copy's mhl.js: every later start of the unit runs it.
 */
function stubbornInstall(user: ReturnType<typeof serviceUser>, port: string): void {
  const copy = tempDir('mhl-stubborn-');
  cpSync(join(REPO_ROOT, 'dist/bin'), join(copy, 'dist/bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
  const mhl = join(copy, 'dist/bin/mhl.js');
  const args = ['service', 'install', FOLDER, '--port', port, '--no-start'];
  const install = spawnSync(process.execPath, [mhl, ...args], {
    env: { ...process.env, ...user.env },
    encoding: 'utf8',
  });
  assert.equal(install.status, 0, install.stderr);
  cpSync(join(REPO_ROOT, 'test/fixtures/service/stubborn-server.cjs'), mhl);
}

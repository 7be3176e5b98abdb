/**
 * `mhl service` end to end, as a user would run it: the built CLI against a systemctl stand-in
 * (test/fixtures/service/bin) that starts the unit's real ExecStart, so readiness, identity and
 * shutdown are the real server's, over real sockets. Each test is its own isolated user.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { diagnostic, foreignServer, freePort, json, serviceUser } from '../helpers/service-env.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');

interface Runtime {
  state: string;
  pid: number | null;
  instance_id: string | null;
  version: string | null;
}

function readiness(port: number): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    request({ host: '127.0.0.1', port, path: '/health/ready', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => done(JSON.parse(text) as Record<string, unknown>));
    })
      .on('error', fail)
      .end();
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A workflows folder the user owns, with a file of their own in it. */
function userFolder(): string {
  const dir = tempDir('mhl-flows-');
  cpSync(FOLDER, dir, { recursive: true });
  writeFileSync(join(dir, 'NOTES.md'), 'mine\n');
  return dir;
}

describe('mhl service', () => {
  it('installs, reports ready, restarts to a new instance, leaves a foreign server alone and uninstalls', async () => {
    const user = serviceUser();
    const port = await freePort();
    const flows = userFolder();
    const install = await user.service(['install', flows, '--port', String(port), '--json']);
    assert.equal(install.code, 0, install.stderr);
    const installed = json(install);
    assert.deepEqual(Object.keys(installed), [
      'command',
      'schema_version',
      'changed',
      'action',
      'service_id',
      'configuration_id',
      'task_path',
      'endpoint',
      'registration',
      'runtime',
    ]);
    assert.deepEqual(
      [
        installed['command'],
        installed['schema_version'],
        installed['changed'],
        installed['action'],
      ],
      ['install', 1, true, 'installed'],
    );
    assert.equal(installed['endpoint'], `http://127.0.0.1:${port}/mcp`);
    assert.equal(installed['task_path'], user.unitPath);
    const id = installed['configuration_id'] as string;
    const first = installed['runtime'] as Runtime;
    assert.equal(first.state, 'ready');
    // Readiness is the real server's: the unit's process, naming the installed configuration.
    const ready = await readiness(port);
    assert.deepEqual(
      [ready['pid'], ready['instance_id'], ready['configuration_id']],
      [first.pid, first.instance_id, id],
    );
    assert.equal(statSync(user.unitPath).mode & 0o777, 0o600);
    const unit = readFileSync(user.unitPath, 'utf8');
    assert.match(unit, /^WantedBy=default\.target$/m);
    assert.ok(existsSync(join(user.home, 'config/systemd/user/default.target.wants')));

    // An equal install changes nothing: no rewrite, no reload, no start.
    const callsBefore = user.calls().length;
    const again = json(await user.service(['install', flows, '--port', String(port), '--json']));
    assert.deepEqual([again['changed'], again['action']], [false, 'unchanged']);
    assert.equal(again['configuration_id'], id);
    const verbs = user
      .calls()
      .slice(callsBefore)
      .map((c) => c[1]);
    assert.deepEqual([...new Set(verbs)], ['show']);
    assert.equal(readFileSync(user.unitPath, 'utf8'), unit);

    const status = json(await user.service(['status', '--json']));
    assert.deepEqual([status['state'], status['diagnostic_code']], ['ready', null]);
    assert.deepEqual(Object.keys(status).slice(8), [
      'registration',
      'manager',
      'runtime',
      'readiness',
      'lifecycle',
      'drift',
    ]);
    assert.deepEqual(status['drift'], []);
    assert.equal((status['readiness'] as { owned: boolean }).owned, true);
    assert.equal((status['lifecycle'] as { holder_pid: null }).holder_pid, null);

    const started = json(await user.service(['start', '--json']));
    assert.deepEqual([started['changed'], started['action']], [false, 'already_running']);

    const restart = await user.service(['restart', '--json']);
    assert.equal(restart.code, 0, restart.stderr);
    const restarted = json(restart);
    const second = restarted['runtime'] as Runtime;
    assert.equal(restarted['action'], 'restarted');
    assert.notEqual(second.instance_id, first.instance_id);
    assert.equal(alive(first.pid as number), false, 'the old process is gone');

    const stop = json(await user.service(['stop', '--json']));
    assert.deepEqual([stop['action'], (stop['runtime'] as Runtime).pid], ['stopped', null]);
    assert.equal(alive(second.pid as number), false);
    const stopAgain = json(await user.service(['stop', '--json']));
    assert.deepEqual([stopAgain['changed'], stopAgain['action']], [false, 'already_stopped']);

    // Another server on the port: neither adopted by start nor stopped by stop or uninstall.
    const foreign = await foreignServer(FOLDER, port);
    const refused = await user.service(['start', '--json']);
    assert.equal(refused.code, 1);
    assert.equal(diagnostic(refused), 'MCP_SERVICE_IDENTITY_MISMATCH');
    assert.equal(json(await user.service(['stop', '--json']))['action'], 'already_stopped');
    const conflict = json(await user.service(['status', '--json']));
    assert.deepEqual(
      [conflict['state'], (conflict['readiness'] as { owned: boolean }).owned],
      ['port_conflict', false],
    );
    const uninstall = await user.service(['uninstall', '--json']);
    assert.equal(uninstall.code, 0, uninstall.stderr);
    assert.equal(json(uninstall)['action'], 'uninstalled');
    assert.equal(alive(foreign.pid as number), true, 'the foreign server still runs');
    assert.equal((await readiness(port))['configuration_id'], null);
    foreign.kill();

    // Only what it owned is gone; the lock anchor and the user's files stay.
    assert.equal(existsSync(user.unitPath), false);
    assert.equal(existsSync(join(user.stateDir, 'current.json')), false);
    assert.equal(existsSync(join(user.stateDir, 'definitions', `${id}.json`)), false);
    assert.ok(existsSync(join(user.stateDir, 'lifecycle.lock')));
    assert.equal(readFileSync(join(flows, 'NOTES.md'), 'utf8'), 'mine\n');
    const twice = json(await user.service(['uninstall', '--json']));
    assert.deepEqual([twice['changed'], twice['action']], [false, 'already_uninstalled']);
    assert.deepEqual(
      [twice['service_id'], twice['configuration_id'], twice['endpoint']],
      [null, null, null],
    );
    assert.equal(existsSync(join(user.shimDir, 'loginctl.log')), false, 'linger never touched');
    assert.ok(!user.calls().some((c) => c.includes('kill')), 'no process was killed by name');
  });

  it('reports drift after the unit is edited, refuses to act on it, and install restores it', async () => {
    const user = serviceUser();
    const port = await freePort();
    assert.equal(
      (await user.service(['install', FOLDER, '--port', String(port), '--quiet'])).stdout,
      '',
    );
    const unit = readFileSync(user.unitPath, 'utf8');
    writeFileSync(
      user.unitPath,
      `${unit.replace('RestartSec=60', 'RestartSec=1')}\n[Service]\nNice=5\n`,
    );
    const status = await user.service(['status', '--json']);
    assert.equal(status.code, 0, 'a drifted service is a valid status');
    const drifted = json(status);
    assert.deepEqual(
      [drifted['state'], drifted['diagnostic_code']],
      ['drifted', 'MCP_SERVICE_CONFIGURATION_DRIFT'],
    );
    assert.deepEqual(
      (drifted['drift'] as { layer: string; property: string }[]).map(
        (d) => `${d.layer} ${d.property}`,
      ),
      ['manager NeedDaemonReload', 'unit Service.Nice', 'unit Service.RestartSec'],
    );
    const text = await user.service(['status']);
    assert.match(text.stdout, /unit Service\.RestartSec: expected 60, found 1/);
    for (const verb of ['restart', 'start']) {
      const refused = await user.service([verb, '--json']);
      assert.equal(diagnostic(refused), 'MCP_SERVICE_CONFIGURATION_DRIFT', verb);
    }
    const repaired = json(
      await user.service(['install', FOLDER, '--port', String(port), '--json']),
    );
    assert.deepEqual([repaired['action'], repaired['changed']], ['updated', true]);
    assert.equal(readFileSync(user.unitPath, 'utf8'), unit);
    assert.deepEqual(json(await user.service(['status', '--json']))['drift'], []);
    assert.equal((await user.service(['uninstall', '--quiet'])).code, 0);
  });

  it('asks for a restart when installed with new flags while the old definition runs', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const first = json(await user.service(['install', FOLDER, '--port', port, '--json']));
    const changed = await user.service([
      'install',
      FOLDER,
      '--port',
      port,
      '--max-active',
      '4',
      '--json',
    ]);
    assert.equal(changed.code, 1);
    assert.equal(diagnostic(changed), 'MCP_SERVICE_RESTART_REQUIRED');
    const status = json(await user.service(['status', '--json']));
    assert.deepEqual(
      [status['state'], status['diagnostic_code']],
      ['restart_required', 'MCP_SERVICE_RESTART_REQUIRED'],
    );
    const restarted = json(await user.service(['restart', '--json']));
    assert.notEqual(restarted['configuration_id'], first['configuration_id']);
    const port_ = Number(port);
    assert.equal((await readiness(port_))['configuration_id'], restarted['configuration_id']);
    assert.equal(json(await user.service(['status', '--json']))['state'], 'ready');
    // --no-start reconciles the registration and leaves the running process alone.
    const back = json(
      await user.service(['install', FOLDER, '--port', port, '--no-start', '--json']),
    );
    assert.deepEqual([back['action'], (back['runtime'] as Runtime).state], ['updated', 'running']);
    assert.equal((back['runtime'] as Runtime).pid, (restarted['runtime'] as Runtime).pid);
    assert.equal((await user.service(['uninstall'])).code, 0);
  });

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
      assert.equal(diagnostic(await user.service(['status'])), 'MCP_SERVICE_STATE_INVALID');
    }
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

  it('serve takes a well-formed --configuration-id over HTTP only', async () => {
    const { runCli } = await import('../helpers/cli.js');
    for (const id of ['xyz', 'ABCDEF0123456789ABCDEF0123456789', '0'.repeat(33), '']) {
      const bad = await runCli([
        'serve',
        'mcp',
        FOLDER,
        '--http',
        '--port',
        '0',
        '--configuration-id',
        id,
      ]);
      assert.equal(bad.code, 2, id);
      assert.match(bad.stderr, /--configuration-id/);
    }
    const stdio = await runCli(['serve', 'mcp', FOLDER, '--configuration-id', '0'.repeat(32)]);
    assert.equal(stdio.code, 2);
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
    assert.ok(took >= 15_000 && took < 20_000, `gave up after ${took} ms`);
    const status = json(await user.service(['status', '--json']));
    assert.equal((status['runtime'] as Runtime).state, 'starting');
    assert.equal(diagnostic(await user.service(['stop', '--json'])), 'MCP_SERVICE_STOP_UNSAFE');
    assert.equal(
      diagnostic(await user.service(['uninstall', '--json'])),
      'MCP_SERVICE_STOP_UNSAFE',
    );
    assert.ok(existsSync(user.unitPath), 'nothing removed while its process runs unproven');
  });
});

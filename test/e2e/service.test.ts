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
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import {
  diagnostic,
  foreignServer,
  freePort,
  json,
  SHIM_BIN,
  serviceUser,
} from '../helpers/service-env.js';

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

  it('reports a drop-in as drift, and neither stops nor restarts the unit it changes', async () => {
    const user = serviceUser();
    const port = String(await freePort());
    const installed = json(await user.service(['install', FOLDER, '--port', port, '--json']));
    const pid = (installed['runtime'] as { pid: number }).pid;
    const dir = `${user.unitPath}.d`;
    mkdirSync(dir, { recursive: true });
    const dropIn = join(dir, 'override.conf');
    writeFileSync(dropIn, '[Service]\nExecStart=\nExecStart=/bin/sh -c "exit 0"\n');
    const drift = async () =>
      (json(await user.service(['status', '--json']))['drift'] as { property: string }[]).map(
        (d) => d.property,
      );
    assert.deepEqual(await drift(), ['NeedDaemonReload'], 'added, not yet loaded');
    const reload = () =>
      spawnSync(join(SHIM_BIN, 'systemctl'), ['--user', 'daemon-reload'], { env: user.env });
    assert.equal(reload().status, 0);
    const status = json(await user.service(['status', '--json']));
    assert.deepEqual(
      [status['state'], status['diagnostic_code']],
      ['drifted', 'MCP_SERVICE_CONFIGURATION_DRIFT'],
    );
    assert.deepEqual(status['drift'], [
      { layer: 'manager', property: 'DropInPaths', expected: 'none', actual: dropIn },
    ]);
    for (const verb of ['stop', 'restart', 'start']) {
      const refused = await user.service([verb, '--json']);
      assert.equal(diagnostic(refused), 'MCP_SERVICE_CONFIGURATION_DRIFT', verb);
    }
    assert.ok(!user.calls().some((c) => c[1] === 'stop'), 'the manager was not asked to stop it');
    process.kill(pid, 0);
    rmSync(dir, { recursive: true });
    assert.equal(reload().status, 0);
    assert.deepEqual(await drift(), []);
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

  it('keeps async runs in a durable --state-dir across a restart', async () => {
    const user = serviceUser();
    const port = await freePort();
    assert.equal((await user.service(['install', FOLDER, '--port', String(port)])).code, 0);
    const runs = join(user.stateDir, 'runs');
    const exec = readFileSync(user.unitPath, 'utf8').match(/^ExecStart=.*$/m)?.[0] ?? '';
    assert.ok(exec.includes(`"--state-dir" "${runs}"`), exec);
    const client = new Client({ name: 'service-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    let runId: string;
    try {
      const started = (await client.callTool({
        name: 'mhl_run_start',
        arguments: { workflow: 'Greet', arguments: { name: 'ana' } },
      })) as unknown as { structuredContent: { runId: string } };
      runId = started.structuredContent.runId;
    } finally {
      await client.close();
    }
    const holds = () =>
      JSON.stringify(readdirSync(runs, { recursive: true })).includes(runId) ||
      readdirSync(runs, { recursive: true, withFileTypes: true }).some(
        (e) => e.isFile() && readFileSync(join(e.parentPath, e.name), 'utf8').includes(runId),
      );
    assert.ok(holds(), 'the run was written to the state dir');
    assert.equal(statSync(runs).mode & 0o077, 0, 'private to the user');
    assert.equal(json(await user.service(['restart', '--json']))['action'], 'restarted');
    assert.ok(holds(), 'the run survives the restart');
    assert.equal((await user.service(['uninstall', '--quiet'])).code, 0);
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
});

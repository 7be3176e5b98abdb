import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { readServeConfig, type ServeFlags } from '../../../src/server/config.js';

const read = (flags: ServeFlags, env: Record<string, string> = {}, dir?: string) =>
  readServeConfig(dir, flags, env);

function config(flags: ServeFlags, env: Record<string, string> = {}) {
  const result = read(flags, env);
  assert.ok(result.ok, result.ok ? '' : result.message);
  return result.config;
}

describe('readServeConfig', () => {
  it('defaults to stdio, the pipelines profile and the process working directory', () => {
    const c = config({});
    assert.equal(c.http, undefined);
    assert.equal(c.profile, 'pipelines');
    assert.equal(c.cwd, process.cwd());
    assert.equal(c.requireCwd, false);
    assert.equal(c.maxActive, 32);
    assert.equal(c.defaultTimeoutMs, 300_000);
    assert.equal(c.drainMs, 0);
    assert.equal(c.maxRunsPerCaller, 1000);
    assert.equal(c.maxQueuedPerCaller, 250);
  });

  it('takes per-owner run quotas up to the server-wide limits', () => {
    const c = config({ maxRunsPerCaller: '10000', maxQueuedPerCaller: '1' });
    assert.equal(c.maxRunsPerCaller, 10_000);
    assert.equal(c.maxQueuedPerCaller, 1);
    const refused = read({ maxRunsPerCaller: '0' }, {});
    assert.ok(!refused.ok && refused.message.includes('--max-runs-per-caller'));
    const queued = read({ maxQueuedPerCaller: '1001' }, {});
    assert.ok(!queued.ok && queued.message.includes('--max-queued-per-caller'));
  });

  it('lets flags win over MHL_SERVE_* variables', () => {
    const env = { MHL_SERVE_TOKEN: 'from-env', MHL_SERVE_STATE_DIR: '/env/state' };
    const c = config({ http: true, token: 'from-flag', stateDir: '/flag/state' }, env);
    assert.equal(c.http?.token, 'from-flag');
    assert.equal(c.stateDir, '/flag/state');
    const fromEnv = config({ http: true }, env);
    assert.equal(fromEnv.http?.token, 'from-env');
    assert.equal(fromEnv.stateDir, '/env/state');
  });

  it('resolves --cwd and the folder, and takes --require-cwd', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhl-config-'));
    const result = read({ cwd: dir, requireCwd: true }, {}, 'flows');
    assert.ok(result.ok);
    assert.equal(result.config.cwd, dir);
    assert.equal(result.config.root, resolve('flows'));
    assert.equal(result.config.requireCwd, true);
  });

  it('reads --store, --single-replica and the lease settings, flags over environment', () => {
    const c = config(
      { store: 'postgres://u:pw@db/mhl', singleReplica: true },
      {
        MHL_SERVE_STORE: 'postgres://other/db',
        MHL_SERVE_RUN_LOCK_TTL: '90',
        MHL_SERVE_REPLICA_ID: 'r-1',
      },
    );
    assert.equal(c.store, 'postgres://u:pw@db/mhl');
    assert.equal(c.singleReplica, true);
    assert.equal(c.runLockTtlMs, 90_000);
    assert.equal(c.replicaId, 'r-1');
    const d = config({}, { MHL_SERVE_SINGLE_REPLICA: 'yes', MHL_SERVE_RUN_LOCK_TTL: '1500ms' });
    assert.equal(d.singleReplica, true);
    assert.equal(d.runLockTtlMs, 1500);
    assert.equal(config({}).runLockTtlMs, 45_000);
    assert.equal(config({}).singleReplica, false);
  });

  it('never repeats a refused store URL, which may hold a password', () => {
    const result = read({ store: 'mysql://u:hunter2@h/db' });
    assert.ok(!result.ok);
    if (!result.ok) {
      assert.doesNotMatch(result.message, /hunter2/);
      assert.match(result.message, /not mysql:/);
    }
  });

  it('accepts --state-dir and --drain-timeout on stdio, where async runs are served too', () => {
    const c = config({ stateDir: 'state', drainTimeout: '30s' });
    assert.equal(c.stateDir, resolve('state'));
    assert.equal(c.drainMs, 30_000);
  });

  for (const [flags, env, exit] of [
    [{ port: '8080' }, {}, 2],
    [{ token: 't' }, {}, 2],
    [{ http: true, transport: 'stdio' }, {}, 2],
    [{ http: true, port: '65536' }, {}, 2],
    [{ http: true, port: '80x' }, {}, 2],
    [{ maxActive: '0' }, {}, 2],
    [{ maxActive: '4097' }, {}, 2],
    [{ defaultTimeoutMs: '-5' }, {}, 2],
    [{ defaultTimeoutMs: '1.5' }, {}, 2],
    [{ drainTimeout: '10 minutes' }, {}, 2],
    [{ json: true }, {}, 2],
    [{ maxQueued: '4' }, {}, 2],
    [{ maxRunsPerCaller: '0' }, {}, 2],
    [{ maxRunsPerCaller: '10001' }, {}, 2],
    [{ maxQueuedPerCaller: '1001' }, {}, 2],
    [{ maxQueuedPerCaller: 'lots' }, {}, 2],
    [{ profile: 'nope' }, {}, 2],
    [{ cwd: '/definitely/not/here' }, {}, 2],
    [{ http: true, principalHeader: 'x-user' }, {}, 1],
    [{}, { MHL_SERVE_TERMINAL_RUN_TTL: 'soon' }, 2],
    [{ maxSessions: '10' }, {}, 2],
    [{ http: true, maxSessions: '0' }, {}, 2],
    [{ http: true, maxSessions: '100001' }, {}, 2],
    [{ http: true, maxSessions: 'many' }, {}, 2],
    [{ http: true, maxSessionsPerClient: '0' }, {}, 2],
    [{ http: true, maxSessions: '10', maxSessionsPerClient: '11' }, {}, 2],
    [{ http: true }, { MHL_SERVE_SESSION_IDLE_TTL: '0' }, 2],
    [{ store: 'redis://h/0' }, {}, 2],
    [{ store: 'mysql://u:pw@h/db' }, {}, 2],
    [{}, { MHL_SERVE_STORE: '/just/a/path' }, 2],
    [{}, { MHL_SERVE_RUN_LOCK_TTL: 'forever' }, 2],
    [{}, { MHL_SERVE_RUN_LOCK_TTL: '50ms' }, 2],
    [{}, { MHL_SERVE_RUN_LOCK_TTL: '0' }, 2],
    [{}, { MHL_SERVE_REPLICA_ID: 'has space' }, 2],
    [{}, { MHL_SERVE_REPLICA_ID: 'x'.repeat(129) }, 2],
  ] as [ServeFlags, Record<string, string>, number][]) {
    it(`refuses ${JSON.stringify(flags)} ${JSON.stringify(env)} with exit ${exit}`, () => {
      const result = read(flags, env);
      assert.equal(result.ok, false);
      if (!result.ok) assert.equal(result.exit, exit);
    });
  }

  it('caps legacy sessions at 1000, 100 per client (never more than the total), by default', () => {
    const http = config({ http: true }).http;
    assert.deepEqual([http?.maxSessions, http?.maxSessionsPerClient], [10_000, 100]);
    assert.equal(http?.sessionIdleTtlMs, undefined);
    const small = config({ http: true, maxSessions: '40' }, { MHL_SERVE_SESSION_IDLE_TTL: '90s' });
    assert.deepEqual([small.http?.maxSessions, small.http?.maxSessionsPerClient], [40, 40]);
    assert.equal(small.http?.sessionIdleTtlMs, 90_000);
    const set = config({ http: true, maxSessions: '50', maxSessionsPerClient: '5' }).http;
    assert.deepEqual([set?.maxSessions, set?.maxSessionsPerClient], [50, 5]);
  });

  it('names the flag and its range when a session cap is refused', () => {
    const result = read({ http: true, maxSessions: '10', maxSessionsPerClient: '11' });
    assert.ok(!result.ok);
    assert.match(result.message, /--max-sessions-per-client takes a whole number from 1 to/);
  });
  it('bounds slow clients by default, and takes each bound from its flag', () => {
    const http = config({ http: true }).http;
    assert.equal(http?.headersTimeoutMs, 10_000);
    assert.equal(http?.bodyTimeoutMs, 10_000);
    assert.equal(http?.requestTimeoutMs, 30_000);
    assert.equal(http?.maxConnections, 512);
    assert.equal(http?.maxConnectionsPerAddress, 256);
    assert.equal(http?.bodyBufferBytes, 8 * 1024 * 1024);
    const set = config({
      http: true,
      headersTimeout: '250ms',
      bodyTimeout: '2s',
      requestTimeout: '1m',
      maxConnections: '10',
      maxConnectionsPerAddress: '3',
      bodyBufferMib: '2',
    }).http;
    assert.deepEqual(
      [
        set?.headersTimeoutMs,
        set?.bodyTimeoutMs,
        set?.requestTimeoutMs,
        set?.maxConnections,
        set?.maxConnectionsPerAddress,
        set?.bodyBufferBytes,
      ],
      [250, 2000, 60_000, 10, 3, 2 * 1024 * 1024],
    );
  });

  it('refuses --max-connections-per-address above --max-connections, naming it', () => {
    const result = read({ http: true, maxConnections: '10', maxConnectionsPerAddress: '11' });
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.equal(result.exit, 2);
      assert.ok(result.message.startsWith('--max-connections-per-address'), result.message);
    }
  });

  it('lowers the per-address default to a lower --max-connections', () => {
    const http = config({ http: true, maxConnections: '100' }).http;
    assert.equal(http?.maxConnectionsPerAddress, 100);
    assert.equal(
      config({ http: true, maxConnections: '100', maxConnectionsPerAddress: '100' }).http
        ?.maxConnectionsPerAddress,
      100,
    );
  });

  for (const [flags, flag] of [
    [{ headersTimeout: '0' }, '--headers-timeout'],
    [{ headersTimeout: '10' }, '--headers-timeout'],
    [{ bodyTimeout: '2h' }, '--body-timeout'],
    [{ requestTimeout: 'soon' }, '--request-timeout'],
    [{ headersTimeout: '20s', requestTimeout: '10s' }, '--headers-timeout'],
    [{ maxConnections: '0' }, '--max-connections'],
    [{ maxConnections: '65536' }, '--max-connections'],
    [{ maxConnectionsPerAddress: '1.5' }, '--max-connections-per-address'],
    [{ bodyBufferMib: '1' }, '--body-buffer-mib'],
    [{ bodyBufferMib: '4097' }, '--body-buffer-mib'],
  ] as [ServeFlags, string][]) {
    it(`refuses ${JSON.stringify(flags)}, naming ${flag}`, () => {
      const result = read({ http: true, ...flags });
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.equal(result.exit, 2);
        assert.ok(result.message.startsWith(flag), result.message);
      }
      // Without HTTP there is no listener to bound: the flag itself is refused.
      const stdio = read(flags);
      assert.equal(stdio.ok, false);
      if (!stdio.ok) assert.ok(stdio.message.startsWith(flag), stdio.message);
    });
  }

  it('reads MHL_PASS_ENV and MHL_LOG_LEVEL once', () => {
    const c = config({}, { MHL_PASS_ENV: 'A,B,,C', MHL_LOG_LEVEL: 'debug' });
    assert.deepEqual(c.passEnv, ['A', 'B', 'C']);
    assert.equal(c.logLevel, 'debug');
  });
});

describe('ServeConfigSchema', () => {
  // The configuration's schemas use zod's mini build (config-schema.ts), which loads no locale
  // of its own: a refusal must still say what is wrong, whatever else has loaded zod.
  it('refuses a value the flags cannot produce with a message saying what is wrong', async () => {
    const { ServeConfigSchema } = await import('../../../src/server/config.js');
    const base = config({});
    const parsed = ServeConfigSchema.safeParse({ ...base, maxActive: 0 });
    assert.equal(parsed.success, false);
    const issue = parsed.error?.issues[0];
    assert.deepEqual(issue?.path, ['maxActive']);
    assert.equal(issue?.code, 'too_small');
    assert.notEqual(issue?.message, 'Invalid input');
    const unknown = ServeConfigSchema.safeParse({ ...base, extra: 1 });
    assert.equal(unknown.error?.issues[0]?.code, 'unrecognized_keys');
    assert.equal(ServeConfigSchema.safeParse(base).success, true);
  });
});

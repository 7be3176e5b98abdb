import assert from 'node:assert/strict';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { platformRefusal } from '../../../src/cli/service.js';
import {
  acquireLifecycleLock,
  lockHolder,
  readinessOf,
  SERVICE_CODES,
  ServiceError,
  servicePaths,
} from '../../../src/service/index.js';
import { CurrentSchema, RuntimeSchema, readState } from '../../../src/service/state.js';
import { tempDir } from '../../helpers/cli.js';

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    return error.code;
  }
}

describe('service state files', () => {
  it('refuses corrupt, hostile or mistyped files with MCP_SERVICE_STATE_INVALID', async () => {
    const dir = tempDir();
    const path = join(dir, 'current.json');
    const bad = [
      'not json',
      '',
      '[]',
      'null',
      '{"schema_version":2,"service_id":"x","configuration_id":"0123456789abcdef0123456789abcdef","updated_at":"t"}',
      '{"schema_version":1,"service_id":"x","configuration_id":"../../etc/passwd","updated_at":"t"}',
      '{"schema_version":1,"service_id":"x","configuration_id":"0123456789abcdef0123456789abcdef","updated_at":"t","extra":1}',
      `{"schema_version":1,"service_id":"${'x'.repeat(5000)}","configuration_id":"0123456789abcdef0123456789abcdef","updated_at":"t"}`,
    ];
    for (const text of bad) {
      writeFileSync(path, text);
      assert.equal(await codeOf(readState(path, CurrentSchema)), SERVICE_CODES.STATE_INVALID, text);
    }
    writeFileSync(join(dir, 'runtime.json'), '{"schema_version":1,"pid":-1}');
    const runtime = readState(join(dir, 'runtime.json'), RuntimeSchema);
    assert.equal(await codeOf(runtime), SERVICE_CODES.STATE_INVALID);
    assert.equal(await readState(join(dir, 'missing.json'), CurrentSchema), undefined);
  });

  it('places state under XDG_STATE_HOME and ignores a relative one', () => {
    const abs = servicePaths({ HOME: '/home/ana', XDG_STATE_HOME: '/var/st' });
    assert.equal(abs.stateDir, '/var/st/mhl/managed-mcp');
    const rel = servicePaths({ HOME: '/home/ana', XDG_STATE_HOME: 'rel', XDG_CONFIG_HOME: 'x' });
    assert.equal(rel.stateDir, '/home/ana/.local/state/mhl/managed-mcp');
    assert.equal(rel.unitPath, '/home/ana/.config/systemd/user/mhl-managed-mcp.service');
  });
});

describe('service lifecycle lock', () => {
  it('lets one holder in, names it, and frees the lock on release', async () => {
    const anchor = join(tempDir(), 'state', 'lifecycle.lock');
    assert.equal(await lockHolder(anchor), null, 'no anchor yet: nobody holds it');
    const lock = await acquireLifecycleLock(anchor, 'start');
    assert.equal(statSync(anchor).mode & 0o777, 0o600);
    assert.equal(await codeOf(acquireLifecycleLock(anchor, 'stop')), SERVICE_CODES.BUSY);
    assert.deepEqual(await lockHolder(anchor), { pid: process.pid, command: 'start' });
    await lock.release();
    await lock.release();
    assert.equal(await lockHolder(anchor), null);
    const again = await acquireLifecycleLock(anchor, 'stop');
    await again.release();
  });

  it('refuses a corrupt anchor with MCP_SERVICE_STATE_INVALID', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const anchor = join(dir, 'lifecycle.lock');
    for (const text of ['', 'garbage', 'mhl-lifecycle-lock v1 ZZZ\n', '\u0000'.repeat(64)]) {
      writeFileSync(anchor, text);
      assert.equal(
        await codeOf(acquireLifecycleLock(anchor, 'start')),
        SERVICE_CODES.STATE_INVALID,
      );
    }
  });

  it('agrees on one anchor when two first commands race to create it', async () => {
    const anchor = join(tempDir(), 'lifecycle.lock');
    const results = await Promise.allSettled([
      acquireLifecycleLock(anchor, 'a'),
      acquireLifecycleLock(anchor, 'b'),
    ]);
    const held = results.filter((r) => r.status === 'fulfilled');
    assert.equal(held.length, 1);
    for (const r of held) await r.value.release();
  });
});

describe('service readiness answers', () => {
  it('takes only an mhl readiness document as a server identity', () => {
    const good = readinessOf(
      '{"status":"ready","version":"0.1.0","pid":7,"instance_id":"u","configuration_id":null}',
    );
    assert.equal(good.kind, 'ready');
    for (const text of [
      'oops',
      '{}',
      'null',
      '{"status":"ready","version":1,"pid":7,"instance_id":"u"}',
      '{"status":"draining","version":"0.1.0","pid":7,"instance_id":"u"}',
      '{"status":"ready","version":"0.1.0","pid":"7","instance_id":"u"}',
      '{"status":"ready","version":"0.1.0","pid":7,"instance_id":"u","configuration_id":5}',
    ]) {
      assert.equal(readinessOf(text).kind, 'other', text);
    }
  });
});

describe('service platforms', () => {
  it('reports MCP_SERVICE_UNSUPPORTED_PLATFORM everywhere but Linux', () => {
    assert.equal(platformRefusal('linux'), undefined);
    for (const platform of ['darwin', 'win32', 'freebsd'] as const) {
      assert.equal(platformRefusal(platform)?.code, SERVICE_CODES.UNSUPPORTED_PLATFORM);
    }
  });
});

/**
 * CheckpointStore: round trips, the latest pointer, TTL expiry, completion, loop progress,
 * validation of what is read back, fencing, and the sweep of abandoned sessions. Redaction and
 * the definition digest have their own files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { recordSchemas } from '../../../../src/runtime/checkpoints/checkpoint-records.schema.js';
import {
  CheckpointError,
  CheckpointStore,
  newSessionId,
  stateKeys,
} from '../../../../src/runtime/checkpoints/checkpoints.js';
import { FunctionValue, newObject } from '../../../../src/runtime/interpreter/values.js';
import { Redactor } from '../../../../src/runtime/services/redact.js';
import { DirStore, type Fence, MemoryStore, type Store } from '../../../../src/store/index.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

/** A store and a CheckpointStore on it, with a clock the test moves. */
function setup(store: Store = new MemoryStore()) {
  const clock = { ms: T0 };
  const state = new CheckpointStore(store, new Redactor(), {
    runtimeVersion: '0.1.0-test',
    now: () => new Date(clock.ms),
  });
  return { store, state, clock };
}

const draft = {
  last_step: 'Prepare',
  next_step: 'Check',
  completed_steps: ['Prepare'],
  variables: { project: 'x', count: 3, tags: ['a', 'b'], meta: newObject([['ok', true]]) },
  ttl_seconds: 0,
  digest: 'abc123',
};

function code(expected: string) {
  return (err: unknown) => {
    assert.ok(err instanceof CheckpointError, String(err));
    assert.equal(err.code, expected);
    return true;
  };
}

describe('CheckpointStore', () => {
  it('makes session ids of 32 lowercase hex characters', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newSessionId()));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
    assert.match(setup().state.newSessionId(), /^[0-9a-f]{32}$/);
  });

  it('round-trips a checkpoint, stamping pipeline, time and versions', async () => {
    const { store, state } = setup();
    const s = newSessionId();
    await state.save(s, 'Build', draft);
    assert.ok((await store.get(`state/${s}/Build.json`))?.endsWith('}\n'));
    const cp = await state.load(s, 'Build');
    assert.ok(cp);
    assert.equal(cp.pipeline, 'Build');
    assert.equal(cp.last_step, 'Prepare');
    assert.equal(cp.next_step, 'Check');
    assert.deepEqual(cp.completed_steps, ['Prepare']);
    assert.equal(cp.saved_at, new Date(T0).toISOString());
    assert.equal(cp.ttl_seconds, 0);
    assert.equal(cp.digest, 'abc123');
    assert.equal(cp.runtime_version, '0.1.0-test');
    assert.equal(cp.state_version, 1);
    assert.equal(cp.paused, undefined);
    assert.equal(Object.getPrototypeOf(cp.variables), null);
    assert.deepEqual(
      { ...cp.variables },
      {
        count: 3,
        meta: newObject([['ok', true]]),
        project: 'x',
        tags: ['a', 'b'],
      },
    );
  });

  it('round-trips a paused checkpoint', async () => {
    const { state } = setup();
    await state.save('s1', 'Build', { ...draft, paused: { reason: 'approve the plan' } });
    assert.deepEqual((await state.load('s1', 'Build'))?.paused, { reason: 'approve the plan' });
  });

  it('returns undefined for a missing checkpoint, loop file or result', async () => {
    const { state } = setup();
    assert.equal(await state.load('s1', 'Build'), undefined);
    assert.equal(await state.loadLoop('s1', 'Build'), undefined);
    assert.equal(await state.readResult('s1'), undefined);
    assert.equal(await state.latest('Build'), undefined);
  });

  it('refuses a variable that is not JSON data, naming it', async () => {
    const { store, state } = setup();
    const fn = new FunctionValue('f', async () => null);
    await assert.rejects(
      state.save('s1', 'Build', { ...draft, variables: { ok: 1, handler: fn } }),
      (err: unknown) => {
        assert.ok(err instanceof CheckpointError);
        assert.equal(err.code, 'STATE_NOT_PERSISTABLE');
        assert.equal(err.variable, 'handler');
        return true;
      },
    );
    assert.deepEqual(await store.list(''), []);
  });

  it('keeps the latest pointer as "<id>\\n" text', async () => {
    const { store, state } = setup();
    const s = newSessionId();
    await state.setLatest('Build', s);
    assert.equal(await store.get('state/Build.latest'), `${s}\n`);
    assert.equal(await state.latest('Build'), s);
    await store.put('state/Build.latest', 'not a session!\n');
    await assert.rejects(state.latest('Build'), code('STATE_CORRUPT'));
  });

  it('keeps no latest pointer when made with latestPointer: false, still checking names', async () => {
    const store = new MemoryStore();
    const state = new CheckpointStore(store, new Redactor(), { latestPointer: false });
    await state.setLatest('Build', newSessionId());
    assert.deepEqual(await store.list(''), []);
    assert.equal(await state.latest('Build'), undefined);
    await assert.rejects(state.setLatest('Build', '../x'), code('STATE_INVALID_NAME'));
    await assert.rejects(state.setLatest('../Build', newSessionId()), code('STATE_INVALID_NAME'));
  });

  it('rejects session ids and pipeline names that cannot name state', async () => {
    const { state } = setup();
    for (const session of ['../x', '', 'a/b', 'sessions', 'has.dot', 'x'.repeat(129)]) {
      await assert.rejects(
        state.save(session, 'Build', draft),
        code('STATE_INVALID_NAME'),
        session,
      );
    }
    for (const pipeline of ['result', '../Build', 'a-b', '9lives', '']) {
      await assert.rejects(state.save('s1', pipeline, draft), code('STATE_INVALID_NAME'), pipeline);
    }
    assert.equal(stateKeys.loop('s1', 'Cycle'), 'state/s1/loop-Cycle.json');
  });

  it('discards and deletes a checkpoint once its TTL has passed', async () => {
    const { store, state, clock } = setup();
    await state.save('s1', 'Build', { ...draft, ttl_seconds: 60 });
    await state.save('s2', 'Build', { ...draft, ttl_seconds: 0 });
    clock.ms = T0 + 59_999;
    assert.ok(await state.load('s1', 'Build'));
    clock.ms = T0 + 60_000;
    assert.equal(await state.load('s1', 'Build'), undefined);
    assert.equal(await store.get('state/s1/Build.json'), undefined);
    clock.ms = T0 + 10 * 365 * 86_400_000;
    assert.ok(await state.load('s2', 'Build'), 'ttl 0 never expires');
  });

  it('completes a run: result.json written, checkpoint gone, loop progress kept', async () => {
    const { store, state } = setup();
    await state.save('s1', 'Cycle', draft);
    const loop = { next_iteration: 3, terminal_reason: 'stop_when', instance_id: 'i-1' } as const;
    await state.saveLoop('s1', 'Cycle', loop);
    await state.complete('s1', 'Cycle', {
      variables: { project: 'x', total: 7 },
      output: newObject([['url', 'https://example.test']]),
      digest: 'abc123',
    });
    assert.equal(await store.get('state/s1/Cycle.json'), undefined);
    assert.deepEqual(await store.list('state/s1/'), [
      'state/s1/loop-Cycle.json',
      'state/s1/result.json',
    ]);
    const result = await state.readResult('s1');
    assert.ok(result);
    assert.equal(result.pipeline, 'Cycle');
    assert.deepEqual({ ...result.variables }, { project: 'x', total: 7 });
    assert.deepEqual(result.output, newObject([['url', 'https://example.test']]));
    assert.equal(result.completed_at, new Date(T0).toISOString());
    assert.equal(result.state_version, 1);
    const progress = await state.loadLoop('s1', 'Cycle');
    assert.deepEqual(
      { ...progress, saved_at: undefined },
      { loop: 'Cycle', ...loop, saved_at: undefined, state_version: 1 },
    );
  });

  it('completes a run on the dir store: the checkpoint file removed, the session kept', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'mhl-complete-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const { state } = setup(new DirStore(root));
    await state.save('s1', 'Build', draft);
    await state.complete('s1', 'Build', { variables: { project: 'x' } });
    assert.deepEqual(readdirSync(join(root, 'state/s1')), ['result.json']);
    assert.equal(await state.load('s1', 'Build'), undefined);
  });

  it('finds the most recently completed run of a pipeline', async () => {
    const { state, clock } = setup();
    assert.equal(await state.latestCompleted('Build'), undefined);
    await state.complete('old', 'Build', { variables: {} });
    clock.ms += 1000;
    await state.complete('new', 'Build', { variables: {} });
    clock.ms += 1000;
    await state.complete('other', 'Deploy', { variables: {} });
    await state.save('running', 'Build', draft);
    assert.equal(await state.latestCompleted('Build'), 'new');
    assert.equal(await state.latestCompleted('Deploy'), 'other');
  });
});

describe('CheckpointStore: reading back', () => {
  it('names the key of a file that is not JSON', async () => {
    const { store, state } = setup();
    await store.put('state/s1/Build.json', '{"pipeline": "Build", truncated');
    await assert.rejects(state.load('s1', 'Build'), (err: unknown) => {
      assert.ok(err instanceof CheckpointError);
      assert.equal(err.code, 'STATE_CORRUPT');
      assert.equal(err.key, 'state/s1/Build.json');
      assert.ok(err.message.includes('state/s1/Build.json'));
      assert.equal(err.kind, 'other');
      return true;
    });
  });

  it('rejects a file that does not match the format', async () => {
    const { store, state } = setup();
    const bad = [
      { pipeline: 'Build', last_step: 'A', completed_steps: [], variables: {}, saved_at: 'x' },
      [],
      null,
      { pipeline: 'Build', next_step: 3 },
    ];
    for (const record of bad) {
      await store.put('state/s1/Build.json', JSON.stringify(record));
      await assert.rejects(
        state.load('s1', 'Build'),
        code('STATE_CORRUPT'),
        JSON.stringify(record),
      );
    }
    await store.put('state/s1/loop-Build.json', '{"loop":"Build","next_iteration":-1}');
    await assert.rejects(state.loadLoop('s1', 'Build'), code('STATE_CORRUPT'));
    await store.put('state/s1/result.json', '{"pipeline":"Build"}');
    await assert.rejects(state.readResult('s1'), code('STATE_CORRUPT'));
  });

  it('rejects a checkpoint stored under another pipeline name', async () => {
    const { store, state } = setup();
    await state.save('s1', 'Build', draft);
    await store.put('state/s1/Deploy.json', (await store.get('state/s1/Build.json')) as string);
    await assert.rejects(state.load('s1', 'Deploy'), code('STATE_CORRUPT'));
  });

  it('reports a state file from a newer runtime as state_schema_too_new', async () => {
    const { store, state } = setup();
    await store.put('state/s1/Build.json', JSON.stringify({ state_version: 2, shape: 'unknown' }));
    await assert.rejects(state.load('s1', 'Build'), (err: unknown) => {
      assert.ok(err instanceof CheckpointError);
      assert.equal(err.code, 'STATE_SCHEMA_TOO_NEW');
      assert.equal(err.kind, 'state_schema_too_new');
      assert.equal(err.stateVersion, 2);
      assert.equal(err.key, 'state/s1/Build.json');
      return true;
    });
  });

  it('accepts older files without digest or versions, and unknown fields', async () => {
    const { store, state } = setup();
    const legacy = {
      pipeline: 'RelatorioDeBuild',
      last_step: 'Preparar',
      next_step: 'Verificacoes',
      completed_steps: ['Preparar'],
      variables: { __last_step: 'Preparar', projeto: 'x' },
      saved_at: '2026-09-02T23:33:29-03:00',
      ttl_seconds: 0,
      from_the_future: { anything: true },
    };
    await store.put('state/s1/RelatorioDeBuild.json', JSON.stringify(legacy));
    const cp = await state.load('s1', 'RelatorioDeBuild');
    assert.ok(cp);
    assert.equal(cp.digest, undefined);
    assert.equal(cp.state_version, undefined);
    assert.equal(cp.variables['projeto'], 'x');
  });
});

describe('CheckpointStore: fencing', () => {
  /** A memory store with a `fence` capability whose lease check the test controls. */
  function fencedStore(holds: () => boolean) {
    const inner = new MemoryStore();
    const seen: Fence[] = [];
    const store: Store = {
      capabilities: new Set(['fence']),
      fence: {
        putFenced: async (key, value, fence) => {
          seen.push(fence);
          if (!holds()) return false;
          await inner.put(key, value);
          return true;
        },
        deleteFenced: async (key, fence) => {
          seen.push(fence);
          if (!holds()) return false;
          await inner.delete(key);
          return true;
        },
        writeFenced: () =>
          Promise.reject(new Error('the checkpoint store writes one key at a time')),
      },
      get: (k, o) => inner.get(k, o),
      put: () => Promise.reject(new Error('unfenced put')),
      delete: (k, o) => inner.delete(k, o),
      list: (p, o) => inner.list(p, o),
      close: () => inner.close(),
    };
    return { store, seen };
  }

  it('writes through the fence while the lease holds, and fails once it is lost', async () => {
    let holds = true;
    const { store, seen } = fencedStore(() => holds);
    const { state } = setup(store);
    const fence = { runId: 's1', token: 'tok-1' };
    await state.save('s1', 'Build', draft, { fence });
    assert.ok(await state.load('s1', 'Build'));
    assert.deepEqual(seen, [fence]);
    holds = false;
    await assert.rejects(state.save('s1', 'Build', draft, { fence }), code('STATE_LEASE_LOST'));
    await assert.rejects(
      state.complete('s1', 'Build', { variables: {} }, { fence }),
      code('STATE_LEASE_LOST'),
    );
  });
});

describe('CheckpointStore.sweepExpired', () => {
  it('removes expired checkpoints, their loop files and pointers; keeps everything else', async () => {
    const { store, state, clock } = setup();
    await state.save('expired', 'Build', { ...draft, ttl_seconds: 60 });
    await state.saveLoop('expired', 'Build', {
      next_iteration: 1,
      terminal_reason: '',
      instance_id: 'i',
    });
    await state.setLatest('Build', 'expired');
    await state.save('fresh', 'Build', { ...draft, ttl_seconds: 3600 });
    await state.save('forever', 'Deploy', { ...draft, ttl_seconds: 0 });
    await state.setLatest('Deploy', 'forever');
    await state.complete('done', 'Build', { variables: {} });
    await state.save('mixed', 'Build', { ...draft, ttl_seconds: 60 });
    await state.complete('mixed', 'Other', { variables: {} });
    await store.put('state/broken/Build.json', '{oops');
    await store.put('state/sessions/abc.json', '{"id":"abc"}');
    await store.put('state/Legacy.json', '{}');

    clock.ms = T0 + 120_000;
    const report = await state.sweepExpired();
    assert.deepEqual(report.expired.sort(), ['state/expired/Build.json', 'state/mixed/Build.json']);
    assert.deepEqual(report.sessions, ['expired']);
    assert.deepEqual(report.unreadable, ['state/broken/Build.json']);
    assert.deepEqual(await store.list(''), [
      'state/Deploy.latest',
      'state/Legacy.json',
      'state/broken/Build.json',
      'state/done/result.json',
      'state/forever/Deploy.json',
      'state/fresh/Build.json',
      'state/mixed/result.json',
      'state/sessions/abc.json',
    ]);
  });

  it('honours an explicit now', async () => {
    const { state } = setup();
    await state.save('s1', 'Build', { ...draft, ttl_seconds: 10 });
    assert.deepEqual((await state.sweepExpired(new Date(T0 + 5_000))).expired, []);
    assert.deepEqual((await state.sweepExpired(new Date(T0 + 10_000))).expired, [
      'state/s1/Build.json',
    ]);
  });
});

describe('state record schemas', () => {
  it('generate JSON Schema with a description on every field', () => {
    for (const schema of Object.values(recordSchemas())) {
      const json = z.toJSONSchema(schema, { io: 'input' }) as {
        description?: string;
        properties: Record<string, { description?: string }>;
      };
      assert.ok(json.description, 'schema description');
      const names = Object.keys(json.properties);
      assert.ok(names.length >= 6, names.join());
      for (const name of names) assert.ok(json.properties[name]?.description, name);
    }
  });
});

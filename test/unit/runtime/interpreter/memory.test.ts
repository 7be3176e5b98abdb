/**
 * `memory` declarations (spec: mhl-language.md §5.4): kv, json (with `::` navigation), append_log
 * and jsonl, positional methods, interpolated paths and `path_guard`. Files land in the run's
 * temp cwd.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { failure, ok, run, tempDir } from './harness.js';

describe('memory: kv', () => {
  const decls = 'memory Kv1 { type: "kv" store: "memory" }';

  it('sets and gets values, with defaults for missing keys', async () => {
    const vars = await ok(
      'var r = null step S { var set = Kv1.set("a", {x: 1}) r = [set, Kv1.get("a"), Kv1.get("zz"), Kv1.get("zz", 5)] }',
      { decls },
    );
    assert.deepEqual(vars['r'], [{ x: 1 }, { x: 1 }, null, 5]);
  });

  it('lives for one run: its later steps see a value, a later run in the process does not', async () => {
    const shared = 'memory KvShared { type: "kv" store: "memory" }';
    const first = await ok(
      'var r = null step A { KvShared.set("k", 41) } step B { r = KvShared.get("k") }',
      { decls: shared },
    );
    assert.equal(first['r'], 41);
    const later = await ok('var r = null step S { r = KvShared.get("k", "unset") }', {
      decls: shared,
    });
    assert.equal(later['r'], 'unset');
  });
});

describe('memory: json', () => {
  const decls = 'memory J { type: "json" path: ".mhl/state.json" }';

  it('navigates nested values with ::, defaulting when any part is missing', async () => {
    const vars = await ok(
      'var r = null step S { J.set("cfg", {retries: 3, tags: ["a", "b"]}) r = [J.get("cfg::retries"), J.get("cfg::tags::1"), J.get("cfg::nope", "d"), J.get("cfg::tags::9"), J.get("cfg::retries::x")] }',
      { decls },
    );
    assert.deepEqual(vars['r'], [3, 'b', 'd', null, null]);
  });

  it('sets nested keys with ::, and many keys from one object', async () => {
    const r = await run(
      'var r = null step S { J.set("a::b", 1) var bulk = J.set({k: 1, m: [2]}) r = [J.get("a"), bulk, J.get("m::0")] }',
      { decls },
    );
    assert.deepEqual(r.vars['r'], [{ b: 1 }, { k: 1, m: [2] }, 2]);
    const file = JSON.parse(readFileSync(join(r.cwd, '.mhl/state.json'), 'utf8'));
    assert.deepEqual(file, { a: { b: 1 }, k: 1, m: [2] });
  });

  it('removes keys, nested ones too, answering whether there was one', async () => {
    const r = await run(
      'var r = null step S { J.set("a", {b: 1, c: [1, 2]}) J.set("top", 1) r = [J.remove("a::b"), J.remove("a::c::0"), J.remove("top"), J.remove("top"), J.remove("a::zz"), J.get("a")] }',
      { decls },
    );
    assert.deepEqual(r.vars['r'], [true, true, true, false, false, { c: [2] }]);
    const file = JSON.parse(readFileSync(join(r.cwd, '.mhl/state.json'), 'utf8'));
    assert.deepEqual(file, { a: { c: [2] } });
  });

  it('persists between runs in the same folder', async () => {
    const first = await run('step S { J.set("n", 7) }', { decls });
    const vars = await ok('var r = null step S { r = J.get("n") }', { decls, cwd: first.cwd });
    assert.equal(vars['r'], 7);
  });

  it('interpolates its path', async () => {
    const r = await run('step S { J.set("a", 1) }', {
      decls: 'memory J { type: "json" path: "s.${context.session_id}.json" }',
    });
    assert.deepEqual(readdirSync(r.cwd), [`s.${r.outcome.session}.json`]);
  });
});

describe('memory: append_log and jsonl', () => {
  const decls =
    'memory Log { type: "append_log" path: "logs/a.log" }\nmemory Lines { type: "jsonl" path: "logs/a.jsonl" }';

  it('appends one line per call and returns what it appended', async () => {
    const r = await run(
      'var r = null step S { r = [Log.append("one"), Log.append("two"), Lines.append({a: 1}), Lines.append("s")] }',
      { decls },
    );
    assert.deepEqual(r.vars['r'], ['one', 'two', { a: 1 }, 's']);
    assert.equal(readFileSync(join(r.cwd, 'logs/a.log'), 'utf8'), 'one\ntwo\n');
    const lines = readFileSync(join(r.cwd, 'logs/a.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.value),
      [{ a: 1 }, 's'],
    );
    for (const l of lines) {
      assert.deepEqual(Object.keys(l).sort(), ['ts', 'value']);
      assert.ok(!Number.isNaN(Date.parse(l.ts)));
    }
  });

  it('refuses a structured value in an append_log', async () => {
    assert.deepEqual(await failure('step S { Log.append({a: 1}) }', { decls }), {
      kind: 'step_failed',
      step: 'S',
      at: '4:10',
    });
  });
});

describe('memory: failures', () => {
  const table: [string, string][] = [
    ['memory V { type: "vector" }', 'V.set("a", 1)'],
    [
      'tool Cfg {\n  name() -> "../evil"\n}\nmemory J { type: "json" path: "mem/${Cfg.name()}.json" path_guard: "no_traversal" }',
      'J.set("a", 1)',
    ],
    [
      'tool Cfg {\n  name() -> "/etc/evil"\n}\nmemory J { type: "json" path: "${Cfg.name()}.json" path_guard: "no_traversal" }',
      'J.get("a")',
    ],
  ];
  for (const [decls, call] of table) {
    it(`raises for ${call} on ${decls.split('\n').at(-1)}`, async () => {
      const f = await failure(`step S { ${call} }`, { decls });
      assert.equal(f.kind, 'step_failed');
      assert.equal(f.step, 'S');
    });
  }

  it('lets path_guard accept a literal base path that climbs out', async () => {
    const base = tempDir();
    const cwd = join(base, 'work');
    mkdirSync(cwd);
    const r = await run('step S { J.set("a", 1) }', {
      cwd,
      decls:
        'memory J { type: "json" path: "../guarded/${context.session_id}.json" path_guard: "no_traversal" }',
    });
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual(readdirSync(join(base, 'guarded')), [`${r.outcome.session}.json`]);
  });
});

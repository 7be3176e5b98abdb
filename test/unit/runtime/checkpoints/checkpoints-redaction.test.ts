/**
 * Secrets never reach disk: everything CheckpointStore writes through a dir store is read back
 * from the files themselves and searched for every registered secret, raw and JSON-escaped.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CheckpointStore } from '../../../../src/runtime/checkpoints/checkpoints.js';
import { newObject } from '../../../../src/runtime/interpreter/values.js';
import { REDACTED, Redactor } from '../../../../src/runtime/services/redact.js';
import { DirStore } from '../../../../src/store/index.js';

const TOKEN = 'sk-live-9f8e7d6c5b4a';
const PIN = '4815162342';
const ESCAPED = 'pa"ss\\word\n42';

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

function setup(...secrets: string[]) {
  const root = mkdtempSync(join(tmpdir(), 'mhl-redact-'));
  roots.push(root);
  const redactor = new Redactor();
  for (const s of secrets) redactor.register(s);
  return { root, state: new CheckpointStore(new DirStore(root), redactor) };
}

describe('CheckpointStore redaction', () => {
  it('writes no registered secret into any file under the store root', async () => {
    const { root, state } = setup(TOKEN, PIN, ESCAPED);
    const variables = {
      token: TOKEN,
      header: `Authorization: Bearer ${TOKEN}`,
      nested: newObject([['list', [`x ${TOKEN} y`, `pw=${ESCAPED}`]]]),
      [`key-${TOKEN}`]: 1,
      pin: Number(PIN),
      pin_text: `call ${PIN}`,
      safe: 'nothing secret here',
    };
    await state.save('s1', 'Build', {
      last_step: 'Prepare',
      next_step: 'Check',
      completed_steps: ['Prepare'],
      variables,
      ttl_seconds: 0,
      paused: { reason: `waiting for ${TOKEN}` },
    });
    await state.saveLoop('s1', 'Build', {
      next_iteration: 1,
      terminal_reason: '',
      instance_id: `inst-${TOKEN}`,
    });
    await state.complete('s2', 'Build', { variables, output: newObject([['t', TOKEN]]) });
    await state.setLatest('Build', 's1');

    const written = files(root);
    assert.equal(written.length, 4);
    for (const file of written) {
      const text = readFileSync(file, 'utf8');
      for (const secret of [TOKEN, PIN, ESCAPED, JSON.stringify(ESCAPED).slice(1, -1)]) {
        assert.ok(!text.includes(secret), `${file} contains ${JSON.stringify(secret)}`);
      }
    }
    const cp = await state.load('s1', 'Build');
    assert.ok(cp);
    assert.equal(cp.variables['token'], REDACTED);
    assert.equal(cp.variables['header'], `Authorization: Bearer ${REDACTED}`);
    assert.equal(cp.variables['pin'], REDACTED);
    assert.equal(cp.variables['safe'], 'nothing secret here');
    assert.equal(cp.variables[`key-${REDACTED}`], 1);
    assert.equal(cp.paused?.reason, `waiting for ${REDACTED}`);
    const result = await state.readResult('s2');
    assert.deepEqual(result?.output, newObject([['t', REDACTED]]));
    assert.equal(result?.variables['token'], REDACTED);
  });

  it('keeps files valid JSON when a secret collides with JSON syntax', async () => {
    const { state } = setup('true', 'null');
    await state.save('s1', 'Build', {
      last_step: '',
      next_step: 'A',
      completed_steps: [],
      variables: { flag: true, nothing: null, word: 'true story' },
      ttl_seconds: 0,
    });
    const cp = await state.load('s1', 'Build');
    assert.ok(cp);
    assert.equal(cp.variables['flag'], true);
    assert.equal(cp.variables['nothing'], null);
    assert.equal(cp.variables['word'], `${REDACTED} story`);
  });
});

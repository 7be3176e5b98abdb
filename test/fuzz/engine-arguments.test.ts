/**
 * Property: valid arguments to the four workflow-engine tools, mutated at a random place
 * (a value replaced by random JSON, a member deleted, a member added), sent by the SDK client
 * to the built CLI, are always answered: a result whose status the tool declares, or an
 * `isError` result with `INVALID_ARGUMENT` or a documented domain code. Never a protocol error,
 * never a result that fails the declared output schema (the client checks it), and the server
 * answers a valid call afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ENGINE_ERROR_CODES } from '../../src/surfaces/engine/errors.js';
import {
  artifact,
  confirmed,
  type EngineSession,
  engineSession,
  LOOP_HOST as HOST,
  LOOP_RELEASE as LOOP,
  LOOP_POLICY as POLICY,
  project,
  type Structured,
  TOOLS,
} from '../helpers/engine.js';
import { fc, holds } from '../helpers/fuzz.js';

const STATE = confirmed({ topic: 'fuzz' });
const CODES = new Set<string>([...ENGINE_ERROR_CODES, 'INVALID_ARGUMENT']);

/** Every path into `value` (object members and array items), the root included. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push(...paths(v, [...at, i]));
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  }
  return out;
}

/** `value` with the thing at `path` replaced, deleted, or given an extra member. */
function mutate(value: unknown, path: (string | number)[], op: string, junk: unknown): unknown {
  if (path.length === 0) return op === 'replace' ? junk : value;
  const copy: Structured = Array.isArray(value) ? [...value] : { ...(value as object) };
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (rest.length > 0) copy[head] = mutate(copy[head], rest, op, junk);
  else if (op === 'replace') copy[head] = junk;
  else if (op === 'delete')
    Array.isArray(copy) ? copy.splice(head as number, 1) : delete copy[head];
  else if (!Array.isArray(copy[head]) && typeof copy[head] === 'object' && copy[head] !== null) {
    copy[head] = { ...copy[head], fuzz_extra: junk };
  } else copy[head] = junk;
  return copy;
}

describe('workflow-engine: mutated arguments', () => {
  let s: EngineSession;
  const calls: [string, Structured][] = [];

  before(async () => {
    s = await engineSession([LOOP]);
    const root = project();
    const start = { workflow: 'loop', confirmed_state: STATE, host: HOST };
    const started = await s.call(TOOLS.start, start);
    const checkpoint = started.structured.checkpoint;
    const doc = {
      harness: 'claude-code',
      adapter: HOST.adapter,
      capabilities: ['file-write'],
      validator_capabilities: ['web'],
      assets: [],
    };
    const manifest = artifact(
      root,
      'workspace-manifest',
      '.rimthan/workspace-manifest.json',
      JSON.stringify(doc),
    );
    const prepare = {
      checkpoint,
      confirmed_state: STATE,
      artifacts: [manifest],
      attestation: { project_root: root, repository_policy: POLICY },
    };
    const prepared = await s.call(TOOLS.prepare, prepare);
    const submit = {
      checkpoint,
      confirmed_state: STATE,
      validation_bundle: prepared.structured.validation_bundle,
      reports: [],
    };
    calls.push(
      [TOOLS.start, start],
      [TOOLS.continue, { checkpoint, prior_confirmed_state: STATE, confirmed_state: STATE }],
      [TOOLS.prepare, prepare],
      [TOOLS.submit, submit],
    );
  });
  after(() => s.close());

  it('answers every mutation with a declared status or a documented code', async (t) => {
    const property = fc.asyncProperty(
      fc.nat(3),
      fc.nat(),
      fc.constantFrom('replace', 'delete', 'add'),
      fc.jsonValue({ maxDepth: 2 }),
      async (which, where, op, junk) => {
        const [name, args] = calls[which] as [string, Structured];
        const all = paths(args);
        const path = all[where % all.length] as (string | number)[];
        const mutated = mutate(args, path, op, junk);
        if (mutated === null || typeof mutated !== 'object' || Array.isArray(mutated)) return;
        const r = await s.call(name, mutated as Structured);
        if (r.isError) {
          const code = r.structured.code ?? r.diagnostic?.code;
          assert.ok(
            CODES.has(code),
            `${name} answered ${JSON.stringify(r.structured)} ${JSON.stringify(r.diagnostic)}`,
          );
        } else assert.equal(typeof r.structured.status, 'string');
      },
    );
    await holds(t, property, 300);
    const again = await s.call(TOOLS.start, calls[0]?.[1] as Structured);
    assert.equal(again.structured.status, 'active');
  });
});

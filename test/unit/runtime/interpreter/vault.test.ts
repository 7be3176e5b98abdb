/**
 * `vault()` in the interpreter: it asks the host's lookup (name and kind), registers what it
 * returns for redaction before anything can print it, refuses malformed calls with `TYPE` at
 * the call, and passes the host's own codes through.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LangError } from '../../../../src/lang/index.js';
import type { VaultLookup } from '../../../../src/runtime/interpreter/builtins.js';
import { failure, run } from './harness.js';

const SECRET = 'vault-secret-8c1e';

function lookup(calls: [string, string | undefined][] = []): VaultLookup {
  return async (slot, kind) => {
    calls.push([slot, kind]);
    if (slot === 'missing') throw new LangError('SECRET_NOT_FOUND', `vault("${slot}"): none`);
    return SECRET;
  };
}

describe('vault()', () => {
  it('returns the host value and redacts it in output and results', async () => {
    const calls: [string, string | undefined][] = [];
    const r = await run(
      'var seen = ""\nstep S {\n var v = vault("db", kind: "password")\n seen = "got ${v}"\n log(seen)\n}',
      { vault: lookup(calls) },
    );
    assert.equal(r.outcome.status, 'completed', r.outcome.error?.message);
    assert.deepEqual(calls, [['db', 'password']]);
    assert.deepEqual(r.output, ['got [REDACTED]']);
    assert.equal(r.vars['seen'], 'got [REDACTED]');
  });

  for (const call of [
    'vault(1)',
    'vault("a", "b")',
    'vault("a", other: "x")',
    'vault("a", kind: 3)',
    'vault()',
  ]) {
    it(`refuses ${call} with TYPE at the call`, async () => {
      const r = await run(`step S {\n log(${call}) }`, { vault: lookup() });
      assert.equal(r.outcome.status, 'failed');
      assert.match(r.outcome.error?.message ?? '', /main\.mh:4:6: vault: /);
      assert.equal(r.outcome.error?.code, 'TYPE');
    });
  }

  it("passes the host's code through at the call's position", async () => {
    const r = await run('step S {\n log(vault("missing")) }', { vault: lookup() });
    assert.equal(r.outcome.error?.code, 'SECRET_NOT_FOUND');
    assert.equal(
      (await failure('step S {\n log(vault("missing")) }', { vault: lookup() })).at,
      '4:6',
    );
  });

  it('is UNSUPPORTED where the host has no vault', async () => {
    const r = await run('step S {\n log(vault("db")) }');
    assert.equal(r.outcome.error?.code, 'UNSUPPORTED');
  });
});

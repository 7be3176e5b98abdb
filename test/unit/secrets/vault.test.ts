/**
 * The vault on a real folder: records without values in every listing, 0600 files, and every
 * way the files can be wrong (damaged, truncated, another key, a missing or exposed key) met
 * with its own code while nothing on disk changes.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SecretsError } from '../../../src/secrets/errors.js';
import { formatVaultKey } from '../../../src/secrets/key.js';
import { vaultPaths } from '../../../src/secrets/paths.js';
import { Vault } from '../../../src/secrets/vault.js';
import { tempDir } from '../../helpers/cli.js';

const VALUE = 'correct-horse-battery-staple';

function freshVault(): Vault {
  return new Vault(vaultPaths({ XDG_CONFIG_HOME: tempDir('mhl-vault-') }));
}

async function codeOf(task: Promise<unknown>): Promise<string> {
  try {
    await task;
  } catch (error) {
    assert.ok(error instanceof SecretsError, String(error));
    return error.code;
  }
  assert.fail('expected a SecretsError');
}

describe('vault', () => {
  it('adds, lists, edits and removes records, never listing a value', async () => {
    const vault = freshVault();
    const added = await vault.add({
      name: 'db/password',
      kind: 'password',
      label: 'DB',
      value: VALUE,
    });
    assert.match(added.id, /^sec_[0-9a-f]{32}$/);
    assert.equal('value' in added, false);
    const listed = await vault.list();
    assert.deepEqual(listed, [added]);
    assert.doesNotMatch(JSON.stringify(listed), new RegExp(VALUE));
    assert.doesNotMatch(readFileSync(vault.paths.vault, 'utf8'), new RegExp(VALUE));
    const edited = await vault.edit({ name: 'db/password', value: `${VALUE}-2` });
    assert.equal(edited.id, added.id);
    assert.equal(edited.kind, 'password');
    assert.equal((await vault.resolve({ id: added.id })).value, `${VALUE}-2`);
    assert.equal((await vault.resolve({ name: 'db/password' })).value, `${VALUE}-2`);
    assert.deepEqual(await vault.list('token'), []);
    await vault.remove('db/password');
    assert.deepEqual(await vault.list(), []);
    assert.equal(await codeOf(vault.remove('db/password')), 'SECRET_NOT_FOUND');
  });

  it('writes the key and the vault 0600 in a 0700 folder', async () => {
    const vault = freshVault();
    await vault.add({ name: 'a', value: VALUE });
    assert.equal(statSync(vault.paths.key).mode & 0o777, 0o600);
    assert.equal(statSync(vault.paths.vault).mode & 0o777, 0o600);
    assert.equal(statSync(vault.paths.dir).mode & 0o777, 0o700);
  });

  it('refuses bad names, kinds, labels, values and a second add of a name', async () => {
    const vault = freshVault();
    assert.equal(await codeOf(vault.add({ name: '../x', value: VALUE })), 'SECRET_NAME_INVALID');
    assert.equal(await codeOf(vault.add({ name: '', value: VALUE })), 'SECRET_NAME_INVALID');
    assert.equal(
      await codeOf(vault.add({ name: 'a', kind: 'pgp', value: VALUE })),
      'SECRET_KIND_INVALID',
    );
    assert.equal(
      await codeOf(vault.add({ name: 'a', label: 'x\ny', value: VALUE })),
      'SECRET_LABEL_INVALID',
    );
    assert.equal(await codeOf(vault.add({ name: 'a', value: 'abc' })), 'SECRET_VALUE_INVALID');
    assert.equal(
      await codeOf(vault.add({ name: 'a', value: 'x'.repeat(65 * 1024) })),
      'SECRET_VALUE_INVALID',
    );
    await vault.add({ name: 'a', value: VALUE });
    assert.equal(await codeOf(vault.add({ name: 'a', value: VALUE })), 'SECRET_EXISTS');
    assert.equal(await codeOf(vault.edit({ name: 'b', value: VALUE })), 'SECRET_NOT_FOUND');
  });

  it('loses no record when writers race (the lock serialises them)', async () => {
    const vault = freshVault();
    const names = Array.from({ length: 12 }, (_, i) => `s${i}`);
    await Promise.all(names.map((name) => new Vault(vault.paths).add({ name, value: VALUE })));
    assert.deepEqual((await vault.list()).map((r) => r.name).sort(), names.sort());
    assert.equal(existsSync(vault.paths.lock), false);
  });

  for (const [what, damage] of [
    ['not JSON', () => 'garbage{'],
    ['truncated', (t: string) => t.slice(0, t.length / 2)],
    ['a changed byte of the sealed data', (t: string) => flipData(t)],
    ['an unknown version', (t: string) => t.replace('"version": 1', '"version": 2')],
    ['an empty file', () => ''],
  ] as const) {
    it(`reports a vault file that is ${what} as VAULT_CORRUPT and leaves it as it is`, async () => {
      const vault = freshVault();
      await vault.add({ name: 'a', value: VALUE });
      const damaged = damage(readFileSync(vault.paths.vault, 'utf8'));
      writeFileSync(vault.paths.vault, damaged);
      assert.equal(await codeOf(vault.list()), 'VAULT_CORRUPT');
      assert.equal(await codeOf(vault.add({ name: 'b', value: VALUE })), 'VAULT_CORRUPT');
      assert.equal(await codeOf(vault.remove('a')), 'VAULT_CORRUPT');
      assert.equal(readFileSync(vault.paths.vault, 'utf8'), damaged, 'nothing overwritten');
    });
  }

  it('tells a wrong key (VAULT_WRONG_KEY) from a damaged file, and writes nothing', async () => {
    const vault = freshVault();
    await vault.add({ name: 'a', value: VALUE });
    const sealed = readFileSync(vault.paths.vault, 'utf8');
    writeFileSync(vault.paths.key, formatVaultKey(Buffer.alloc(32, 7)), { mode: 0o600 });
    assert.equal(await codeOf(vault.list()), 'VAULT_WRONG_KEY');
    assert.equal(await codeOf(vault.add({ name: 'b', value: VALUE })), 'VAULT_WRONG_KEY');
    assert.equal(readFileSync(vault.paths.vault, 'utf8'), sealed);
  });

  it('never makes a new key beside an existing vault (VAULT_KEY_MISSING)', async () => {
    const vault = freshVault();
    await vault.add({ name: 'a', value: VALUE });
    const key = readFileSync(vault.paths.key, 'utf8');
    writeFileSync(vault.paths.key, '', { mode: 0o600 });
    assert.equal(await codeOf(vault.list()), 'VAULT_KEY_INVALID');
    const { unlinkSync } = await import('node:fs');
    unlinkSync(vault.paths.key);
    assert.equal(await codeOf(vault.list()), 'VAULT_KEY_MISSING');
    assert.equal(await codeOf(vault.add({ name: 'b', value: VALUE })), 'VAULT_KEY_MISSING');
    assert.equal(await codeOf(vault.ensureKey()), 'VAULT_KEY_MISSING');
    assert.equal(existsSync(vault.paths.key), false);
    writeFileSync(vault.paths.key, key, { mode: 0o600 });
    assert.equal(
      (await vault.resolve({ name: 'a' })).value,
      VALUE,
      'restoring the key restores all',
    );
  });

  it('refuses a key file others can read (VAULT_KEY_PERMISSIONS)', async () => {
    const vault = freshVault();
    await vault.add({ name: 'a', value: VALUE });
    chmodSync(vault.paths.key, 0o644);
    assert.equal(await codeOf(vault.list()), 'VAULT_KEY_PERMISSIONS');
  });

  it('names the file in a refusal but never a value', async () => {
    const vault = freshVault();
    await vault.add({ name: 'a', value: VALUE });
    writeFileSync(vault.paths.vault, 'garbage');
    const error = await vault.list().catch((e: unknown) => e as SecretsError);
    assert.ok(error instanceof SecretsError);
    assert.ok(error.message.includes(join('mhl', 'vault.json')), error.message);
    assert.doesNotMatch(error.message, new RegExp(VALUE));
  });
});

/** The sealed data with one character changed (still base64url). */
function flipData(text: string): string {
  const envelope = JSON.parse(text) as { data: string };
  const first = envelope.data[0] === 'A' ? 'B' : 'A';
  return JSON.stringify({ ...envelope, data: first + envelope.data.slice(1) });
}

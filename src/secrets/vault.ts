/**
 * `Vault`: the records in one vault folder, read and changed through the sealed file. Every
 * change is a read-modify-write under the lock, sealed afresh and written atomically (temp,
 * fsync, rename; 0600), so a crash leaves the old vault or the new one. A file that cannot be
 * opened (damaged, another key) is never written over: every change fails until the user
 * restores or moves it. Reads happen on every call, so a secret added by another process (the
 * CLI, the setup page) is seen at once.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { writeFileAtomic } from '../store/index.js';
import { SECRETS_ERROR_CODES as CODES, SecretsError, systemCode } from './errors.js';
import { createVaultKey, readVaultKey } from './key.js';
import { withVaultLock } from './lock.js';
import type { VaultPaths } from './paths.js';
import {
  checkKind,
  checkLabel,
  checkName,
  checkValue,
  MAX_RECORDS,
  metadataOf,
  newRecordId,
  type SecretKind,
  type SecretMetadata,
  type SecretRecord,
  type VaultContent,
} from './records.js';
import { MAX_VAULT_BYTES, openVault, sealVault } from './vault-file.js';

/** What `add` takes. */
export interface NewSecret {
  readonly name: string;
  readonly kind?: string;
  readonly label?: string;
  readonly value: string;
}

/** What `edit` changes: the value, and the kind and label when given. */
export interface SecretChange {
  readonly name: string;
  readonly kind?: string;
  readonly label?: string;
  readonly value: string;
}

export class Vault {
  readonly paths: VaultPaths;
  readonly #now: () => Date;

  constructor(paths: VaultPaths, now: () => Date = () => new Date()) {
    this.paths = paths;
    this.#now = now;
  }

  /** Every record's metadata, by name; never a value. */
  async list(kind?: SecretKind): Promise<SecretMetadata[]> {
    const { records } = await this.#read();
    return records
      .filter((r) => kind === undefined || r.kind === kind)
      .map(metadataOf)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** One record's metadata, or undefined. */
  async find(name: string): Promise<SecretMetadata | undefined> {
    const found = (await this.#read()).records.find((r) => r.name === name);
    return found === undefined ? undefined : metadataOf(found);
  }

  /** The record with this name or id, value included: for resolving `vault()` only. */
  async resolve(by: { readonly name: string } | { readonly id: string }): Promise<SecretRecord> {
    const { records } = await this.#read();
    const found = records.find((r) => ('id' in by ? r.id === by.id : r.name === by.name));
    if (found === undefined) {
      const what = 'id' in by ? 'with that record id' : `named "${by.name}"`;
      throw new SecretsError(CODES.NOT_FOUND, `no secret ${what} in the vault`);
    }
    return found;
  }

  async add(secret: NewSecret): Promise<SecretMetadata> {
    const name = checkName(secret.name);
    const kind = checkKind(secret.kind ?? 'generic');
    const label = checkLabel(secret.label ?? '');
    const value = checkValue(secret.value);
    return this.#change(async (content) => {
      if (content.records.some((r) => r.name === name)) {
        throw new SecretsError(
          CODES.EXISTS,
          `a secret named "${name}" exists; change it with edit`,
        );
      }
      if (content.records.length >= MAX_RECORDS) {
        throw new SecretsError(CODES.FULL, `the vault holds ${MAX_RECORDS} secrets, its most`);
      }
      const at = this.#now().toISOString();
      const record = { id: newRecordId(), name, kind, label, created: at, updated: at, value };
      return { content: { records: [...content.records, record] }, result: metadataOf(record) };
    });
  }

  async edit(change: SecretChange): Promise<SecretMetadata> {
    const name = checkName(change.name);
    const kind = change.kind === undefined ? undefined : checkKind(change.kind);
    const label = change.label === undefined ? undefined : checkLabel(change.label);
    const value = checkValue(change.value);
    return this.#change(async (content) => {
      const old = content.records.find((r) => r.name === name);
      if (old === undefined) throw notFound(name);
      const record: SecretRecord = {
        ...old,
        kind: kind ?? old.kind,
        label: label ?? old.label,
        value,
        updated: this.#now().toISOString(),
      };
      const records = content.records.map((r) => (r === old ? record : r));
      return { content: { records }, result: metadataOf(record) };
    });
  }

  async remove(name: string): Promise<SecretMetadata> {
    checkName(name);
    return this.#change(async (content) => {
      const old = content.records.find((r) => r.name === name);
      if (old === undefined) throw notFound(name);
      const records = content.records.filter((r) => r !== old);
      return { content: { records }, result: metadataOf(old) };
    });
  }

  /** Makes the key if there is neither a key nor a vault yet; the key either way. */
  async ensureKey(): Promise<Buffer> {
    const existing = readVaultKey(this.paths.key);
    if (existing !== undefined) return existing;
    await mkdir(this.paths.dir, { recursive: true, mode: 0o700 });
    return withVaultLock(this.paths.lock, async () => this.#keyForWrite());
  }

  async #keyForWrite(): Promise<Buffer> {
    const key = readVaultKey(this.paths.key);
    if (key !== undefined) return key;
    if ((await this.#text()) !== undefined) throw keyMissing(this.paths.key);
    return createVaultKey(this.paths.key);
  }

  async #read(): Promise<VaultContent> {
    const text = await this.#text();
    if (text === undefined) return { records: [] };
    const key = readVaultKey(this.paths.key);
    if (key === undefined) throw keyMissing(this.paths.key);
    return openVault(text, key, this.paths.vault);
  }

  async #change<T>(
    apply: (content: VaultContent) => Promise<{ content: VaultContent; result: T }>,
  ): Promise<T> {
    await mkdir(this.paths.dir, { recursive: true, mode: 0o700 });
    return withVaultLock(this.paths.lock, async () => {
      const key = await this.#keyForWrite();
      const text = await this.#text();
      const content = text === undefined ? { records: [] } : openVault(text, key, this.paths.vault);
      const { content: next, result } = await apply(content);
      const sealed = Buffer.from(sealVault(next, key), 'utf8');
      if (sealed.length > MAX_VAULT_BYTES) {
        throw new SecretsError(CODES.FULL, `the vault would pass ${MAX_VAULT_BYTES} bytes`);
      }
      try {
        await writeFileAtomic(this.paths.vault, sealed);
      } catch (error) {
        throw new SecretsError(
          CODES.IO,
          `${this.paths.vault}: cannot write (${systemCode(error)})`,
          {
            cause: error,
          },
        );
      }
      return result;
    });
  }

  /** The vault file's text, or undefined when there is none yet. */
  async #text(): Promise<string | undefined> {
    try {
      const info = await stat(this.paths.vault);
      if (info.size > MAX_VAULT_BYTES) {
        throw new SecretsError(CODES.CORRUPT, `${this.paths.vault}: larger than a vault can be`);
      }
      return await readFile(this.paths.vault, 'utf8');
    } catch (error) {
      if (error instanceof SecretsError) throw error;
      if (systemCode(error) === 'ENOENT') return undefined;
      throw new SecretsError(CODES.IO, `${this.paths.vault}: cannot read (${systemCode(error)})`, {
        cause: error,
      });
    }
  }
}

function notFound(name: string): SecretsError {
  return new SecretsError(CODES.NOT_FOUND, `no secret named "${name}" in the vault`);
}

function keyMissing(file: string): SecretsError {
  return new SecretsError(
    CODES.KEY_MISSING,
    `${file} is missing but a vault exists beside it; restore the key (a new one could not open the vault)`,
  );
}

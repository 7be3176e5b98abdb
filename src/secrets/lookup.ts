/**
 * What `vault("slot")` resolves to on this host: the record whose id the call passed under
 * `credentials.<slot>` when it passed one, else the record named `slot`. The vault is read on
 * every lookup (a secret set through the setup page a moment ago is found), and failures become
 * language errors with the vault's own code, so a run names the `vault()` call that failed.
 * Messages name the slot, never a file path or a value.
 */
import { LangError } from '../lang/index.js';
import type { VaultLookup } from '../runtime/index.js';
import { SecretsError } from './errors.js';
import { checkKind, RECORD_ID } from './records.js';
import type { Vault } from './vault.js';

/** Record ids by slot, as a call passed them (`credentials`); checked by the caller. */
export type Credentials = Readonly<Record<string, string>>;

export function vaultLookup(vault: Vault, credentials: Credentials = {}): VaultLookup {
  return async (slot, kind) => {
    const id = Object.hasOwn(credentials, slot) ? credentials[slot] : undefined;
    try {
      if (kind !== undefined) checkKind(kind);
      const record =
        id !== undefined && RECORD_ID.test(id)
          ? await vault.resolve({ id })
          : await vault.resolve({ name: slot });
      if (kind !== undefined && record.kind !== kind) {
        throw new LangError(
          'SECRET_KIND_MISMATCH',
          `vault("${slot}"): the secret is of kind ${record.kind}, the call asks for ${kind}`,
          undefined,
          {
            hint: `pass a ${kind} record under credentials.${slot}, or change its kind with mhl secrets edit`,
          },
        );
      }
      return record.value;
    } catch (error) {
      if (!(error instanceof SecretsError)) throw error;
      throw new LangError(error.code, lookupMessage(error, slot, id), undefined, {
        hint:
          error.code === 'SECRET_NOT_FOUND'
            ? `add it with: mhl secrets add ${slot} (or pass a record id under credentials.${slot}; see secrets.list)`
            : 'run mhl secrets list to see what is wrong with the vault',
      });
    }
  };
}

function lookupMessage(error: SecretsError, slot: string, id: string | undefined): string {
  if (error.code === 'SECRET_NOT_FOUND') {
    return id === undefined
      ? `vault("${slot}"): no secret named "${slot}" in the vault`
      : `vault("${slot}"): no secret with the record id passed under credentials.${slot}`;
  }
  // A record's own rule (a bad kind) has no path in it; the vault's faults name its files.
  if (error.code.startsWith('SECRET_')) return `vault("${slot}"): ${error.message}`;
  return `vault("${slot}"): the vault cannot be read (${error.code})`;
}

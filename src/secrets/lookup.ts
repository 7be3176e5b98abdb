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
import { RECORD_ID } from './records.js';
import type { Vault } from './vault.js';

/** Record ids by slot, as a call passed them (`credentials`); checked by the caller. */
export type Credentials = Readonly<Record<string, string>>;

export function vaultLookup(vault: Vault, credentials: Credentials = {}): VaultLookup {
  return async (slot) => {
    const id = Object.hasOwn(credentials, slot) ? credentials[slot] : undefined;
    try {
      if (id !== undefined && RECORD_ID.test(id)) return (await vault.resolve({ id })).value;
      return (await vault.resolve({ name: slot })).value;
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
  return `vault("${slot}"): the vault cannot be read (${error.code})`;
}

/**
 * `mhl secrets add|edit|list|remove`: the local vault from the command line (docs/secrets.md).
 * A value comes from standard input only (`secret-input.ts`); with `--open`, `add` and `edit`
 * ask the running local server for a single-use setup link instead and print it, so the value
 * is typed into a browser form. Listings show metadata, never a value. Exit status: 0 done,
 * 1 refused (a stable code on stderr, and in `--json` output), 2 a usage error.
 */
import {
  checkKind,
  requestSetupUrl,
  SecretsError,
  SetupClientError,
  setupOrigin,
  Vault,
  vaultPaths,
} from '../secrets/index.js';
import type { Output } from './lint.js';
import { InputError, readSecretValue } from './secret-input.js';

export interface SecretsCliOptions {
  readonly kind?: string;
  readonly label?: string;
  readonly stdin?: boolean;
  readonly open?: boolean;
  readonly port?: string;
  readonly json?: boolean;
}

export type SecretsAction = 'add' | 'edit' | 'list' | 'remove';

const DEFAULT_PORT = 8787;

/** Runs one `mhl secrets` action; resolves to the exit status. */
export async function runSecrets(
  action: SecretsAction,
  name: string | undefined,
  options: SecretsCliOptions,
  io: Output,
): Promise<number> {
  const vault = new Vault(vaultPaths(process.env));
  const usage = usageProblem(action, name, options);
  if (usage !== undefined) {
    io.err(`mhl secrets ${action}: ${usage}`);
    return 2;
  }
  try {
    const shown = await perform(action, name as string, options, vault);
    io.out(options.json ? JSON.stringify(shown.json) : shown.text);
    return 0;
  } catch (error) {
    if (
      !(
        error instanceof SecretsError ||
        error instanceof SetupClientError ||
        error instanceof InputError
      )
    )
      throw error;
    io.err(`mhl secrets ${action}: ${error.code}: ${error.message}`);
    if (options.json)
      io.out(JSON.stringify({ error: { code: error.code, message: error.message } }));
    return 1;
  }
}

function usageProblem(action: SecretsAction, name: string | undefined, options: SecretsCliOptions) {
  if (action !== 'list' && (name === undefined || name === '')) return 'give the secret NAME';
  if (action === 'list' && name !== undefined) return 'list takes no NAME (use --kind to filter)';
  if (options.open && action !== 'add' && action !== 'edit') return '--open is for add and edit';
  if (options.open && options.stdin)
    return '--open and --stdin exclude each other: the value goes into the page';
  if (options.stdin && action !== 'add' && action !== 'edit') return '--stdin is for add and edit';
  if (options.port !== undefined && !options.open) return '--port goes with --open';
  if (options.port !== undefined && !/^\d{1,5}$/.test(options.port))
    return '--port takes a port number';
  if (options.kind !== undefined) {
    try {
      checkKind(options.kind);
    } catch (error) {
      return (error as Error).message;
    }
  }
  return undefined;
}

interface Shown {
  readonly text: string;
  readonly json: unknown;
}

async function perform(
  action: SecretsAction,
  name: string,
  options: SecretsCliOptions,
  vault: Vault,
): Promise<Shown> {
  const meta = (m: { id: string; name: string; kind: string }) => `${m.name} (${m.kind}) ${m.id}`;
  switch (action) {
    case 'list': {
      const secrets = await vault.list(
        options.kind === undefined ? undefined : checkKind(options.kind),
      );
      const lines = secrets.map((s) => `${s.name}\t${s.kind}\t${s.id}\t${s.updated}\t${s.label}`);
      return { text: lines.length === 0 ? 'no secrets' : lines.join('\n'), json: { secrets } };
    }
    case 'remove': {
      const removed = await vault.remove(name);
      return { text: `removed ${meta(removed)}`, json: { removed } };
    }
    default:
      return options.open
        ? openSetup(action, name, options, vault)
        : store(action, name, options, vault);
  }
}

async function store(
  action: 'add' | 'edit',
  name: string,
  options: SecretsCliOptions,
  vault: Vault,
): Promise<Shown> {
  // Checked before the value is asked for: no one types a secret into a refused command.
  if (action === 'add' && (await vault.find(name)) !== undefined) {
    throw new SecretsError('SECRET_EXISTS', `a secret named "${name}" exists; change it with edit`);
  }
  if (action === 'edit' && (await vault.find(name)) === undefined) {
    throw new SecretsError('SECRET_NOT_FOUND', `no secret named "${name}" in the vault`);
  }
  const value = await readSecretValue(name, options.stdin === true);
  const secret = {
    name,
    value,
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    ...(options.label === undefined ? {} : { label: options.label }),
  };
  const record = action === 'add' ? await vault.add(secret) : await vault.edit(secret);
  const verb = action === 'add' ? 'added' : 'changed';
  return { text: `${verb} ${record.name} (${record.kind}) ${record.id}`, json: { secret: record } };
}

async function openSetup(
  mode: 'add' | 'edit',
  name: string,
  options: SecretsCliOptions,
  vault: Vault,
): Promise<Shown> {
  const key = await vault.ensureKey();
  const origin = setupOrigin(options.port === undefined ? DEFAULT_PORT : Number(options.port));
  const { url, expiresAt } = await requestSetupUrl(origin, key, {
    mode,
    name,
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    ...(options.label === undefined ? {} : { label: options.label }),
  });
  return {
    text: `Open this link to set "${name}" (once, until ${expiresAt}):\n${url}`,
    json: { url, expires_at: expiresAt },
  };
}

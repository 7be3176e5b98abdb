/**
 * Built-in functions callable by bare name: `log`, `fail`, `pause`, `env`, `type_of`, `is_*`,
 * `complete` (ends the run normally) and `vault`, which asks the host for a secret by slot name
 * (refusing with `UNSUPPORTED` where the host has no vault) and registers it for redaction.
 * (`nameof` needs the declaration table and lives with the interpreter.)
 */
import { LangError } from '../../lang/index.js';
import { Redactor } from '../services/redact.js';
import { CompleteSignal, PauseSignal } from './signals.js';
import {
  type CallArgs,
  EnumValue,
  FunctionValue,
  formatValue,
  isObject,
  typeOf,
  type Value,
} from './values.js';

export interface BuiltinContext {
  readonly output: (line: string) => void;
  /** Where `env()` reads: the process environment minus removed secrets. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly redactor: Redactor;
  /** Where `vault()` reads, when the host has a vault (src/secrets); values are never cached. */
  readonly vault?: VaultLookup | undefined;
}

/**
 * A host's secret lookup for `vault("slot", kind: "…")`: the value, or a `LangError` with a
 * stable code (`SECRET_NOT_FOUND`, `SECRET_KIND_MISMATCH`, `VAULT_*`). The host decides what a slot means (a name, or the record
 * id a call passed under `credentials.<slot>`); the interpreter only redacts what it returns.
 */
export type VaultLookup = (slot: string, kind?: string) => Promise<string>;

const joined = (args: CallArgs) => args.ordered.map(formatValue).join(' ');

/** The built-in functions, bound to one run's output and secrets. */
export function builtinFunctions(ctx: BuiltinContext): ReadonlyMap<string, FunctionValue> {
  const fn = (name: string, body: (args: CallArgs) => Value) =>
    [name, new FunctionValue(name, async (args) => body(args))] as const;
  const test = (name: string, check: (v: Value) => boolean) =>
    fn(name, (a) => check(a.ordered[0] ?? null));
  return new Map([
    fn('log', (a) => {
      ctx.output(joined(a));
      return null;
    }),
    fn('fail', (a) => {
      throw new LangError('FAIL', joined(a) || 'failed');
    }),
    fn('pause', (a) => {
      throw new PauseSignal(a.ordered[0] ?? null);
    }),
    fn('env', (a) => {
      const name = a.ordered[0];
      if (typeof name !== 'string')
        throw new LangError('TYPE', `env: expected a variable name, got ${typeOf(name ?? null)}`);
      const value = ctx.env[name] ?? '';
      if (value && Redactor.isSensitiveName(name)) ctx.redactor.register(value);
      return value;
    }),
    [
      'vault',
      new FunctionValue('vault', async (a) => {
        const slot = a.positional[0];
        const kind = a.named.get('kind');
        const others = [...a.named.keys()].some((k) => k !== 'kind');
        if (typeof slot !== 'string' || a.positional.length !== 1 || others)
          throw new LangError('TYPE', 'vault: expected one secret name and an optional kind: "…"');
        if (kind !== undefined && typeof kind !== 'string')
          throw new LangError('TYPE', `vault: kind must be a string, got ${typeOf(kind)}`);
        if (ctx.vault === undefined)
          throw new LangError(
            'UNSUPPORTED',
            'vault(): this host has no secret vault; read secrets with env("NAME")',
          );
        const value = await ctx.vault(slot, kind);
        // Before the value goes anywhere: from here on every text the run writes is redacted.
        ctx.redactor.register(value);
        return value;
      }),
    ] as const,
    fn('complete', () => {
      throw new CompleteSignal();
    }),
    fn('type_of', (a) => typeOf(a.ordered[0] ?? null)),
    test('is_string', (v) => typeof v === 'string'),
    test('is_number', (v) => typeof v === 'number'),
    test('is_bool', (v) => typeof v === 'boolean'),
    test('is_array', (v) => Array.isArray(v)),
    test('is_object', (v) => isObject(v)),
    test('is_null', (v) => v === null),
    test('is_enum', (v) => v instanceof EnumValue),
  ]);
}

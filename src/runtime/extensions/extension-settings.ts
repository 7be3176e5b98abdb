/**
 * Binds an extension declaration's properties to values, once per run: every `env("NAME")` (and
 * `vault("NAME")`) a property reads must resolve to a non-empty value before anything is
 * evaluated (fail-closed: an unset token never becomes an unauthenticated call), and every header
 * value read from the environment is registered with the redactor, whatever its name, so no
 * error, log or checkpoint can show it. Knows nothing of MCP or A2A.
 */
import type { DeclOf, Expr } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import { isObject, type Value } from '../interpreter/values.js';
import type { Redactor } from '../services/redact.js';

/** The stable code of every extension failure (configuration, transport, remote). */
export const EXTENSION_ERROR = 'EXTENSION';

/** The most of a remote message an error keeps: a server may answer with a whole HTML page. */
const MAX_MESSAGE_CHARS = 2000;

/**
 * A catchable MHL error from an extension call, `"<what>: <message>"`, with no span; a message
 * longer than 2000 characters is cut, saying how much was left out.
 */
export function extensionError(what: string, message: string, cause?: unknown): LangError {
  const text =
    message.length > MAX_MESSAGE_CHARS
      ? `${message.slice(0, MAX_MESSAGE_CHARS)}… (${message.length - MAX_MESSAGE_CHARS} more characters)`
      : message;
  return new LangError(EXTENSION_ERROR, `${what}: ${text}`, undefined, { cause });
}

/**
 * The message of a remote or network failure. `fetch` says only "fetch failed": the reason (a
 * refused connection, an unknown host) is an errno code down its `cause` chain, added here.
 */
export function failureMessage(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  if (!/fetch failed/.test(e.message)) return e.message;
  let reason: string | undefined;
  for (let c: unknown = e.cause, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    const code = (c as NodeJS.ErrnoException).code;
    reason = typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : c.message;
    if (reason === code) break;
  }
  return reason ? `${e.message}: cannot reach the server (${reason})` : e.message;
}

/** What binding needs from the run. */
export interface SettingsHost {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly redactor: Redactor;
  /** Evaluates a property value in the declaring module's scope. */
  readonly evaluate: (e: Expr, signal: AbortSignal) => Promise<Value>;
}

/** An extension's evaluated properties, by name. */
export type Settings = ReadonlyMap<string, Value>;

/**
 * Evaluates every property of `decl`. Raises `EXTENSION` naming the property and variable when
 * an `env()` it reads is unset or empty. Honours `signal`.
 */
export async function bindSettings(
  decl: DeclOf<'Extension'>,
  host: SettingsHost,
  signal: AbortSignal,
): Promise<Settings> {
  const what = `extension ${decl.extKind} '${decl.name}'`;
  const out = new Map<string, Value>();
  for (const p of decl.props) {
    for (const name of envReads(p.value))
      if (!host.env[name])
        throw new LangError(
          EXTENSION_ERROR,
          `${what}: ${p.name} reads env("${name}"), which is not set`,
          p.value.span,
          { hint: `set ${name} in the environment mhl runs in (extension settings fail closed)` },
        );
    const value = await host.evaluate(p.value, signal);
    if (p.name === 'headers' && isObject(value) && p.value.kind === 'Object')
      for (const f of p.value.fields) {
        const v = value[f.key];
        if (typeof v === 'string' && envReads(f.value).length > 0) registerSecret(host.redactor, v);
      }
    out.set(p.name, value);
  }
  return out;
}

/** A header value and, for `Bearer x`-style values, the credential alone. */
function registerSecret(redactor: Redactor, value: string): void {
  redactor.register(value);
  const credential = value.replace(/^(Bearer|Basic|Token)\s+/i, '');
  if (credential !== value) redactor.register(credential);
}

/** The variable names of every `env("NAME")` call inside `e`. */
function envReads(e: Expr): string[] {
  const names: string[] = [];
  const visit = (x: Expr): void => {
    switch (x.kind) {
      case 'String':
        for (const seg of x.segments) if (typeof seg !== 'string') visit(seg);
        return;
      case 'Array':
        for (const item of x.items) visit(item);
        return;
      case 'Object':
        for (const f of x.fields) visit(f.value);
        return;
      case 'Call': {
        const arg = x.args[0]?.value;
        if (x.callee.kind === 'Ident' && x.callee.name === 'env' && arg?.kind === 'String') {
          const [text] = arg.segments;
          if (typeof text === 'string' && arg.segments.length === 1) names.push(text);
        }
        for (const a of x.args) visit(a.value);
        return;
      }
      default:
        return;
    }
  };
  visit(e);
  return names;
}

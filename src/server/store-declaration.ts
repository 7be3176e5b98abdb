/**
 * `extension store <Name> { dsn: env("DATABASE_URL") table: "mhl_store" }` in a served folder
 * (spec/mhl-serve.md §5.2): the store a server keeps runs in, declared beside its workflows.
 * At most one per folder (two is a start-up error naming both); each property is a literal or
 * one `env()` call, resolved here on the host, and its value never printed (a DSN holds a
 * password). Only the folder's own `.mh` files are read; a pack's declarations are not looked
 * for. The interpreter knows nothing of this: the declaration configures the server.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { ServedSources } from '../catalog/index.js';
import { listMhFiles } from '../catalog/sources.js';
import { type Expr, type Property, parse } from '../lang/index.js';
import type { StoreSource } from './state-store.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What `findDeclaredStore` found: nothing, the store, or why the declaration is unusable. */
export type DeclaredStore =
  | { readonly kind: 'none' }
  | { readonly kind: 'store'; readonly source: StoreSource }
  | { readonly kind: 'problem'; readonly problem: string };

/**
 * Reads every `.mh` file under `root` for an `extension store` declaration; `sources`, when the
 * catalog load has just read them all, instead of reading them again.
 */
export function findDeclaredStore(root: string, env: Env, sources?: ServedSources): DeclaredStore {
  const found: { name: string; where: string; props: readonly Property[] }[] = [];
  const files = sources?.files ?? listMhFiles(root);
  for (const [i, file] of files.entries()) {
    let text: string;
    try {
      text = sources?.texts[i] ?? readFileSync(file, 'utf8');
    } catch {
      // The catalog load already reported an unreadable file.
      continue;
    }
    // Cheap test first: most files declare no store.
    if (!/\bextension\s+store\b/.test(text)) continue;
    for (const decl of parse(text, file).program.decls) {
      if (decl.kind !== 'Extension' || decl.extKind !== 'store') continue;
      const where = `${relative(root, file)}:${decl.span.line}:${decl.span.col}`;
      found.push({ name: decl.name, where, props: decl.props });
    }
  }
  if (found.length === 0) return { kind: 'none' };
  if (found.length > 1) {
    return {
      kind: 'problem',
      problem: `a served folder may declare one extension store; found ${found.map((f) => `${f.name} (${f.where})`).join(' and ')}`,
    };
  }
  const [decl] = found as [(typeof found)[number]];
  const origin = `extension store ${decl.name} (${decl.where})`;
  const values = new Map<string, string>();
  for (const prop of decl.props) {
    const value = propertyValue(prop.value, env);
    if (typeof value === 'object')
      return { kind: 'problem', problem: `${origin}: ${prop.name} ${value.problem}` };
    values.set(prop.name, value);
  }
  const dsn = values.get('dsn');
  if (dsn === undefined) return { kind: 'problem', problem: `${origin}: it needs a dsn property` };
  if (!/^postgres(ql)?:\/\//i.test(dsn)) {
    return { kind: 'problem', problem: `${origin}: dsn must be a postgres://… URL` };
  }
  const table = values.get('table');
  return { kind: 'store', source: { url: dsn, origin, ...(table !== undefined ? { table } : {}) } };
}

/** A literal's text, one `env("NAME")`'s value, or why neither. */
function propertyValue(expr: Expr, env: Env): string | { problem: string } {
  switch (expr.kind) {
    case 'String':
      return expr.segments.length <= 1 && typeof (expr.segments[0] ?? '') === 'string'
        ? ((expr.segments[0] as string | undefined) ?? '')
        : { problem: 'must be a literal or one env() call, not an interpolated string' };
    case 'Number':
    case 'Bool':
      return String(expr.value);
    case 'Call': {
      const [arg] = expr.args;
      const name =
        expr.callee.kind === 'Ident' &&
        expr.callee.name === 'env' &&
        expr.args.length === 1 &&
        arg?.value.kind === 'String' &&
        arg.value.segments.length === 1 &&
        typeof arg.value.segments[0] === 'string'
          ? arg.value.segments[0]
          : undefined;
      if (name === undefined) return { problem: 'must be a literal or one env("NAME") call' };
      const value = env[name];
      if (value === undefined || value === '') {
        return { problem: `reads env("${name}"), which is not set in the server's environment` };
      }
      return value;
    }
    default:
      return { problem: 'must be a literal or one env() call' };
  }
}

/**
 * Prompt calls: `Review(file: f, code: c)` renders a prompt's template with named arguments.
 * Inline bodies are string expressions evaluated with the parameters in scope; file bodies
 * substitute `${name}` (and `${name.field}`) placeholders, and `\${` keeps a literal `${`.
 * A missing or unknown argument is an error, never a silent blank.
 */
import type { DeclOf, Expr } from '../../lang/index.js';
import { LangError, type Span } from '../../lang/index.js';
import type { Environment } from './environment.js';
import { formatValue, isObject, type Value } from './values.js';

export interface PromptRenderContext {
  readonly evaluate: (e: Expr, scope: Environment) => Promise<Value>;
  /** A fresh scope in the prompt's module. */
  readonly scope: () => Environment;
  /** Where defaults are evaluated. */
  readonly callerScope: Environment;
  readonly span: Span;
}

export async function renderPrompt(
  decl: DeclOf<'Prompt'>,
  fileBody: string | undefined,
  args: ReadonlyMap<string, Value>,
  ctx: PromptRenderContext,
): Promise<string> {
  const declared = new Set(decl.params.map((p) => p.name));
  for (const name of args.keys()) {
    if (!declared.has(name))
      throw new LangError('CALL', `prompt '${decl.name}' has no parameter '${name}'`, ctx.span);
  }
  const scope = ctx.scope();
  for (const p of decl.params) {
    if (args.has(p.name)) scope.declare(p.name, args.get(p.name) as Value);
    else if (p.default) scope.declare(p.name, await ctx.evaluate(p.default, ctx.callerScope));
    else throw new LangError('CALL', `prompt '${decl.name}' needs '${p.name}'`, ctx.span);
  }
  if (decl.body) return formatValue(await ctx.evaluate(decl.body, scope));
  if (fileBody === undefined)
    throw new LangError('ASSET', `prompt '${decl.name}' file could not be loaded`, ctx.span);
  return substitute(fileBody, (path) => {
    const [root, ...fields] = path.split('.');
    let v = root !== undefined ? scope.lookup(root) : undefined;
    if (v === undefined || !declared.has(root as string)) {
      throw new LangError(
        'CALL',
        `prompt '${decl.name}' uses \${${path}}, which is not a parameter`,
        ctx.span,
      );
    }
    for (const f of fields) v = isObject(v) && f in v ? (v[f] as Value) : null;
    return formatValue(v ?? null);
  });
}

function substitute(body: string, value: (path: string) => string): string {
  return body.replace(/(\\?)\$\{([^}]*)\}/g, (match, backslash: string, path: string) =>
    backslash ? match.slice(1) : value(path.trim()),
  );
}

/**
 * The files that declarations point at: `prompt … from`, `skill … from`, `schema … from`.
 *
 * Each is read once, relative to the declaring `.mh` file, and checked here, at lint time, so a
 * broken asset is a diagnostic with a position and never a surprise in the middle of a run.
 */
import { basename, dirname, resolve } from 'node:path';
import type { DeclOf, NamedDecl, Program } from './ast.js';
import { DIAGNOSTIC_CODES, type Diagnostic, diagnostic, type Span } from './diagnostics.js';
import { type FrontmatterValue, isFrontmatterError, parseFrontmatter } from './frontmatter.js';
import type { Limits } from './limits.js';
import { checkSchema } from './schema-check.js';
import type { SourceHost } from './source-host.js';

export interface PromptAsset {
  readonly kind: 'prompt';
  readonly path: string;
  readonly body: string;
  readonly frontmatter: Readonly<Record<string, FrontmatterValue>>;
}
export interface SkillAsset {
  readonly kind: 'skill';
  readonly path: string;
  readonly content: string;
  readonly frontmatter: Readonly<Record<string, FrontmatterValue>>;
}
export interface SchemaAsset {
  readonly kind: 'schema';
  readonly path: string;
  /** The raw JSON text, as agents that take inline schemas want it. */
  readonly content: string;
}
export type Asset = PromptAsset | SkillAsset | SchemaAsset;

export interface AssetResult {
  readonly assets: Map<NamedDecl, Asset>;
  readonly diagnostics: Diagnostic[];
  /** Asset texts by absolute path, for source excerpts in messages. */
  readonly texts: Map<string, string>;
}

type AssetDecl = DeclOf<'Prompt'> | DeclOf<'Skill'> | DeclOf<'Schema'>;

/** Reads and checks every asset a program declares. */
export function loadAssets(program: Program, host: SourceHost, limits: Limits): AssetResult {
  const result: AssetResult = { assets: new Map(), diagnostics: [], texts: new Map() };
  for (const decl of program.decls) {
    if (
      (decl.kind === 'Prompt' || decl.kind === 'Skill' || decl.kind === 'Schema') &&
      decl.from !== undefined
    ) {
      loadAsset(
        decl as AssetDecl & { from: string; fromSpan: Span },
        program.file,
        host,
        limits,
        result,
      );
    }
  }
  return result;
}

function loadAsset(
  decl: AssetDecl & { from: string; fromSpan: Span },
  file: string,
  host: SourceHost,
  limits: Limits,
  out: AssetResult,
): void {
  const path = resolve(dirname(file), decl.from);
  const label = `${decl.kind.toLowerCase()} '${decl.name}' from "${decl.from}"`;
  const fail = (message: string, span: Span = decl.fromSpan) =>
    out.diagnostics.push(diagnostic(DIAGNOSTIC_CODES.ASSET, `${label}: ${message}`, span));
  let text: string | undefined;
  try {
    text = host.readText(path);
  } catch (e) {
    fail(`cannot read ${path}: ${(e as Error).message}`);
    return;
  }
  if (text === undefined)
    return void fail(`no such file (paths are relative to ${basename(file)})`);
  if (Buffer.byteLength(text) > limits.maxAssetBytes) {
    return void fail(`file is larger than ${limits.maxAssetBytes} bytes`);
  }
  out.texts.set(path, text);
  const at = (line: number, col = 1): Span => spanAt(path, text, line, col);
  if (decl.kind === 'Schema') {
    const problem = checkSchema(text);
    if (problem)
      return void fail(
        problem.message,
        problem.line ? at(problem.line, problem.col) : decl.fromSpan,
      );
    out.assets.set(decl, { kind: 'schema', path, content: text });
    return;
  }
  const parsed = parseFrontmatter(text);
  if (isFrontmatterError(parsed)) return void fail(parsed.message, at(parsed.line));
  if (decl.kind === 'Skill') {
    for (const key of ['name', 'description']) {
      const value = parsed.frontmatter[key];
      if (typeof value !== 'string' || value === '') {
        fail(`the skill file's frontmatter needs a non-empty '${key}'`, at(1));
      }
    }
    out.assets.set(decl, {
      kind: 'skill',
      path,
      content: parsed.body,
      frontmatter: parsed.frontmatter,
    });
    return;
  }
  const params = new Set(decl.params.map((p) => p.name));
  for (const ref of placeholders(parsed.body)) {
    const root = ref.name.split('.')[0] as string;
    if (!params.has(root)) {
      const where = at(parsed.bodyLine + ref.line - 1, ref.col);
      fail(
        `\${${ref.name}} is not a parameter of prompt '${decl.name}' (write \\\${ to keep it literal)`,
        where,
      );
    }
  }
  out.assets.set(decl, {
    kind: 'prompt',
    path,
    body: parsed.body,
    frontmatter: parsed.frontmatter,
  });
}

/** `${name}` and `${name.field}` references in a prompt file body; `\${` is a literal. */
export function placeholders(body: string): { name: string; line: number; col: number }[] {
  const found: { name: string; line: number; col: number }[] = [];
  const re = /(\\?)\$\{([^}]*)\}/g;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    if (m[1]) continue;
    const before = body.slice(0, m.index);
    const line = (before.match(/\n/g)?.length ?? 0) + 1;
    const col = m.index - before.lastIndexOf('\n');
    found.push({ name: (m[2] as string).trim(), line, col });
  }
  return found;
}

function spanAt(file: string, text: string, line: number, col: number): Span {
  let start = 0;
  for (let l = 1; l < line; l++) start = text.indexOf('\n', start) + 1;
  start += col - 1;
  return { file, start, end: start + 1, line, col };
}

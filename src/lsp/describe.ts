/**
 * How a declaration or a local reads in a hover or a completion item: its kind, a one-block
 * signature made from its source text, and its description (a `description:` property, the
 * asset's frontmatter, or the `//` comment right above it).
 */
import type { LocalSymbol, Module, NamedDecl, Span } from '../lang/index.js';

const KIND_WORDS: Readonly<Record<NamedDecl['kind'], string>> = {
  Agent: 'agent',
  Prompt: 'prompt',
  Skill: 'skill',
  Schema: 'schema',
  Memory: 'memory',
  Tool: 'tool',
  Extension: 'extension',
  Extensible: 'extensible',
  Router: 'router',
  TypeAlias: 'type',
  Enum: 'enum',
  Pipeline: 'pipeline',
  Test: 'test',
};

export function kindWord(decl: NamedDecl): string {
  return decl.kind === 'Pipeline' ? decl.flavor : KIND_WORDS[decl.kind];
}

function src(text: string, span: Span | undefined): string {
  return span ? text.slice(span.start, span.end).replace(/\s+/g, ' ').trim() : '';
}

function params(text: string, list: readonly { span: Span }[]): string {
  return `(${list.map((p) => src(text, p.span)).join(', ')})`;
}

/** The declaration as code: its header and, for tools, enums and pipelines, its members. */
export function signature(decl: NamedDecl, module: Module): string {
  const text = module.text;
  const head = `${decl.exported ? 'export ' : ''}${kindWord(decl)} ${decl.name}`;
  switch (decl.kind) {
    case 'Prompt':
      return `${head}${params(text, decl.params)}${decl.from !== undefined ? ` from "${decl.from}"` : ''}`;
    case 'Skill':
    case 'Schema':
      return decl.from !== undefined ? `${head} from "${decl.from}"` : head;
    case 'Tool': {
      const methods = decl.methods.map((m) => {
        const ret = m.returnType ? `: ${src(text, m.returnType.span)}` : '';
        return `  ${m.name}${params(text, m.params)}${ret}`;
      });
      return [`${head} {`, ...methods, '}'].join('\n');
    }
    case 'Extension':
      return `${decl.exported ? 'export ' : ''}extension ${decl.extKind} ${decl.name}`;
    case 'TypeAlias':
      return `${head} = ${src(text, decl.type.span)}`;
    case 'Enum':
      return `${head} { ${decl.variants.map((v) => v.name).join(', ')} }`;
    case 'Agent':
    case 'Memory':
    case 'Router': {
      const shown = decl.props.filter((p) =>
        ['engine', 'model', 'type', 'path', 'agents'].includes(p.name),
      );
      if (shown.length === 0) return head;
      return [`${head} {`, ...shown.map((p) => `  ${src(text, p.span)}`), '}'].join('\n');
    }
    case 'Pipeline': {
      const prefix = `${decl.exported ? 'export ' : ''}${decl.partial ? 'partial ' : ''}${decl.loop ? 'loop ' : ''}`;
      const sig = decl.signature
        ? `${src(text, decl.signature.span)}${decl.signature.returns ? `: ${src(text, decl.signature.returns.span)}` : ''}`
        : '';
      const inputs = decl.inputs
        .filter((i) => !decl.signature?.params.includes(i))
        .map((i) => `  ${src(text, i.span)}`);
      const line = `${prefix}${decl.flavor} ${decl.name}${sig}`;
      return inputs.length ? [`${line} {`, ...inputs, '}'].join('\n') : line;
    }
    case 'Test':
      return [`${head} {`, ...decl.cases.map((c) => `  describe ${c.name}`), '}'].join('\n');
    case 'Extensible':
      return `${decl.exported ? 'export ' : ''}extensible ${decl.extKind}`;
  }
}

/** A description the author wrote for the declaration, if any. */
export function description(decl: NamedDecl, module: Module): string | undefined {
  if ('props' in decl) {
    const prop = decl.props.find((p) => p.name === 'description');
    const value = prop?.value;
    if (value?.kind === 'String' && value.segments.every((s) => typeof s === 'string'))
      return value.segments.join('');
  }
  const asset = module.assets.get(decl);
  if (asset && asset.kind !== 'schema') {
    const d = asset.frontmatter['description'];
    if (typeof d === 'string' && d !== '') return d;
  }
  return leadingComment(module.text, decl.span.start);
}

/** The `//` lines directly above an offset, without their slashes. */
export function leadingComment(text: string, offset: number): string | undefined {
  const lines = text.slice(0, offset).split('\n');
  lines.pop();
  const comment: string[] = [];
  for (let line = lines.pop(); line !== undefined; line = lines.pop()) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('//')) break;
    comment.unshift(trimmed.replace(/^\/\/+\s?/, ''));
  }
  return comment.length ? comment.join('\n') : undefined;
}

const LOCAL_WORDS: Readonly<Record<LocalSymbol['what'], string>> = {
  var: 'var',
  const: 'const',
  mem: 'mem',
  input: 'input',
  param: 'parameter',
  loop: 'loop variable',
  catch: 'caught error',
  spawn: 'spawn handle',
};

export function localKind(local: LocalSymbol): string {
  return LOCAL_WORDS[local.what];
}

/** `input repo: string = "."`, `var log`, `file: string`. */
export function localSignature(local: LocalSymbol, text: string): string {
  if (local.what === 'input' || local.what === 'param') return src(text, local.declSpan);
  const type = local.type ? `: ${src(text, local.type.span)}` : '';
  const word = ['var', 'const', 'mem'].includes(local.what) ? `${local.what} ` : '';
  return `${word}${local.name}${type}`;
}

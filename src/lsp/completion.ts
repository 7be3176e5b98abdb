/**
 * Completion: after `name.` the members of what `name` is (a native's methods, a tool's methods,
 * an enum's variants, an agent's `run`, …); elsewhere the names in scope at the cursor, the
 * natives, the built-in functions (and assertions inside a test) and the keywords.
 */

import { type CompletionItem, CompletionItemKind } from 'vscode-languageserver/node';
import {
  type Binding,
  BUILTIN_DESCRIPTIONS,
  BUILTIN_FUNCTIONS,
  KEYWORDS,
  localsAt,
  NATIVE_METHODS,
  NATIVE_NAMESPACES,
  type NamedDecl,
  TEST_ASSERTIONS,
} from '../lang/index.js';
import { kindWord, localKind, signature } from './describe.js';
import type { Analysis } from './workspace.js';

const MEMBER_BEFORE_CURSOR = /([A-Za-z_][A-Za-z0-9_]*)\s*\??\.\s*[A-Za-z0-9_]*$/;

const CONTEXT_FIELDS = ['session_id', 'started_at', 'resumed', 'principal', 'vars'];

const DECL_KINDS: Readonly<Record<NamedDecl['kind'], CompletionItemKind>> = {
  Agent: CompletionItemKind.Class,
  Prompt: CompletionItemKind.Function,
  Skill: CompletionItemKind.Module,
  Schema: CompletionItemKind.Struct,
  Memory: CompletionItemKind.Variable,
  Tool: CompletionItemKind.Class,
  Extension: CompletionItemKind.Interface,
  Extensible: CompletionItemKind.Interface,
  Router: CompletionItemKind.Class,
  TypeAlias: CompletionItemKind.TypeParameter,
  Enum: CompletionItemKind.Enum,
  Pipeline: CompletionItemKind.Module,
  Test: CompletionItemKind.Module,
};

/** `linePrefix` is the current line up to the cursor; `offset` the cursor in the document. */
export function complete(analysis: Analysis, linePrefix: string, offset: number): CompletionItem[] {
  const names: ReadonlyMap<string, Binding> =
    (analysis.module && analysis.result.scopes.get(analysis.module)) || new Map<string, Binding>();
  const member = MEMBER_BEFORE_CURSOR.exec(linePrefix);
  const index = analysis.module ? analysis.indexOf(analysis.module) : undefined;
  const scope = index ? localsAt(index, offset) : { locals: [], test: false };
  if (member) {
    const owner = member[1] as string;
    if (scope.locals.some((l) => l.name === owner)) return [];
    return membersOf(owner, names.get(owner), analysis, offset);
  }
  const items = new Map<string, CompletionItem>();
  const add = (item: CompletionItem) => {
    if (!items.has(item.label)) items.set(item.label, item);
  };
  for (const l of scope.locals)
    add({ label: l.name, kind: CompletionItemKind.Variable, detail: localKind(l) });
  for (const [name, binding] of names) {
    if (binding.kind === 'decl') {
      add({
        label: name,
        kind: DECL_KINDS[binding.decl.kind],
        detail: signature(binding.decl, binding.module).split('\n')[0] as string,
      });
    } else add({ label: name, kind: CompletionItemKind.Module, detail: 'namespace' });
  }
  if (scope.test)
    for (const a of TEST_ASSERTIONS)
      add({ label: a, kind: CompletionItemKind.Function, detail: 'assertion' });
  for (const ns of NATIVE_NAMESPACES)
    add({ label: ns, kind: CompletionItemKind.Module, detail: 'native namespace' });
  for (const f of BUILTIN_FUNCTIONS)
    add({
      label: f,
      kind: CompletionItemKind.Function,
      detail: BUILTIN_DESCRIPTIONS[f] ?? 'built-in function',
    });
  add({ label: 'context', kind: CompletionItemKind.Variable, detail: 'the run context' });
  for (const k of KEYWORDS) add({ label: k, kind: CompletionItemKind.Keyword });
  return [...items.values()];
}

function method(label: string, detail: string, documentation?: string): CompletionItem {
  return {
    label,
    kind: CompletionItemKind.Method,
    detail,
    ...(documentation ? { documentation } : {}),
  };
}

function membersOf(
  owner: string,
  binding: Binding | undefined,
  analysis: Analysis,
  offset: number,
): CompletionItem[] {
  if (!binding) {
    if (NATIVE_NAMESPACES.has(owner))
      return (NATIVE_METHODS[owner] ?? []).map((m) =>
        method(m.name, `${owner}.${m.signature}`, m.description),
      );
    if (owner === 'context')
      return CONTEXT_FIELDS.map((f) => ({ label: f, kind: CompletionItemKind.Field }));
    if (owner === 'self') {
      const module = analysis.module;
      const tool = module?.program.decls.find(
        (d) => d.kind === 'Tool' && d.span.start <= offset && offset <= d.span.end,
      );
      if (tool?.kind === 'Tool')
        return tool.methods.map((m) => method(m.name, `${tool.name}.${m.name}`));
    }
    return [];
  }
  if (binding.kind === 'namespace') {
    return binding.module.program.decls.flatMap((d) =>
      d.kind === 'Import' ? [] : [{ label: d.name, kind: DECL_KINDS[d.kind], detail: kindWord(d) }],
    );
  }
  if (binding.kind !== 'decl') return [];
  const decl = binding.decl;
  switch (decl.kind) {
    case 'Tool':
      return decl.methods.map((m) =>
        method(m.name, `${decl.name}.${m.name}(${m.params.map((p) => p.name).join(', ')})`),
      );
    case 'Enum':
      return decl.variants.map((v) => ({
        label: v.name,
        kind: CompletionItemKind.EnumMember,
        detail: `${decl.name}.${v.name}`,
      }));
    case 'Agent':
      return [method('run', `${decl.name}.run(prompt:, schema:?, skills:?) → string`)];
    case 'Router':
      return [method('delegate', `${decl.name}.delegate(prompt:, schema:?) → string`)];
    case 'Schema':
      return ['content', 'path'].map((f) => ({ label: f, kind: CompletionItemKind.Field }));
    case 'Prompt':
    case 'Skill':
      return [{ label: 'frontmatter', kind: CompletionItemKind.Field }];
    case 'Memory':
      return memoryMethods(decl).map((m) => method(m, `${decl.name}.${m}`));
    case 'Extension':
      return extensionMethods(decl.extKind).map((m) => method(m, `${decl.name}.${m}`));
    default:
      return [];
  }
}

function memoryMethods(decl: Extract<NamedDecl, { kind: 'Memory' }>): string[] {
  const type = decl.props.find((p) => p.name === 'type')?.value;
  const name = type?.kind === 'String' ? type.segments.join('') : '';
  if (name === 'append_log' || name === 'jsonl') return ['append'];
  if (name === 'json') return ['get', 'set', 'remove'];
  return ['get', 'set'];
}

function extensionMethods(kind: string): string[] {
  if (kind === 'mcp') return ['call', 'list_tools', 'discover'];
  if (kind === 'a2a') return ['send', 'agent_card', 'get_task', 'cancel'];
  return [];
}

/** Document symbols: the outline of a file — declarations and their members, steps and inputs. */

import { type DocumentSymbol, SymbolKind } from 'vscode-languageserver/node';
import { findName, type Module, type NamedDecl, type Span } from '../lang/index.js';
import { kindWord } from './describe.js';
import type { DocumentStore } from './documents.js';
import { spanRange } from './positions.js';

const KINDS: Readonly<Record<NamedDecl['kind'], SymbolKind>> = {
  Agent: SymbolKind.Object,
  Prompt: SymbolKind.Function,
  Skill: SymbolKind.Module,
  Schema: SymbolKind.Struct,
  Memory: SymbolKind.Variable,
  Tool: SymbolKind.Class,
  Extension: SymbolKind.Interface,
  Extensible: SymbolKind.Interface,
  Router: SymbolKind.Object,
  TypeAlias: SymbolKind.TypeParameter,
  Enum: SymbolKind.Enum,
  Pipeline: SymbolKind.Module,
  Test: SymbolKind.Namespace,
};

export function documentSymbols(store: DocumentStore, module: Module): DocumentSymbol[] {
  const text = module.text;
  const range = (span: Span) => spanRange(store, text, span);
  const symbol = (
    name: string,
    kind: SymbolKind,
    span: Span,
    nameSpan: Span,
    detail?: string,
    children?: DocumentSymbol[],
  ): DocumentSymbol => {
    const full = range(span);
    let selection = range(nameSpan);
    // A selection range must lie inside the full range.
    if (nameSpan.start < span.start || nameSpan.end > span.end) selection = full;
    return {
      name,
      kind,
      range: full,
      selectionRange: selection,
      ...(detail ? { detail } : {}),
      ...(children?.length ? { children } : {}),
    };
  };
  const nameIn = (span: Span, name: string, skip = 0): Span =>
    findName(text, span, name, { from: span.start + skip }) ?? span;
  const out: DocumentSymbol[] = [];
  for (const decl of module.program.decls) {
    if (decl.kind === 'Import') continue;
    const children: DocumentSymbol[] = [];
    switch (decl.kind) {
      case 'Tool':
        for (const m of decl.methods)
          children.push(symbol(m.name, SymbolKind.Method, m.span, nameIn(m.span, m.name)));
        break;
      case 'Enum':
        for (const v of decl.variants)
          children.push(symbol(v.name, SymbolKind.EnumMember, v.span, v.span));
        break;
      case 'Test':
        for (const c of decl.cases)
          children.push(symbol(c.name, SymbolKind.Method, c.span, nameIn(c.span, c.name, 8)));
        break;
      case 'Pipeline':
        for (const i of decl.inputs)
          children.push(
            symbol(i.name, SymbolKind.Field, i.span, nameIn(i.span, i.name, 5), 'input'),
          );
        for (const v of decl.vars) {
          const kind = v.storage === 'const' ? SymbolKind.Constant : SymbolKind.Variable;
          children.push(
            symbol(v.name, kind, v.span, nameIn(v.span, v.name, v.storage.length), v.storage),
          );
        }
        for (const s of decl.steps) {
          const inner =
            s.kind === 'Parallel'
              ? s.steps.map((x) => symbol(x.name, SymbolKind.Event, x.span, x.nameSpan, 'step'))
              : [];
          children.push(
            symbol(
              s.name,
              s.kind === 'Parallel' ? SymbolKind.Namespace : SymbolKind.Event,
              s.span,
              s.nameSpan,
              s.kind === 'Parallel' ? 'parallel' : 'step',
              inner,
            ),
          );
        }
        break;
    }
    out.push(
      symbol(decl.name, KINDS[decl.kind], decl.span, decl.nameSpan, kindWord(decl), children),
    );
  }
  return out;
}

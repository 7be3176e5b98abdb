/**
 * Rename of a declaration local to its file: a variable, parameter, input or loop variable, a
 * step, or a top-level declaration that is not exported (with its tool methods and enum
 * variants). Exported and imported names are refused with a message saying why: files that
 * import them may be closed, and editing what this server cannot see would break them silently.
 * Edits cover every loaded file that uses the name (MHL's namespace is flat, so a file may use
 * a name another file of its program declares).
 */

import type { Range, TextEdit, WorkspaceEdit } from 'vscode-languageserver/node';
import {
  KEYWORDS,
  localsAt,
  type Module,
  type Occurrence,
  occurrenceAt,
  type SymbolTarget,
  sameTarget,
} from '../lang/index.js';
import type { DocumentStore } from './documents.js';
import { spanRange } from './positions.js';
import type { Analysis } from './workspace.js';

/** A rename this server will not do; the message is shown to the user. */
export class RenameRefused extends Error {}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function target(analysis: Analysis, offset: number): { module: Module; found: Occurrence } {
  const module = analysis.module;
  const found = module && occurrenceAt(analysis.indexOf(module), offset);
  if (!module || !found) throw new RenameRefused('there is no name to rename here');
  const t = found.target;
  switch (t.kind) {
    case 'local':
    case 'step':
      return { module, found };
    case 'decl':
    case 'member': {
      const decl = t.kind === 'decl' ? t.decl : t.owner;
      const home = t.module;
      if (home !== module)
        throw new RenameRefused(
          `'${decl.name}' is declared in another file; rename it there (only declarations local to their file can be renamed)`,
        );
      if (decl.exported)
        throw new RenameRefused(
          `'${decl.name}' is exported, so files this server has not loaded may import it; rename is limited to declarations local to their file`,
        );
      const imported = module.program.decls.some(
        (d) => d.kind === 'Import' && d.items.some((i) => (i.alias ?? i.name) === decl.name),
      );
      if (imported)
        throw new RenameRefused(
          `'${decl.name}' is imported here; rename it in the file that declares it`,
        );
      return { module, found };
    }
    case 'namespace':
    case 'file':
      throw new RenameRefused('imports cannot be renamed here; edit the import itself');
    case 'native':
    case 'native-method':
    case 'builtin':
      throw new RenameRefused(`'${t.name}' is built into the language and cannot be renamed`);
  }
}

/** The range to rename at the cursor, or a refusal. */
export function prepareRename(
  store: DocumentStore,
  analysis: Analysis,
  offset: number,
): { range: Range; placeholder: string } {
  const { module, found } = target(analysis, offset);
  return {
    range: spanRange(store, module.text, found.span),
    placeholder: module.text.slice(found.span.start, found.span.end),
  };
}

export function rename(
  store: DocumentStore,
  analysis: Analysis,
  offset: number,
  newName: string,
): WorkspaceEdit {
  const { module, found } = target(analysis, offset);
  if (!IDENTIFIER.test(newName))
    throw new RenameRefused(
      `'${newName}' is not a name (letters, digits and _, not starting with a digit)`,
    );
  if (KEYWORDS.includes(newName)) throw new RenameRefused(`'${newName}' is a keyword`);
  checkClash(analysis, module, found.target, newName);
  const changes: Record<string, TextEdit[]> = {};
  const modules =
    found.target.kind === 'local' || found.target.kind === 'step'
      ? [module]
      : analysis.result.graph.modules;
  for (const m of modules) {
    const edits = analysis
      .indexOf(m)
      .occurrences.filter((o) => sameTarget(o.target, found.target))
      .map((o) => ({ range: spanRange(store, m.text, o.span), newText: newName }));
    if (edits.length) changes[store.uriOf(m.path)] = edits;
  }
  return { changes };
}

function checkClash(analysis: Analysis, module: Module, t: SymbolTarget, newName: string): void {
  const taken = (why: string) => new RenameRefused(`'${newName}' ${why}`);
  if (t.kind === 'local') {
    const visible = localsAt(analysis.indexOf(module), t.local.span.start).locals;
    if (visible.some((l) => l.name === newName && l !== t.local))
      throw taken('is already declared in this scope');
    if (analysis.result.scopes.get(module)?.has(newName))
      throw taken('is already a declaration of this program');
  } else if (t.kind === 'decl') {
    if (analysis.result.scopes.get(module)?.has(newName))
      throw taken('is already a declaration of this program');
  } else if (t.kind === 'member') {
    const owner = t.owner;
    const names =
      owner.kind === 'Tool'
        ? owner.methods.map((m) => m.name)
        : owner.kind === 'Enum'
          ? owner.variants.map((v) => v.name)
          : [];
    if (names.includes(newName)) throw taken(`is already a member of '${owner.name}'`);
  } else if (t.kind === 'step') {
    const pipeline = module.program.decls.find(
      (d) =>
        d.kind === 'Pipeline' && d.span.start <= t.step.span.start && t.step.span.end <= d.span.end,
    );
    if (
      pipeline?.kind === 'Pipeline' &&
      pipeline.steps.some(
        (s) =>
          s.name === newName || (s.kind === 'Parallel' && s.steps.some((x) => x.name === newName)),
      )
    )
      throw taken('is already a step of this pipeline');
  }
}

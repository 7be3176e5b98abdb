/** Spans (UTF-16 offsets, as the checker reports them) as LSP ranges and locations. */

import type { Location, Range } from 'vscode-languageserver/node';
import type { Module, Span } from '../lang/index.js';
import type { DocumentStore } from './documents.js';
import type { Analysis } from './workspace.js';

/** The text the checker read for `path` in this analysis (open text, disk, or an asset). */
export function textOf(analysis: Analysis, path: string): string | undefined {
  return analysis.result.graph.texts.get(path);
}

export function spanRange(store: DocumentStore, text: string, span: Span): Range {
  const doc = store.view(span.file, text);
  return { start: doc.positionAt(span.start), end: doc.positionAt(span.end) };
}

export function spanLocation(store: DocumentStore, analysis: Analysis, span: Span): Location {
  const text = textOf(analysis, span.file) ?? '';
  return { uri: store.uriOf(span.file), range: spanRange(store, text, span) };
}

/** The start of a file (prompt, skill and schema files, imported modules). */
export function fileLocation(store: DocumentStore, path: string): Location {
  const zero = { line: 0, character: 0 };
  return { uri: store.uriOf(path), range: { start: zero, end: zero } };
}

export function moduleOffset(
  store: DocumentStore,
  module: Module,
  position: { line: number; character: number },
): number {
  return store.view(module.path, module.text).offsetAt(position);
}

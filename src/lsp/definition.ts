/**
 * Go to definition: a name to where it is declared (across imports), a member to its method or
 * variant, a `goto` to its step, and an import path or a `from "…"` to the file it names (prompt,
 * skill and schema files). On a declaration's own name that reads a file, the file.
 */

import type { Location } from 'vscode-languageserver/node';
import { occurrenceAt } from '../lang/index.js';
import type { DocumentStore } from './documents.js';
import { fileLocation, spanLocation } from './positions.js';
import type { Analysis } from './workspace.js';

export function definition(
  store: DocumentStore,
  analysis: Analysis,
  offset: number,
): Location | null {
  const module = analysis.module;
  if (!module) return null;
  const found = occurrenceAt(analysis.indexOf(module), offset);
  if (!found) return null;
  const t = found.target;
  switch (t.kind) {
    case 'decl': {
      const decl = t.decl;
      if (found.declaration && 'from' in decl && typeof decl.from === 'string') {
        const asset = t.module.assets.get(decl);
        if (asset) return fileLocation(store, asset.path);
      }
      return spanLocation(store, analysis, decl.nameSpan);
    }
    case 'local':
      return spanLocation(store, analysis, t.local.span);
    case 'member':
      return t.span ? spanLocation(store, analysis, t.span) : null;
    case 'step':
      return spanLocation(store, analysis, t.step.nameSpan);
    case 'namespace':
      return fileLocation(store, t.module.path);
    case 'file':
      return analysis.result.graph.texts.has(t.path) ? fileLocation(store, t.path) : null;
    case 'native':
    case 'native-method':
    case 'builtin':
      return null;
  }
}

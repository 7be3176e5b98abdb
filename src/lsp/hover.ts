/** Hover: what the name under the cursor is — its kind, signature and description. */
import { dirname, relative } from 'node:path';
import type { Hover, MarkupContent } from 'vscode-languageserver/node';
import {
  BUILTIN_DESCRIPTIONS,
  NATIVE_METHODS,
  type Occurrence,
  occurrenceAt,
} from '../lang/index.js';
import { description, kindWord, localKind, localSignature, signature } from './describe.js';
import type { DocumentStore } from './documents.js';
import { spanRange } from './positions.js';
import type { Analysis } from './workspace.js';

export function hover(store: DocumentStore, analysis: Analysis, offset: number): Hover | null {
  const module = analysis.module;
  if (!module) return null;
  const found = occurrenceAt(analysis.indexOf(module), offset);
  if (!found) return null;
  const value = describeOccurrence(found, analysis);
  if (!value) return null;
  const contents: MarkupContent = { kind: 'markdown', value };
  return { contents, range: spanRange(store, module.text, found.span) };
}

function block(code: string, kind: string, text?: string): string {
  return [`\`\`\`mhl\n${code}\n\`\`\``, `*${kind}*`, ...(text ? [text] : [])].join('\n\n');
}

function describeOccurrence(o: Occurrence, analysis: Analysis): string | undefined {
  const t = o.target;
  const here = analysis.path;
  switch (t.kind) {
    case 'decl': {
      const where = t.module.path === here ? '' : ` in ${relative(dirname(here), t.module.path)}`;
      return block(
        signature(t.decl, t.module),
        `${kindWord(t.decl)}${where}`,
        description(t.decl, t.module),
      );
    }
    case 'local': {
      const text = analysis.result.graph.texts.get(t.local.span.file) ?? '';
      return block(localSignature(t.local, text), localKind(t.local));
    }
    case 'member': {
      if (t.owner.kind === 'Tool') {
        const method = t.owner.methods.find((m) => m.name === t.name);
        const text = t.module.text;
        const header = method
          ? text.slice(method.span.start, method.body.span.start).replace(/\s*->\s*$/, '')
          : t.name;
        return block(
          `${t.owner.name}.${header.replace(/\s+/g, ' ')}`,
          `method of tool ${t.owner.name}`,
        );
      }
      return block(`${t.owner.name}.${t.name}`, `variant of enum ${t.owner.name}`);
    }
    case 'native': {
      const methods = (NATIVE_METHODS[t.name] ?? []).map((m) => `${t.name}.${m.signature}`);
      return block(methods.join('\n'), `native namespace ${t.name}`);
    }
    case 'native-method': {
      const m = NATIVE_METHODS[t.namespace]?.find((x) => x.name === t.name);
      if (!m)
        return block(`${t.namespace}.${t.name}`, `native ${t.namespace} has no method ${t.name}`);
      return block(`${t.namespace}.${m.signature}`, `native method`, m.description);
    }
    case 'builtin':
      return block(t.name, 'built-in function', BUILTIN_DESCRIPTIONS[t.name]);
    case 'step':
      return block(
        `${t.step.kind === 'Parallel' ? 'parallel' : 'step'} ${t.step.name}`,
        t.step.kind === 'Parallel' ? 'parallel group' : 'step',
      );
    case 'namespace':
      return block(`import "${relative(dirname(here), t.module.path)}"`, 'namespace');
    case 'file': {
      const shown = relative(dirname(here), t.path);
      const found = analysis.result.graph.texts.has(t.path);
      return block(`"${shown}"`, found ? 'file' : 'file (not found)');
    }
  }
}

/**
 * Diagnostics as you type: changes are collected and, once the user pauses for the debounce
 * interval, the changed documents and their open dependents are checked together and each gets
 * its list published (an empty list clears it).
 */
import { dirname, relative, resolve } from 'node:path';
import {
  type Connection,
  DiagnosticSeverity,
  type Diagnostic as LspDiagnostic,
} from 'vscode-languageserver/node';
import type { Diagnostic as LangDiagnostic } from '../lang/index.js';
import type { DocumentStore } from './documents.js';
import { spanLocation, spanRange, textOf } from './positions.js';
import type { Analysis, Workspace } from './workspace.js';

export class DiagnosticsScheduler {
  readonly #connection: Connection;
  readonly #store: DocumentStore;
  readonly #workspace: Workspace;
  readonly #delayMs: number;
  readonly #pending = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(connection: Connection, store: DocumentStore, workspace: Workspace, delayMs: number) {
    this.#connection = connection;
    this.#store = store;
    this.#workspace = workspace;
    this.#delayMs = delayMs;
  }

  /** Marks files as changed; their dependents are found when the check runs. */
  changed(paths: Iterable<string>): void {
    for (const p of paths) this.#pending.add(p);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.flush(), this.#delayMs);
  }

  /** Checks and publishes everything pending now (requests call it so they never read stale results). */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.size === 0) return;
    const affected = this.#workspace.affectedBy(this.#pending);
    this.#pending.clear();
    try {
      for (const analysis of this.#workspace.check(affected)) this.#publish(analysis);
    } catch (e) {
      // A checker bug must not take the editor's server down with it.
      this.#connection.console.error(`mhl lsp: check failed: ${(e as Error).message}`);
    }
  }

  /** Clears a closed document's diagnostics. */
  clear(uri: string): void {
    void this.#connection.sendDiagnostics({ uri, diagnostics: [] });
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  #publish(analysis: Analysis): void {
    const diagnostics = toLsp(this.#store, analysis);
    void this.#connection.sendDiagnostics({
      uri: this.#store.uriOf(analysis.path),
      version: analysis.version,
      diagnostics,
    });
  }
}

/**
 * The document's own diagnostics, plus those the checker placed in its prompt, skill and schema
 * files, shown on the `from "…"` that names the file (editors show only open documents).
 */
export function toLsp(store: DocumentStore, analysis: Analysis): LspDiagnostic[] {
  const { path, result } = analysis;
  const text = textOf(analysis, path) ?? store.openText(path) ?? '';
  const assets = new Map<string, LangDiagnostic['span']>();
  for (const decl of analysis.module?.program.decls ?? []) {
    if ('fromSpan' in decl && decl.fromSpan && typeof decl.from === 'string')
      assets.set(resolve(dirname(path), decl.from), decl.fromSpan);
  }
  const out: LspDiagnostic[] = [];
  for (const u of result.unreadable) {
    if (u.path !== path) continue;
    const zero = { line: 0, character: 0 };
    out.push({
      range: { start: zero, end: zero },
      severity: DiagnosticSeverity.Error,
      source: 'mhl',
      code: 'IMPORT',
      message: `cannot read file: ${u.reason}`,
    });
  }
  for (const d of result.diagnostics) {
    const severity = d.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning;
    const base = { severity, source: 'mhl', code: d.code, message: d.message };
    if (d.span.file === path) {
      out.push({ ...base, range: spanRange(store, text, d.span) });
      continue;
    }
    const at = assets.get(d.span.file);
    if (!at) continue;
    const where = `${relative(dirname(path), d.span.file)}:${d.span.line}:${d.span.col}`;
    out.push({
      ...base,
      message: `${where}: ${d.message}`,
      range: spanRange(store, text, at),
      relatedInformation: [{ location: spanLocation(store, analysis, d.span), message: d.message }],
    });
  }
  return out;
}

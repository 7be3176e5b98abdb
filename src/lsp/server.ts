/**
 * `mhl lsp`: the language server, on the standard `vscode-languageserver` library. This module
 * only wires requests to the feature modules; each answers from the open document's latest
 * check, made fresh first if the document changed since.
 */
import {
  type Connection,
  createConnection,
  DidChangeWatchedFilesNotification,
  type InitializeParams,
  type InitializeResult,
  LSPErrorCodes,
  ResponseError,
  TextDocumentSyncKind,
} from 'vscode-languageserver/node';
import { complete } from './completion.js';
import { definition } from './definition.js';
import { DiagnosticsScheduler } from './diagnostics.js';
import { DocumentStore, uriToPath } from './documents.js';
import { FrameGuard } from './frame-guard.js';
import { hover } from './hover.js';
import { prepareRename, RenameRefused, rename } from './rename.js';
import { documentSymbols } from './symbols.js';
import { type Analysis, Workspace } from './workspace.js';

export interface LanguageServerOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  readonly version: string;
}

/** Default pause after the last keystroke before checking; `initializationOptions.debounceMs` overrides it. */
const DEFAULT_DEBOUNCE_MS = 200;
const MAX_DEBOUNCE_MS = 10_000;
/**
 * The largest message read: room for a full-text change of the largest source the checker
 * reads (4 MiB) even with every character JSON-escaped; past it a message is skipped.
 */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

export function startLanguageServer(options: LanguageServerOptions): Connection {
  let dropped = (_bytes: number) => {};
  const guard = new FrameGuard(MAX_MESSAGE_BYTES, (bytes) => dropped(bytes));
  options.input.pipe(guard);
  const connection = createConnection(guard, options.output);
  dropped = (bytes) =>
    connection.console.error(
      `mhl lsp: skipped a message of ${bytes} bytes (the limit is ${MAX_MESSAGE_BYTES})`,
    );
  const store = new DocumentStore();
  const workspace = new Workspace(store);
  let diagnostics: DiagnosticsScheduler | undefined;
  let watchFiles = false;

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    diagnostics = new DiagnosticsScheduler(connection, store, workspace, debounceOf(params));
    watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        hoverProvider: true,
        definitionProvider: true,
        documentSymbolProvider: true,
        completionProvider: { triggerCharacters: ['.'] },
        renameProvider: { prepareProvider: true },
      },
      serverInfo: { name: 'mhl', version: options.version },
    };
  });

  connection.onInitialized(() => {
    if (watchFiles) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, {
        watchers: [{ globPattern: '**/*.{mh,md,json}' }],
      });
    }
  });

  const scheduler = (): DiagnosticsScheduler => {
    if (!diagnostics) throw new ResponseError(-32002, 'server not initialized');
    return diagnostics;
  };

  store.documents.onDidOpen(({ document }) => {
    const path = store.track(document.uri);
    if (path) scheduler().changed([path]);
  });
  store.documents.onDidChangeContent(({ document }) => {
    const path = uriToPath(document.uri);
    if (path) scheduler().changed([path]);
  });
  store.documents.onDidClose(({ document }) => {
    const path = uriToPath(document.uri);
    store.untrack(document.uri);
    scheduler().clear(document.uri);
    if (!path) return;
    workspace.forget(path);
    // Its importers now read the file from disk again.
    scheduler().changed([path]);
  });
  connection.onDidChangeWatchedFiles(({ changes }) => {
    const paths = changes.map((c) => uriToPath(c.uri)).filter((p): p is string => p !== undefined);
    scheduler().changed(paths);
  });

  /** The fresh analysis of a request's document, and the offset of its position. */
  const at = (uri: string, position: { line: number; character: number }) => {
    const path = uriToPath(uri);
    const doc = store.documents.get(uri);
    if (!path || !doc) return undefined;
    let analysis: Analysis | undefined = workspace.current(path);
    if (!analysis) {
      scheduler().changed([path]);
      scheduler().flush();
      analysis = workspace.current(path);
    }
    return analysis && { analysis, doc, offset: doc.offsetAt(position) };
  };

  connection.onHover(({ textDocument, position }) => {
    const a = at(textDocument.uri, position);
    return a ? hover(store, a.analysis, a.offset) : null;
  });
  connection.onDefinition(({ textDocument, position }) => {
    const a = at(textDocument.uri, position);
    return a ? definition(store, a.analysis, a.offset) : null;
  });
  connection.onDocumentSymbol(({ textDocument }) => {
    const a = at(textDocument.uri, { line: 0, character: 0 });
    return a?.analysis.module ? documentSymbols(store, a.analysis.module) : [];
  });
  connection.onCompletion(({ textDocument, position }) => {
    const a = at(textDocument.uri, position);
    if (!a) return [];
    const linePrefix = a.doc.getText({
      start: { line: position.line, character: 0 },
      end: position,
    });
    return complete(a.analysis, linePrefix, a.offset);
  });
  connection.onPrepareRename(({ textDocument, position }) => {
    const a = at(textDocument.uri, position);
    if (!a) return null;
    return refusals(() => prepareRename(store, a.analysis, a.offset));
  });
  connection.onRenameRequest(({ textDocument, position, newName }) => {
    const a = at(textDocument.uri, position);
    if (!a) return null;
    return refusals(() => rename(store, a.analysis, a.offset, newName));
  });

  connection.onShutdown(() => diagnostics?.dispose());
  store.documents.listen(connection);
  connection.listen();
  return connection;
}

function debounceOf(params: InitializeParams): number {
  const options = params.initializationOptions as { debounceMs?: unknown } | null | undefined;
  const ms = options?.debounceMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0
    ? Math.min(ms, MAX_DEBOUNCE_MS)
    : DEFAULT_DEBOUNCE_MS;
}

/** A refused rename is a RequestFailed error whose message the editor shows. */
function refusals<T>(task: () => T): T {
  try {
    return task();
  } catch (e) {
    if (e instanceof RenameRefused) throw new ResponseError(LSPErrorCodes.RequestFailed, e.message);
    throw e;
  }
}

/**
 * A real LSP client for tests: spawns `node dist/bin/mhl.js lsp` and talks to it with
 * vscode-jsonrpc (re-exported by vscode-languageserver-protocol/node) over the child's stdio, using the protocol's request types. Diagnostics are
 * recorded as they arrive so a test can wait on the next one for a document, never sleep.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  type Diagnostic,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  type InitializeResult,
  type MessageConnection,
  PublishDiagnosticsNotification,
  type PublishDiagnosticsParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type TextDocumentContentChangeEvent,
} from 'vscode-languageserver-protocol/node';
import { CLI, REPO_ROOT, tempDir } from './cli.js';

export const LSP_FIXTURE = join(REPO_ROOT, 'test/fixtures/lsp');

interface Waiter {
  readonly uri: string;
  readonly accept: (p: PublishDiagnosticsParams) => boolean;
  readonly resolve: (p: PublishDiagnosticsParams) => void;
}

export class LspClient {
  readonly child: ChildProcessWithoutNullStreams;
  readonly connection: MessageConnection;
  /** A copy of the fixture folder, so tests may edit files on disk. */
  readonly root: string;
  readonly published: PublishDiagnosticsParams[] = [];
  readonly exited: Promise<number | null>;
  stderr = '';
  readonly #waiters: Waiter[] = [];
  readonly #versions = new Map<string, number>();

  constructor() {
    this.root = tempDir('mhl-lsp-');
    cpSync(LSP_FIXTURE, this.root, { recursive: true });
    this.child = spawn(process.execPath, [CLI, 'lsp', '--stdio'], {
      cwd: this.root,
      stdio: 'pipe',
    });
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
    });
    this.exited = new Promise((done) => this.child.on('exit', (code) => done(code)));
    this.connection = createMessageConnection(
      new StreamMessageReader(this.child.stdout),
      new StreamMessageWriter(this.child.stdin),
    );
    this.connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      this.published.push(p);
      for (const w of [...this.#waiters]) {
        if (w.uri === p.uri && w.accept(p)) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(p);
        }
      }
    });
    this.connection.listen();
  }

  uri(relativePath: string): string {
    return pathToFileURL(join(this.root, relativePath)).href;
  }

  async initialize(debounceMs = 5): Promise<InitializeResult> {
    const result = await this.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(this.root).href,
      capabilities: {
        textDocument: { rename: { prepareSupport: true } },
        workspace: { didChangeWatchedFiles: { dynamicRegistration: false } },
      },
      initializationOptions: { debounceMs },
    });
    await this.connection.sendNotification(InitializedNotification.type, {});
    return result;
  }

  /** Resolves with the next diagnostics for `uri` that `accept` takes (sent after this call). */
  nextDiagnostics(
    uri: string,
    accept: (p: PublishDiagnosticsParams) => boolean = () => true,
  ): Promise<PublishDiagnosticsParams> {
    return new Promise((resolve) => this.#waiters.push({ uri, accept, resolve }));
  }

  /** Opens a document and resolves with its first diagnostics. */
  async open(uri: string, text: string): Promise<Diagnostic[]> {
    this.#versions.set(uri, 1);
    const next = this.nextDiagnostics(uri, (p) => p.version === 1);
    await this.connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: 'mhl', version: 1, text },
    });
    return (await next).diagnostics;
  }

  /** Opens a document without waiting for its diagnostics. */
  async openOnly(uri: string, text: string): Promise<void> {
    this.#versions.set(uri, 1);
    await this.connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: 'mhl', version: 1, text },
    });
  }

  /** Sends a change and resolves with the diagnostics for the new version. */
  async change(uri: string, changes: TextDocumentContentChangeEvent[]): Promise<Diagnostic[]> {
    const version = (this.#versions.get(uri) ?? 1) + 1;
    this.#versions.set(uri, version);
    const next = this.nextDiagnostics(uri, (p) => p.version === version);
    await this.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: changes,
    });
    return (await next).diagnostics;
  }

  /** Sends a change without waiting for diagnostics (requests must still see it). */
  async edit(uri: string, changes: TextDocumentContentChangeEvent[]): Promise<void> {
    const version = (this.#versions.get(uri) ?? 1) + 1;
    this.#versions.set(uri, version);
    await this.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version },
      contentChanges: changes,
    });
  }

  /** Writes raw bytes to the server's stdin, bypassing the client's framing. */
  raw(bytes: string | Buffer): void {
    this.child.stdin.write(bytes);
  }

  async shutdown(): Promise<number | null> {
    await this.connection.sendRequest(ShutdownRequest.type);
    await this.connection.sendNotification(ExitNotification.type);
    const code = await this.exited;
    this.connection.dispose();
    return code;
  }

  /** For `after` hooks: ends the child if a test failed before shutting it down. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    this.connection.dispose();
  }
}

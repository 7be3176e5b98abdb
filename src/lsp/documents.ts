/**
 * The open documents and the file system as the checker sees them: an open document's unsaved
 * text wins over the file on disk, so diagnostics follow what the user is typing.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TextDocuments } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { diskHost, type SourceHost } from '../lang/index.js';

/** The absolute path of a `file:` URI; undefined for other schemes (untitled buffers). */
export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

export class DocumentStore {
  readonly documents = new TextDocuments(TextDocument);
  /** path → the URI the client used for it, so answers name documents exactly as it does. */
  readonly #uris = new Map<string, string>();
  /** Texts of files that are not open, for turning offsets into positions. */
  readonly #closed = new Map<string, TextDocument>();

  /** Reads open documents first, then the disk. */
  readonly host: SourceHost = {
    readText: (path) => this.openText(path) ?? diskHost.readText(path),
  };

  track(uri: string): string | undefined {
    const path = uriToPath(uri);
    if (path) this.#uris.set(path, uri);
    return path;
  }

  untrack(uri: string): void {
    const path = uriToPath(uri);
    if (path) this.#uris.delete(path);
  }

  uriOf(path: string): string {
    return this.#uris.get(path) ?? pathToFileURL(path).href;
  }

  /** The open document at a path, if any. */
  open(path: string): TextDocument | undefined {
    const uri = this.#uris.get(path);
    return uri === undefined ? undefined : this.documents.get(uri);
  }

  openText(path: string): string | undefined {
    return this.open(path)?.getText();
  }

  openPaths(): string[] {
    return [...this.#uris.keys()].filter((p) => this.open(p) !== undefined);
  }

  /**
   * A document to convert offsets of `path` with: the open one, else one over `text` (the text
   * the checker read, so positions match what it reported).
   */
  view(path: string, text: string): TextDocument {
    const open = this.open(path);
    if (open) return open;
    const cached = this.#closed.get(path);
    if (cached && cached.getText() === text) return cached;
    const doc = TextDocument.create(this.uriOf(path), 'mhl', 0, text);
    this.#closed.set(path, doc);
    if (this.#closed.size > 64) this.#closed.delete(this.#closed.keys().next().value as string);
    return doc;
  }
}

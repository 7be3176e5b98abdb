/**
 * `mhl lsp`: serves the Language Server Protocol on stdin/stdout for editors. Stdout belongs to
 * the protocol; the server's own messages go to the client's log (window/logMessage).
 */
import { startLanguageServer } from '../lsp/index.js';

/** Starts the server; the process ends when the client sends `exit` or closes stdin. */
export function runLsp(version: string): void {
  startLanguageServer({ input: process.stdin, output: process.stdout, version });
}

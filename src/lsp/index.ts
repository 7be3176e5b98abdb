/**
 * The MHL language server (`mhl lsp`): diagnostics as you type, hover, definition, symbols,
 * completion and rename, over the language front end in src/lang.
 */
export { type LanguageServerOptions, startLanguageServer } from './server.js';

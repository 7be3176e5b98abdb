/**
 * Confidential workflows: the DMPK v2 pack format, its key, the packer's file walk, and a pack
 * as a `SourceHost` read from memory (the catalog builds workflows from it: catalog/pack.ts).
 * Below the catalog, above the language front end; knows nothing of serving, processes'
 * environments beyond the key variable, or the CLI.
 */
export { type CollectedFiles, collectPackFiles, type SkippedFile } from './collect.js';
export {
  DMPK_MAGIC,
  DMPK_VERSION,
  decodePack,
  encodePack,
  HEADER_BYTES,
  KEY_BYTES,
  MAX_PACK_BYTES,
  NONCE_BYTES,
  type PackEntry,
  TAG_BYTES,
} from './dmpk.js';
export { PACK_ERROR_CODES, PackError, type PackErrorCode } from './errors.js';
export {
  formatWorkflowsKey,
  newWorkflowsKey,
  parseWorkflowsKey,
  takeWorkflowsKey,
  WORKFLOWS_KEY_ENV,
} from './key.js';
export { packHost, readPackFile } from './load.js';
export { comparePackPaths, MAX_PATH_BYTES, packPathProblem } from './paths.js';

/**
 * A decoded DMPK pack as a catalog, exactly as `loadCatalog` builds one for the same folder:
 * the pack's entries are read through the pack's `SourceHost` rooted at `<dir>`. The catalog
 * sits above the pack format (design.md §1): this module uses it, the pack knows no catalog.
 */
import { decodePack, type PackEntry, packHost } from '../pack/index.js';
import { buildCatalog, type CatalogResult } from './load.js';

/**
 * Builds the catalog of a decoded pack, exactly as `loadCatalog` would for the same folder:
 * the `.mh` files outside hidden and `node_modules` segments, checked together. Never throws
 * for bad workflows: problems come back in the result.
 */
export function packCatalog(root: string, entries: readonly PackEntry[]): CatalogResult {
  const files = entries
    .filter((e) => e.path.endsWith('.mh') && !e.path.split('/').some(isSkippedSegment))
    .map((e) => e.path);
  return buildCatalog({ root, files, host: packHost(root, entries), source: 'pack' });
}

function isSkippedSegment(segment: string): boolean {
  return segment.startsWith('.') || segment === 'node_modules';
}

/**
 * Decrypts and checks `bytes` under `key`, then builds its catalog rooted at `root`. Throws
 * `PackError` for any failed pack check (see `decodePack`); workflow problems are returned.
 */
export function loadPackCatalog(bytes: Uint8Array, key: Uint8Array, root: string): CatalogResult {
  return packCatalog(root, decodePack(bytes, key));
}

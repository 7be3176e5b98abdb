/**
 * The catalog's MCP resources (spec/mhl-serve.md §6): per workflow, its manifest JSON at
 * `mhl://workflow/<name>` and its `.mh` text at `mhl://workflow/<name>/source`. Lists and
 * reads only; run resources (`mhl://run/…`) need the run registry and live with it.
 */
import { manifestUri, sourceUri, workflowManifest } from './manifest.js';
import type { Catalog } from './types.js';

/** The JSON manifest's media type. */
export const MANIFEST_MIME_TYPE = 'application/json';
/** The media type of `.mh` source text. */
export const SOURCE_MIME_TYPE = 'text/x-mhl';

/** A `resources/list` entry. */
export interface ResourceEntry {
  readonly uri: string;
  readonly name: string;
  readonly description?: string;
  readonly mimeType: string;
}

/** A `resources/read` result. */
export interface ResourceContents {
  readonly contents: readonly {
    readonly uri: string;
    readonly mimeType: string;
    readonly text: string;
  }[];
  /**
   * Set when the contents belong to one caller or change (a run's): a 2026-07-28 answer then
   * says `cacheScope: "private"` and `ttlMs: 0` instead of the public default.
   */
  readonly private?: boolean;
}

/**
 * Whether the catalog hands out its `.mh` text. Not from a pack: a host ships its workflows
 * encrypted so that their sources stay confidential, and the wire must not undo that.
 */
function servesSource(catalog: Catalog): boolean {
  return catalog.source !== 'pack';
}

/** Every workflow's manifest and (outside packs) source entries, by workflow name. */
export function listResources(catalog: Catalog): ResourceEntry[] {
  const withSource = servesSource(catalog);
  return [...catalog.workflows.values()].flatMap((w): ResourceEntry[] => [
    {
      uri: manifestUri(w.name),
      name: `${w.name} (manifest)`,
      description: w.description,
      mimeType: MANIFEST_MIME_TYPE,
    },
    ...(withSource
      ? [{ uri: sourceUri(w.name), name: `${w.name} (source)`, mimeType: SOURCE_MIME_TYPE }]
      : []),
  ]);
}

/**
 * Reads a workflow resource; undefined for any URI the catalog does not serve (the caller
 * answers `unknown resource: <uri>`).
 */
export function readResource(catalog: Catalog, uri: string): ResourceContents | undefined {
  const prefix = 'mhl://workflow/';
  if (!uri.startsWith(prefix)) return undefined;
  const rest = uri.slice(prefix.length);
  const isSource = rest.endsWith('/source');
  const workflow = catalog.workflows.get(isSource ? rest.slice(0, -'/source'.length) : rest);
  if (!workflow) return undefined;
  if (isSource) {
    if (!servesSource(catalog)) return undefined;
    return { contents: [{ uri, mimeType: SOURCE_MIME_TYPE, text: workflow.source }] };
  }
  const manifest = workflowManifest(workflow, catalog.root);
  const { source: _hidden, ...withoutSource } = manifest;
  const text = JSON.stringify(servesSource(catalog) ? manifest : withoutSource, null, 2);
  return { contents: [{ uri, mimeType: MANIFEST_MIME_TYPE, text }] };
}

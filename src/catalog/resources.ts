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
}

/** Every workflow's manifest and source entries, by workflow name. */
export function listResources(catalog: Catalog): ResourceEntry[] {
  return [...catalog.workflows.values()].flatMap((w): ResourceEntry[] => [
    {
      uri: manifestUri(w.name),
      name: `${w.name} (manifest)`,
      description: w.description,
      mimeType: MANIFEST_MIME_TYPE,
    },
    { uri: sourceUri(w.name), name: `${w.name} (source)`, mimeType: SOURCE_MIME_TYPE },
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
  if (isSource) return { contents: [{ uri, mimeType: SOURCE_MIME_TYPE, text: workflow.source }] };
  const text = JSON.stringify(workflowManifest(workflow, catalog.root), null, 2);
  return { contents: [{ uri, mimeType: MANIFEST_MIME_TYPE, text }] };
}

/**
 * Resource links of eagerly bundled step techniques (spec session-profile §3.9 item 4): the ids a
 * delivered technique's YAML names (`resources: [...]` lists, then `[text](id#section)`,
 * `[text](wf/id)` and `…/resources/x.md` links), in order of first appearance; a bare id from a
 * technique file of another workflow than the session's is qualified with that workflow (a bare
 * link in a meta technique names a meta resource whoever binds it). Each id resolves as a
 * `get_resource` call of the session would; one that does not is a warning, never fatal.
 */
import { extractSection, findResource, parseResourceRef } from '../definition/resources.js';

/** What `get_resource` accepts as an id: `[<wf>/]<slug>[#<anchor>]`, letters, digits, `_`, `-`. */
const RESOURCE_ID = /^[a-z0-9][a-z0-9_/-]*(?:#[a-z0-9][a-z0-9_-]*)?$/i;
const OWNER = /^[a-z0-9][a-z0-9-]*$/i;

/** Resource ids a technique's text names, deduplicated, in order. */
export function extractResourceIds(text: string): string[] {
  const ids = new Set<string>();
  for (const m of text.matchAll(/\bresources\s*:\s*\[([^\]]*)\]/gi)) {
    for (const part of (m[1] as string).split(/[,\n]/)) {
      const id = part.replace(/["'\s]/g, '');
      if (RESOURCE_ID.test(id)) ids.add(id);
    }
  }
  for (const m of text.matchAll(/\]\(([^)]+)\)/g)) {
    const raw = (m[1] as string).trim();
    if (raw.startsWith('http') || raw.startsWith('#') || raw.includes('://')) continue;
    // The anchor comes off before `.md` does, so `x.md#a` yields `x#a`.
    const at = raw.indexOf('#');
    const anchor = at >= 0 ? raw.slice(at) : '';
    const href = (at >= 0 ? raw.slice(0, at) : raw).replace(/\.md$/i, '') + anchor;
    const cut = href.lastIndexOf('resources/');
    if (cut >= 0) {
      // A path into a `resources/` folder: the segment before it names the owning workflow.
      const owner = href.slice(0, cut).replace(/\/$/, '').split('/').pop() ?? '';
      const rest = href.slice(cut + 'resources/'.length);
      ids.add(OWNER.test(owner) ? `${owner}/${rest}` : rest);
      continue;
    }
    // At most one slash: a deeper path is a file path in prose, not a resource id.
    if (RESOURCE_ID.test(href) && !href.includes('::') && (href.match(/\//g)?.length ?? 0) <= 1)
      ids.add(href);
  }
  return [...ids];
}

/** `id` as the session reads it: a bare id from another workflow's technique gets its prefix. */
export function qualifyResourceId(id: string, techniqueWf: string, sessionWf: string): string {
  if (parseResourceRef(id, '').wf !== '') return id;
  if (techniqueWf === '' || techniqueWf === sessionWf) return id;
  return `${techniqueWf}/${id}`;
}

/** The linked ids of every bundled step, qualified, deduplicated, in step order. */
export function linkedIds(
  steps: readonly { text: string; workflow: string }[],
  sessionWf: string,
): string[] {
  const out = new Set<string>();
  for (const { text, workflow } of steps)
    for (const id of extractResourceIds(text)) out.add(qualifyResourceId(id, workflow, sessionWf));
  return [...out];
}

/** A linked resource as `get_resource` would deliver it. */
export interface LinkedResource {
  readonly resourceId: string;
  /** The frontmatter `name`, else the id asked for. */
  readonly id: string;
  readonly version: string | undefined;
  /** The body (or section) alone. */
  readonly content: string;
  /** The whole `get_resource` text; its hash is the `resource:<id>` ledger hash. */
  readonly fullText: string;
}

/** Loads `resourceId` for session `sessionWf`: the resource, or the warning for its link. */
export function loadLinked(
  root: string,
  sessionWf: string,
  resourceId: string,
  sessionIndex: string,
): { resource: LinkedResource } | { warning: string } {
  const ref = parseResourceRef(resourceId, sessionWf);
  const found = findResource(root, ref.wf, ref.id);
  const warn = (why: string) => ({
    warning: `Unresolvable resource ref '${resourceId}' linked from bundled step techniques: ${why}`,
  });
  if (found === undefined) return warn(`Resource not found: ${ref.id} in workflow ${ref.wf}`);
  let content = found.body;
  if (ref.section !== undefined) {
    const cut = extractSection(content, ref.section);
    if (cut === undefined)
      return warn(`Section '#${ref.section}' not found in resource '${ref.id}'.`);
    content = cut;
  }
  return { resource: { resourceId, ...resourceText(found, resourceId, content, sessionIndex) } };
}

/** The `get_resource` response text of a resource (one layout for both delivery paths). */
export function resourceText(
  found: { id: string; version: string | undefined },
  resourceId: string,
  content: string,
  sessionIndex: string,
): { id: string; version: string | undefined; content: string; fullText: string } {
  const lines = [
    `resource_id: ${resourceId}`,
    `id: ${found.id}`,
    ...(found.version ? [`version: ${found.version}`] : []),
    `session_index: ${sessionIndex}`,
    '',
    content,
  ];
  return { id: found.id, version: found.version, content, fullText: lines.join('\n') };
}

/** A linked resource body over this many characters is never bundled (its id is listed). */
export const MAX_EAGER_RESOURCE_CHARS = 80_000;

export interface BundledResources {
  /** `resources`: bodies (or markers) by exact id; reference mode only. */
  resources: Record<string, unknown>;
  /** `resource_refs`: ids left for get_resource. */
  refs: string[];
  /** One per entry of `resources`, for the `resource_fetched {bundled: true}` events. */
  deliveries: { resourceId: string; chars: number; delivery: 'full' | 'unchanged' }[];
  warnings: string[];
}

/**
 * The linked resources of a bundle. In full mode only ids are listed (each still resolved, so a
 * broken link warns). In reference mode bodies are bundled: whole-file ids first, a section
 * skipped once its file is in, a body the scope already holds as a marker (free), a body over
 * the cap listed instead, and at the first body past the `left` budget it and every id after it
 * are listed. Bundled bodies are recorded in the scope's ledger under `resource:<id>`.
 */
export function bundleResources(opts: {
  root: string;
  sessionWf: string;
  sessionIndex: string;
  ids: readonly string[];
  reference: boolean;
  left: number;
  /** Whether the scope holds `key` at `hash` already. */
  held: (key: string, hash: string) => boolean;
  /** Records that the scope now holds `key` at `hash`. */
  record: (key: string, hash: string) => void;
  hash: (text: string) => string;
}): BundledResources {
  const out: BundledResources = { resources: {}, refs: [], deliveries: [], warnings: [] };
  const load = (id: string) => loadLinked(opts.root, opts.sessionWf, id, opts.sessionIndex);
  if (!opts.reference) {
    out.refs.push(...opts.ids);
    for (const id of opts.ids) {
      const got = load(id);
      if ('warning' in got) out.warnings.push(got.warning);
    }
    return out;
  }
  // Array sort is stable: whole files first, each group in link order.
  const ordered = [...opts.ids].sort((a, b) => Number(a.includes('#')) - Number(b.includes('#')));
  const whole = new Set<string>();
  const covered = (id: string) => {
    const at = id.indexOf('#');
    return at > 0 && whole.has(id.slice(0, at));
  };
  let left = opts.left;
  for (let i = 0; i < ordered.length; i++) {
    const id = ordered[i] as string;
    if (covered(id)) continue;
    const got = load(id);
    if ('warning' in got) {
      out.warnings.push(got.warning);
      continue;
    }
    const { resource } = got;
    const key = `resource:${id}`;
    const hash = opts.hash(resource.fullText);
    if (opts.held(key, hash)) {
      out.resources[id] = { resource_id: id, delivery: 'unchanged', content_hash: hash };
      out.deliveries.push({
        resourceId: id,
        chars: resource.content.length,
        delivery: 'unchanged',
      });
      if (!id.includes('#')) whole.add(id);
      continue;
    }
    if (resource.content.length > MAX_EAGER_RESOURCE_CHARS) {
      out.refs.push(id);
      continue;
    }
    if (resource.content.length > left) {
      out.refs.push(...ordered.slice(i).filter((r) => !covered(r)));
      break;
    }
    left -= resource.content.length;
    opts.record(key, hash);
    out.resources[id] = {
      resource_id: id,
      id: resource.id,
      ...(resource.version ? { version: resource.version } : {}),
      content: resource.content,
    };
    out.deliveries.push({ resourceId: id, chars: resource.content.length, delivery: 'full' });
    if (!id.includes('#')) whole.add(id);
  }
  return out;
}

/**
 * Resources (spec session-profile §1.13): `resources/<id>.md` of the workflow the ref names (no
 * `meta` fallback), found by slug then by frontmatter `name`, delivered without frontmatter,
 * optionally cut to one `#section` (GitHub-style heading slugs, fences ignored).
 */
import { readdirSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { readText } from './yaml-files.js';

export interface Resource {
  /** Frontmatter `name`, else the slug. */
  readonly id: string;
  readonly version: string | undefined;
  readonly body: string;
}

/** One path segment that stays where it is joined (no separators, no `.`/`..`, no dotfiles). */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** Whether `path` (symlinks followed) lies inside `root`: a link out of the tree reads nothing. */
function inside(root: string, path: string): boolean {
  try {
    const base = realpathSync(root);
    return realpathSync(path).startsWith(base + sep);
  } catch {
    return false;
  }
}

/** The text of `path` when it is a file inside `root`. */
function readInside(root: string, path: string): string | undefined {
  const text = readText(path);
  return text !== undefined && inside(root, path) ? text : undefined;
}

function frontmatter(text: string): { fields: Record<string, string>; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return { fields: {}, body: text };
  const fields: Record<string, string> = {};
  for (const line of (m[1] as string).split('\n')) {
    const kv = /^\s*([A-Za-z_]+):\s*['"]?(.*?)['"]?\s*$/.exec(line);
    if (kv && !((kv[1] as string) in fields)) fields[kv[1] as string] = kv[2] as string;
  }
  // The body is delivered trimmed, as the public server delivers it.
  return { fields, body: text.slice(m[0].length).trim() };
}

/** Splits `wf/id#section` (a trailing `.md` stripped) against the executing workflow. */
export function parseResourceRef(
  ref: string,
  current: string,
): { wf: string; id: string; section?: string } {
  const [path, section] = ref.split('#', 2) as [string, string | undefined];
  const clean = path.replace(/\.md$/, '');
  const slash = clean.indexOf('/');
  const wf = slash === -1 ? current : clean.slice(0, slash);
  const id = slash === -1 ? clean : clean.slice(slash + 1);
  return section === undefined ? { wf, id } : { wf, id, section };
}

/** Finds resource `id` of workflow `wf`; undefined when there is none. */
export function findResource(root: string, wf: string, id: string): Resource | undefined {
  if (!SEGMENT.test(wf) || !SEGMENT.test(id)) return undefined;
  const dir = join(root, wf, 'resources');
  const direct = readInside(root, join(dir, `${id}.md`));
  const texts: string[] = direct !== undefined ? [direct] : [];
  if (direct === undefined) {
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.md') && n !== 'README.md');
    } catch {
      // No resources folder.
    }
    for (const n of names) {
      const t = readInside(root, join(dir, n));
      if (t !== undefined && frontmatter(t).fields['name'] === id) texts.push(t);
    }
  }
  const text = texts[0];
  if (text === undefined) return undefined;
  const { fields, body } = frontmatter(text);
  return { id: fields['name'] ?? id, version: fields['version'], body };
}

/** GitHub-style heading slug. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/\s/g, '-');
}

/** The part of `body` from the heading whose slug is `section` to the next heading as high. */
export function extractSection(body: string, section: string): string | undefined {
  const lines = body.split('\n');
  let fenced = false;
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!h) continue;
    const depth = (h[1] as string).length;
    if (start === -1) {
      if (slug(h[2] as string) === section) {
        start = i;
        level = depth;
      }
    } else if (depth <= level) {
      return lines.slice(start, i).join('\n').trimEnd();
    }
  }
  return start === -1 ? undefined : lines.slice(start).join('\n').trimEnd();
}

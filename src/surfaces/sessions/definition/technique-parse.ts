/**
 * Parses a technique markdown file (spec session-profile §1.12): a small frontmatter block
 * (`metadata.version` required) and the level-2 sections Capability, Inputs, Outputs, Protocol
 * and Rules. Resource links are rewritten to ids `get_resource` accepts. A file that breaks the
 * format gives undefined (the public server treats it as not found). Pure, no I/O.
 */

export interface TechniqueIo {
  id: string;
  description?: string;
  default?: string;
  components?: Record<string, string>;
  artifact?: { name: string };
  audience?: 'human' | 'agent';
}

export interface ProtocolBlock {
  title?: string;
  steps: string[];
}

export interface Technique {
  id: string;
  version: string;
  capability: string;
  inputs?: TechniqueIo[];
  outputs?: TechniqueIo[];
  protocol?: ProtocolBlock[];
  rules?: Record<string, string>;
}

const ARTIFACT_NAME = /^(?:[A-Za-z0-9._-]|\{[A-Za-z0-9._$-]+\})+\.[A-Za-z0-9]+$/;

/** The frontmatter's `metadata.version` (or top-level `version`), and the body after it. */
function splitFrontmatter(text: string): { version: string | undefined; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return { version: undefined, body: text };
  const version =
    /^\s+version:\s*['"]?([^'"\s]+)/m.exec(m[1] as string)?.[1] ??
    /^version:\s*['"]?([^'"\s]+)/m.exec(m[1] as string)?.[1];
  return { version, body: text.slice(m[0].length) };
}

const linesOf = (text: string): string[] => text.split(/\r?\n/);

/**
 * Sections of one heading level: `[title, body]` in order, the body trimmed; text before the
 * first heading belongs to none. A heading is exactly `level` hashes, whitespace and a title.
 * Code fences are not tracked: a heading line inside one still starts a section, as on the
 * public server (no corpus technique has one).
 */
function sections(text: string, level: number): [string, string][] {
  const heading = new RegExp(`^#{${level}}\\s+(.+)$`);
  const out: [string, string][] = [];
  let current: [string, string[]] | undefined;
  const flush = () => {
    if (current) out.push([current[0], current[1].join('\n').trim()]);
  };
  for (const line of linesOf(text)) {
    const h = heading.exec(line);
    if (h) {
      flush();
      current = [(h[1] as string).trim(), []];
    } else current?.[1].push(line);
  }
  flush();
  return out;
}

/**
 * The paragraphs of `text`: runs of non-blank lines (a whitespace-only line is blank), each
 * trimmed, joined by one empty line however many blank lines stood between them.
 */
function paragraphs(text: string): string {
  const out: string[] = [];
  let run: string[] = [];
  const close = () => {
    const p = run.join('\n').trim();
    if (p !== '') out.push(p);
    run = [];
  };
  for (const line of linesOf(text)) {
    if (line.trim() === '') close();
    else run.push(line);
  }
  close();
  return out.join('\n\n');
}

/** Text before the first level-4 heading. */
function lead(text: string): string {
  const idx = text.search(/^####\s/m);
  return idx === -1 ? text : text.slice(0, idx);
}

/** A reserved value with its surrounding backticks (any number) taken off. */
const unquote = (s: string) => s.replace(/^`+|`+$/g, '').trim();

type Reserved = 'default' | 'artifact' | 'audience';

/**
 * One `### id` entry of Inputs or Outputs: its lead paragraphs (omitted when empty), reserved
 * `####` members (titles matched case-insensitively) and the other `####` members as components,
 * keys in the public server's order. Undefined when an artifact name or audience is invalid.
 */
function parseEntry(id: string, text: string, kind: 'inputs' | 'outputs'): TechniqueIo | undefined {
  const reserved: Reserved[] = kind === 'inputs' ? ['default'] : ['artifact', 'audience'];
  const found: Partial<Record<Reserved, string>> = {};
  let components: Record<string, string> | undefined;
  for (const [name, value] of sections(text, 4)) {
    const key = reserved.find((r) => r === name.toLowerCase());
    if (key !== undefined) found[key] = unquote(paragraphs(value));
    else {
      components ??= {};
      components[name] = paragraphs(value);
    }
  }
  const io: TechniqueIo = { id };
  const description = paragraphs(lead(text));
  if (description !== '') io.description = description;
  if (found.default !== undefined) io.default = found.default;
  if (components !== undefined) io.components = components;
  if (found.artifact !== undefined) {
    if (!ARTIFACT_NAME.test(found.artifact)) return undefined;
    io.artifact = { name: found.artifact };
  }
  if (found.audience !== undefined) {
    if (found.audience !== 'human' && found.audience !== 'agent') return undefined;
    io.audience = found.audience;
  }
  return io;
}

/** The entries of Inputs or Outputs: undefined when there are none; null when one is invalid. */
function parseIo(body: string, kind: 'inputs' | 'outputs'): TechniqueIo[] | undefined | null {
  const items: TechniqueIo[] = [];
  for (const [id, text] of sections(body, 3)) {
    const io = parseEntry(id, text, kind);
    if (io === undefined) return null;
    items.push(io);
  }
  return items.length > 0 ? items : undefined;
}

/** A list item: `-`, `*` or `N.`, whitespace, then at least one character. */
const ITEM = /^\s*(?:[-*]|\d+\.)\s+(.+)$/;

/**
 * The steps of a protocol block, as the public server reads them: each list item (nested ones
 * too, at any indent) is a step; a non-blank line that is not an item is joined with one space
 * to the open item, whatever its indent; a blank line closes the item, so text after it (an
 * indented paragraph under a step, a fenced block after a blank line) is no step's until the
 * next item, and is dropped, as is text before the first item. Fence lines are plain lines.
 */
function steps(text: string): string[] {
  const out: string[] = [];
  let open: string | undefined;
  const close = () => {
    if (open !== undefined) out.push(open.trim());
    open = undefined;
  };
  for (const line of linesOf(text)) {
    const item = ITEM.exec(line);
    if (item) {
      close();
      open = item[1] as string;
    } else if (line.trim() === '') close();
    else if (open !== undefined) open += ` ${line.trim()}`;
  }
  close();
  return out;
}

/**
 * A block's steps, or its paragraphs as one step when it has no list item; undefined when it
 * has neither (the public server leaves such a block out).
 */
function toBlock(text: string, title?: string): ProtocolBlock | undefined {
  const listed = steps(text);
  const body = listed.length > 0 ? listed : [paragraphs(text)].filter((p) => p !== '');
  if (body.length === 0) return undefined;
  // Title first: the order the public server renders.
  return title === undefined ? { steps: body } : { title, steps: body };
}

/** `### N. Title` blocks (ordinal off), else the whole body as one untitled block. */
function parseProtocol(body: string): ProtocolBlock[] | undefined {
  const titled = sections(body, 3);
  const blocks =
    titled.length === 0
      ? [toBlock(body)]
      : titled.map(([title, text]) => toBlock(text, title.replace(/^\d+\.\s*/, '').trim()));
  const kept = blocks.filter((b): b is ProtocolBlock => b !== undefined);
  return kept.length > 0 ? kept : undefined;
}

/** Named rules: each `### name` with its paragraphs; empty ones are left out. */
function parseRules(body: string): Record<string, string> | undefined {
  const rules: Record<string, string> = {};
  for (const [name, text] of sections(body, 3)) {
    const p = paragraphs(text);
    if (p !== '') rules[name] = p;
  }
  return Object.keys(rules).length > 0 ? rules : undefined;
}

/** Rewrites `../resources/x.md#a` → `x#a` and `../../wf/resources/x.md` → `wf/x`. */
export function rewriteLinks(text: string): string {
  return text
    .replace(
      /\]\((?:\.\.\/)+([A-Za-z0-9._-]+)\/resources\/([A-Za-z0-9._-]+)\.md(#[^)]*)?\)/g,
      (_m, wf, id, hash) => (wf === undefined ? _m : `](${wf}/${id}${hash ?? ''})`),
    )
    .replace(
      /\]\(\.\.\/resources\/([A-Za-z0-9._-]+)\.md(#[^)]*)?\)/g,
      (_m, id, hash) => `](${id}${hash ?? ''})`,
    );
}

/** The technique in `text` with identity `id`, or undefined when it breaks the format. */
export function parseTechnique(id: string, text: string): Technique | undefined {
  const { version, body } = splitFrontmatter(text);
  if (version === undefined) return undefined;
  const parts = new Map<string, string>();
  for (const [title, value] of sections(rewriteLinks(body), 2)) {
    const key = title.toLowerCase();
    if (key === 'input' || key === 'output' || key === 'output(s)') return undefined;
    // The first section of a title counts, as on the public server.
    if (!parts.has(key)) parts.set(key, value);
  }
  const capability = paragraphs(parts.get('capability') ?? '');
  if (!capability) return undefined;
  const technique: Technique = { id, version, capability };
  for (const kind of ['inputs', 'outputs'] as const) {
    const section = parts.get(kind);
    if (section === undefined) continue;
    const parsed = parseIo(section, kind);
    if (parsed === null) return undefined;
    if (parsed !== undefined) technique[kind] = parsed;
  }
  const protocol = parts.get('protocol');
  const blocks = protocol === undefined ? undefined : parseProtocol(protocol);
  if (blocks !== undefined) technique.protocol = blocks;
  const rules = parts.get('rules');
  const named = rules === undefined ? undefined : parseRules(rules);
  if (named !== undefined) technique.rules = named;
  return technique;
}

/**
 * Parses a technique markdown file (spec session-profile §1.12): a small frontmatter block
 * (`metadata.version` required) and the level-2 sections Capability, Inputs, Outputs, Protocol
 * and Rules. Resource links are rewritten to ids `get_resource` accepts. A file that breaks the
 * format gives undefined (the public server treats it as not found). Pure, no I/O.
 */

export interface TechniqueIo {
  id: string;
  description: string;
  default?: string;
  artifact?: { name: string };
  audience?: 'human' | 'agent';
  components?: Record<string, string>;
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

/** Sections of one heading level: `[title, body]` in order. */
function sections(text: string, level: number): [string, string][] {
  const marker = `${'#'.repeat(level)} `;
  const out: [string, string][] = [];
  let current: [string, string[]] | undefined;
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (!fenced && line.startsWith(marker)) {
      if (current) out.push([current[0], current[1].join('\n')]);
      current = [line.slice(marker.length).trim(), []];
    } else current?.[1].push(line);
  }
  if (current) out.push([current[0], current[1].join('\n')]);
  return out;
}

/** Text before the first heading of `level`, trimmed, paragraphs kept. */
function lead(text: string, level: number): string {
  const idx = text.search(new RegExp(`^${'#'.repeat(level)} `, 'm'));
  return (idx === -1 ? text : text.slice(0, idx)).trim();
}

const unquote = (s: string) => s.trim().replace(/^`(.*)`$/s, '$1');

function parseIo(body: string, kind: 'inputs' | 'outputs'): TechniqueIo[] | undefined {
  const items: TechniqueIo[] = [];
  for (const [id, text] of sections(body, 3)) {
    const io: TechniqueIo = { id, description: lead(text, 4) };
    for (const [name, value] of sections(text, 4)) {
      const v = unquote(value);
      if (kind === 'inputs' && name === 'default') io.default = v;
      else if (kind === 'outputs' && name === 'artifact') {
        if (!ARTIFACT_NAME.test(v)) return undefined;
        io.artifact = { name: v };
      } else if (kind === 'outputs' && name === 'audience') {
        if (v !== 'human' && v !== 'agent') return undefined;
        io.audience = v;
      } else {
        io.components ??= {};
        io.components[name] = value.trim();
      }
    }
    items.push(io);
  }
  return items;
}

function bullets(text: string): string[] {
  const steps: string[] = [];
  for (const line of text.split('\n')) {
    const b = /^\s*(?:[-*]|\d+\.)\s+(.*)$/.exec(line);
    if (b) steps.push(b[1] as string);
    else if (line.trim() !== '' && steps.length > 0 && /^\s/.test(line)) {
      steps[steps.length - 1] += ` ${line.trim()}`;
    }
  }
  return steps;
}

function parseProtocol(body: string): ProtocolBlock[] {
  const blocks = sections(body, 3);
  const toBlock = (text: string, title?: string): ProtocolBlock => {
    const steps = bullets(text);
    const body = steps.length > 0 ? steps : [text.trim()].filter(Boolean);
    // Title first: the order the public server renders.
    return title === undefined ? { steps: body } : { title, steps: body };
  };
  if (blocks.length === 0) return [toBlock(body)];
  return blocks.map(([title, text]) => toBlock(text, title.replace(/^\d+\.\s*/, '')));
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
    parts.set(key, value);
  }
  const capability = parts.get('capability')?.trim();
  if (!capability) return undefined;
  const technique: Technique = { id, version, capability };
  const inputs = parts.get('inputs');
  if (inputs !== undefined) {
    const parsed = parseIo(inputs, 'inputs');
    if (parsed === undefined) return undefined;
    technique.inputs = parsed;
  }
  const outputs = parts.get('outputs');
  if (outputs !== undefined) {
    const parsed = parseIo(outputs, 'outputs');
    if (parsed === undefined) return undefined;
    technique.outputs = parsed;
  }
  const protocol = parts.get('protocol');
  if (protocol !== undefined) technique.protocol = parseProtocol(protocol);
  const rules = parts.get('rules');
  if (rules !== undefined) {
    technique.rules = Object.fromEntries(sections(rules, 3).map(([k, v]) => [k, v.trim()]));
  }
  return technique;
}

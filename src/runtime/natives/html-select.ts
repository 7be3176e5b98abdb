/**
 * The selectors `html.get_element(s)` take: a small, predictable subset of CSS, matched over the
 * plain `{tag, attrs, text, children}` nodes `html.parse` returns.
 *
 *   selectors = selector { "," selector }
 *   selector  = compound { [ ">" ] compound }          (space = descendant, ">" = child)
 *   compound  = [ tag | "*" ] { "#" id | "." class | "[" attr [ op value ] "]" }
 *   op        = "=" | "~=" | "^=" | "$=" | "*="          (value: bare word or quoted string)
 *
 * Tag and attribute names match case-insensitively; values case-sensitively. Pseudo-classes,
 * sibling combinators and namespaces are refused with a message, never silently ignored.
 * Pure: no I/O.
 */
import { isObject, type MhlObject, type Value } from '../interpreter/values.js';

type AttrOp = '' | '=' | '~=' | '^=' | '$=' | '*=';

interface AttrTest {
  readonly name: string;
  readonly op: AttrOp;
  readonly value: string;
}

interface Compound {
  readonly tag: string | undefined;
  readonly attrs: readonly AttrTest[];
  /** How this compound relates to the one before it. */
  readonly combinator: 'descendant' | 'child';
}

/** One selector: compounds left to right; the last one is the element that matches. */
type Selector = readonly Compound[];

/** Thrown for a selector outside the subset; the caller turns it into a `NATIVE` error. */
export class SelectorError extends Error {}

/**
 * The deepest element nesting the html natives take (Chromium's parser stops nesting at 512
 * as well; real pages stay far below). A parsed page is ordinary MHL data, and printing,
 * comparing, checkpointing and serialising it walk it recursively: the bound keeps a hostile
 * page from overflowing the stack there.
 */
export const MAX_HTML_DEPTH = 512;

/** Thrown for a tree past {@link MAX_HTML_DEPTH}; the caller turns it into a `NATIVE` error. */
export class HtmlLimitError extends Error {}

/** The error for `what` ("the page", "the tree") nesting past the limit. */
export function tooDeep(what: string): HtmlLimitError {
  return new HtmlLimitError(
    `${what} nests elements deeper than ${MAX_HTML_DEPTH} levels (the limit of the html natives)`,
  );
}

const NAME = /^[A-Za-z_][\w-]*/;
const cache = new Map<string, readonly Selector[]>();

/** Parses a selector list (cached: workflows reuse a handful of selectors). */
export function parseSelectors(text: string): readonly Selector[] {
  let parsed = cache.get(text);
  if (!parsed) {
    parsed = text.split(',').map((part) => parseSelector(part.trim(), text));
    if (cache.size > 256) cache.clear();
    cache.set(text, parsed);
  }
  return parsed;
}

function parseSelector(text: string, whole: string): Selector {
  if (text === '') throw new SelectorError(`empty selector in "${whole}"`);
  const compounds: Compound[] = [];
  let rest = text;
  let combinator: Compound['combinator'] = 'descendant';
  while (rest !== '') {
    const [compound, after] = parseCompound(rest, combinator, whole);
    compounds.push(compound);
    const gap = /^\s*(>)?\s*/.exec(after);
    rest = after.slice(gap?.[0].length ?? 0);
    combinator = gap?.[1] ? 'child' : 'descendant';
    if (gap?.[1] && rest === '') throw new SelectorError(`"${whole}" ends with ">"`);
  }
  return compounds;
}

function parseCompound(
  text: string,
  combinator: Compound['combinator'],
  whole: string,
): [Compound, string] {
  let rest = text;
  let tag: string | undefined;
  const attrs: AttrTest[] = [];
  const tagMatch = /^(\*|[A-Za-z][\w-]*)/.exec(rest);
  if (tagMatch) {
    tag = tagMatch[1] === '*' ? undefined : tagMatch[1]?.toLowerCase();
    rest = rest.slice(tagMatch[0].length);
  }
  for (;;) {
    const c = rest[0];
    if (c === '#' || c === '.') {
      const name = NAME.exec(rest.slice(1))?.[0];
      if (!name) throw new SelectorError(`"${c}" needs a name in "${whole}"`);
      attrs.push(
        c === '#' ? { name: 'id', op: '=', value: name } : { name: 'class', op: '~=', value: name },
      );
      rest = rest.slice(1 + name.length);
    } else if (c === '[') {
      const m =
        /^\[\s*([A-Za-z_][\w:-]*)\s*(?:([~^$*]?=)\s*(?:"([^"]*)"|'([^']*)'|([^\]\s]+))\s*)?\]/.exec(
          rest,
        );
      if (!m) throw new SelectorError(`malformed attribute test in "${whole}"`);
      const op = (m[2] ?? '') as AttrOp;
      attrs.push({ name: (m[1] ?? '').toLowerCase(), op, value: m[3] ?? m[4] ?? m[5] ?? '' });
      rest = rest.slice(m[0].length);
    } else break;
  }
  if (rest === text) {
    throw new SelectorError(
      `unsupported selector syntax at "${rest.slice(0, 12)}" in "${whole}" (supported: tag, *, #id, .class, [attr], [attr=v], descendant, >, and commas)`,
    );
  }
  if (rest !== '' && !/^[\s>]/.test(rest)) {
    throw new SelectorError(
      `unsupported selector syntax at "${rest.slice(0, 12)}" in "${whole}" (pseudo-classes and sibling combinators are not supported)`,
    );
  }
  return [{ tag, attrs, combinator }, rest];
}

/** Whether a value is an element node (a `#text` node or anything else is not). */
export function isElement(v: Value | undefined): v is MhlObject {
  return isObject(v) && typeof v['tag'] === 'string' && !v['tag'].startsWith('#');
}

/** The element children of a node. */
export function elementChildren(node: MhlObject): MhlObject[] {
  const children = node['children'];
  return Array.isArray(children) ? children.filter(isElement) : [];
}

function attribute(node: MhlObject, name: string): string | undefined {
  const attrs = node['attrs'];
  if (!isObject(attrs)) return undefined;
  for (const [k, v] of Object.entries(attrs))
    if (k.toLowerCase() === name && typeof v === 'string') return v;
  return undefined;
}

function matchesAttr(node: MhlObject, test: AttrTest): boolean {
  const v = attribute(node, test.name);
  if (v === undefined) return false;
  switch (test.op) {
    case '':
      return true;
    case '=':
      return v === test.value;
    case '~=':
      return v.split(/\s+/).includes(test.value);
    case '^=':
      return test.value !== '' && v.startsWith(test.value);
    case '$=':
      return test.value !== '' && v.endsWith(test.value);
    case '*=':
      return test.value !== '' && v.includes(test.value);
  }
}

function matchesCompound(node: MhlObject, c: Compound): boolean {
  if (c.tag !== undefined && String(node['tag']).toLowerCase() !== c.tag) return false;
  return c.attrs.every((t) => matchesAttr(node, t));
}

/** What one node of the walk knows: which compounds it matches, and which it or an ancestor does. */
interface Frame {
  readonly kids: readonly MhlObject[];
  next: number;
  /** `matched[i]`: this node matches compound `i` with the compounds before it satisfied above. */
  readonly matched: Uint8Array;
  /** `below[i]`: this node or an ancestor has `matched[i]`, so a descendant may continue from it. */
  readonly below: Uint8Array;
  readonly depth: number;
}

/**
 * The descendants of `root` (not `root` itself) that match any of `selectors`, in document
 * order; stops after `limit` matches. `root` may match an ancestor part of a selector (`div p`
 * from a div finds its paragraphs); nodes above `root` are not known and take no part.
 *
 * One pass, left to right: each node works out which compounds it matches from its parent's
 * frame only (`>` needs the parent's `matched`, a space its `below`), so matching costs
 * O(nodes × compounds) whatever the depth, and the walk keeps its own stack, not the call stack.
 * Throws {@link HtmlLimitError} for a tree deeper than {@link MAX_HTML_DEPTH}.
 */
export function select(
  root: MhlObject,
  selectors: readonly Selector[],
  limit: number,
): MhlObject[] {
  const flat = selectors.flat();
  const first = new Uint8Array(flat.length);
  const last = new Uint8Array(flat.length);
  let at = 0;
  for (const sel of selectors) {
    first[at] = 1;
    at += sel.length;
    last[at - 1] = 1;
  }
  const out: MhlObject[] = [];
  const frame = (node: MhlObject, parent: Frame | undefined): [Frame, boolean] => {
    const depth = (parent?.depth ?? 0) + 1;
    if (depth > MAX_HTML_DEPTH) throw tooDeep('the tree');
    const matched = new Uint8Array(flat.length);
    const below = new Uint8Array(flat.length);
    let hit = false;
    for (let i = 0; i < flat.length; i++) {
      const c = flat[i] as Compound;
      const open =
        first[i] === 1 ||
        (parent !== undefined &&
          (c.combinator === 'child' ? parent.matched[i - 1] : parent.below[i - 1]) === 1);
      if (open && matchesCompound(node, c)) {
        matched[i] = 1;
        if (last[i] === 1) hit = true;
      }
      below[i] = matched[i] === 1 || parent?.below[i] === 1 ? 1 : 0;
    }
    return [{ kids: elementChildren(node), next: 0, matched, below, depth }, hit];
  };
  const stack: Frame[] = [frame(root, undefined)[0]];
  while (stack.length > 0 && out.length < limit) {
    const top = stack[stack.length - 1] as Frame;
    const child = top.kids[top.next++];
    if (child === undefined) {
      stack.pop();
      continue;
    }
    const [f, hit] = frame(child, top);
    if (hit) out.push(child);
    stack.push(f);
  }
  return out;
}

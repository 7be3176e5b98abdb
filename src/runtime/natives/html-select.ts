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

/** Whether the element at the end of `path` (root first) matches `sel`, right to left. */
function matches(path: readonly MhlObject[], sel: Selector): boolean {
  const last = sel.length - 1;
  const node = path[path.length - 1];
  if (!node || !matchesCompound(node, sel[last] as Compound)) return false;
  return matchesFrom(path, path.length - 2, sel, last - 1, (sel[last] as Compound).combinator);
}

function matchesFrom(
  path: readonly MhlObject[],
  at: number,
  sel: Selector,
  index: number,
  combinator: Compound['combinator'],
): boolean {
  if (index < 0) return true;
  const c = sel[index] as Compound;
  if (combinator === 'child') {
    const node = path[at];
    return (
      node !== undefined &&
      matchesCompound(node, c) &&
      matchesFrom(path, at - 1, sel, index - 1, c.combinator)
    );
  }
  for (let i = at; i >= 0; i--) {
    const node = path[i] as MhlObject;
    if (matchesCompound(node, c) && matchesFrom(path, i - 1, sel, index - 1, c.combinator))
      return true;
  }
  return false;
}

/**
 * The descendants of `root` (not `root` itself) that match any of `selectors`, in document
 * order; stops after `limit` matches. `root` may match an ancestor part of a selector (`div p`
 * from a div finds its paragraphs); nodes above `root` are not known and take no part.
 */
export function select(
  root: MhlObject,
  selectors: readonly Selector[],
  limit: number,
): MhlObject[] {
  const out: MhlObject[] = [];
  const path: MhlObject[] = [root];
  const walk = (node: MhlObject): boolean => {
    for (const child of elementChildren(node)) {
      path.push(child);
      if (selectors.some((s) => matches(path, s))) out.push(child);
      if (out.length >= limit || walk(child)) return true;
      path.pop();
    }
    return false;
  };
  walk(root);
  return out;
}

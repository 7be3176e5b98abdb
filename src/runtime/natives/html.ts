/**
 * The `html` native namespace: `parse`, `get_element`, `get_elements`, `get_attribute`,
 * `get_text` and `to_html`, over plain `{tag, attrs, text, children}` objects (language digest
 * §8), so a parsed page is ordinary MHL data: it prints, compares, checkpoints and crosses steps.
 *
 * Parsing and serialising are parse5's (the WHATWG algorithm browsers use), loaded on first use
 * so runs that never touch HTML don't pay for it. The node shape:
 *   element   {tag: "a", attrs: {href: "…"}, text: "<its own text>", children: [nodes…]}
 *   text node {tag: "#text", attrs: {}, text: "…", children: []}
 * `text` of an element is its direct text (the text nodes among its children, joined and
 * trimmed); `get_text` gives the whole subtree's. Comments and the doctype are dropped.
 * Selectors are described in html-select.ts. No I/O besides loading parse5.
 */
import type { DefaultTreeAdapterTypes } from 'parse5';
import {
  type CallArgs,
  isObject,
  type MhlObject,
  newObject,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import { defineNamespace, nativeError, readArgs } from './args.js';
import {
  HtmlLimitError,
  isElement,
  MAX_HTML_DEPTH,
  parseSelectors,
  SelectorError,
  select,
  tooDeep,
} from './html-select.js';

type Parse5 = typeof import('parse5');
type P5Node = DefaultTreeAdapterTypes.ChildNode;
type P5Parent = DefaultTreeAdapterTypes.ParentNode;

/** Cap on the HTML text `parse` accepts (a saved page is far smaller). */
export const MAX_HTML_BYTES = 16 * 1024 * 1024;

/** Elements whose text is code or markup, not page text: `get_text` skips them. */
const NOT_TEXT = new Set(['script', 'style', 'template', 'noscript']);

let parse5: Promise<Parse5> | undefined;
const loadParse5 = (): Promise<Parse5> => {
  parse5 ??= import('parse5');
  return parse5;
};

function textNode(text: string): MhlObject {
  return newObject([
    ['tag', '#text'],
    ['attrs', newObject()],
    ['text', text],
    ['children', []],
  ]);
}

/**
 * Converts parse5 nodes to plain nodes, iteratively (a hostile page may nest very deep; parse5
 * itself builds any depth without recursing), refusing a page past MAX_HTML_DEPTH.
 */
function fromParse5(root: DefaultTreeAdapterTypes.Element): MhlObject {
  const convert = (el: DefaultTreeAdapterTypes.Element): { node: MhlObject; kids: Value[] } => {
    const kids: Value[] = [];
    const node = newObject([
      ['tag', el.tagName],
      ['attrs', newObject(el.attrs.map((a) => [a.name, a.value] as const))],
      ['text', ''],
      ['children', kids],
    ]);
    return { node, kids };
  };
  const top = convert(root);
  const stack: { el: P5Parent; node: MhlObject; kids: Value[]; depth: number }[] = [
    { el: root, ...top, depth: 1 },
  ];
  while (stack.length > 0) {
    const { el, node, kids, depth } = stack.pop() as (typeof stack)[number];
    const source: P5Node[] =
      el.nodeName === 'template'
        ? (el as DefaultTreeAdapterTypes.Template).content.childNodes
        : el.childNodes;
    let own = '';
    for (const child of source) {
      if (child.nodeName === '#text') {
        const value = (child as DefaultTreeAdapterTypes.TextNode).value;
        own += value;
        kids.push(textNode(value));
      } else if ('tagName' in child) {
        if (depth >= MAX_HTML_DEPTH) throw tooDeep('the page');
        const c = convert(child);
        kids.push(c.node);
        stack.push({ el: child, ...c, depth: depth + 1 });
      }
    }
    node['text'] = own.trim();
  }
  return top.node;
}

/** The node a call works on: a node object, or HTML text (parsed on the spot). */
async function nodeArg(op: string, v: Value): Promise<MhlObject> {
  if (typeof v === 'string') return parseHtml(op, v);
  if (isElement(v)) return v;
  throw nativeError(op, `expects an element from html.parse (or HTML text), got ${typeOf(v)}`);
}

async function parseHtml(op: string, text: string): Promise<MhlObject> {
  if (Buffer.byteLength(text) > MAX_HTML_BYTES)
    throw nativeError(op, `HTML text exceeds ${MAX_HTML_BYTES / 1024 / 1024} MiB`);
  const { parse } = await loadParse5();
  const doc = parse(text);
  const html = doc.childNodes.find(
    (n): n is DefaultTreeAdapterTypes.Element => 'tagName' in n && n.tagName === 'html',
  );
  if (!html) throw nativeError(op, 'the document has no root element');
  return native(op, () => fromParse5(html));
}

/** Runs `fn`, turning a selector or depth error into `NATIVE` for `op`. */
function native<T>(op: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SelectorError || e instanceof HtmlLimitError) throw nativeError(op, e.message);
    throw e;
  }
}

function selectors(op: string, text: string) {
  return native(op, () => parseSelectors(text));
}

/** Elements that break a line when rendered: their edges separate words in `get_text`. */
const BLOCK = new Set(
  'address article aside blockquote br dd div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol option p pre section table tbody td tfoot th thead title tr ul'.split(
    ' ',
  ),
);

/** Marks the end of a block element on the `textOf` stack. */
const EDGE = Symbol('block edge');

/**
 * Subtree text: text nodes in document order, a space at the edges of block elements and `<br>`,
 * whitespace runs collapsed to one space, script/style/template/noscript skipped.
 */
export function textOf(node: MhlObject): string {
  const parts: string[] = [];
  const stack: ([Value, number] | typeof EDGE)[] = [[node, 1]];
  while (stack.length > 0) {
    const top = stack.pop() as [Value, number] | typeof EDGE;
    if (top === EDGE) {
      parts.push(' ');
      continue;
    }
    const [n, depth] = top;
    if (!isObject(n)) continue;
    if (n['tag'] === '#text') {
      parts.push(String(n['text'] ?? ''));
      continue;
    }
    const tag = String(n['tag']).toLowerCase();
    if (NOT_TEXT.has(tag)) continue;
    // Only a node built by hand gets here past the limit (or one that contains itself).
    if (depth > MAX_HTML_DEPTH) throw tooDeep('the tree');
    const block = BLOCK.has(tag);
    if (block) {
      parts.push(' ');
      stack.push(EDGE);
    }
    const children = n['children'];
    if (Array.isArray(children))
      for (let i = children.length - 1; i >= 0; i--) stack.push([children[i] as Value, depth + 1]);
  }
  return parts.join('').replace(/\s+/g, ' ').trim();
}

/**
 * Rebuilds parse5 nodes from plain ones and serialises them (escaping, void elements). parse5's
 * serialiser recurses once per level, which MAX_HTML_DEPTH (checked in `build`) keeps shallow.
 */
async function toHtml(op: string, nodes: readonly Value[]): Promise<string> {
  const { serializeOuter, defaultTreeAdapter: a, html } = await loadParse5();
  const ns = html.NS.HTML;
  const out: string[] = [];
  for (const root of nodes) {
    if (!isObject(root) || typeof root['tag'] !== 'string')
      throw nativeError(op, `expects nodes from html.parse, got ${typeOf(root)}`);
    if (root['tag'] === '#text') {
      const holder = a.createElement('span', ns, []);
      a.insertText(holder, String(root['text'] ?? ''));
      out.push(serializeOuter(holder).slice('<span>'.length, -'</span>'.length));
      continue;
    }
    out.push(serializeOuter(native(op, () => build(op, root, a, ns))));
  }
  return out.join('');
}

function build(
  op: string,
  root: MhlObject,
  a: Parse5['defaultTreeAdapter'],
  ns: Parse5['html']['NS']['HTML'],
): DefaultTreeAdapterTypes.Element {
  const make = (n: MhlObject) => {
    const attrs = isObject(n['attrs'])
      ? Object.entries(n['attrs']).map(([name, v]) => ({ name, value: String(v ?? '') }))
      : [];
    const tag = String(n['tag']);
    if (!/^[A-Za-z][\w:-]*$/.test(tag)) throw nativeError(op, `"${tag}" is not a tag name`);
    return a.createElement(tag, ns, attrs);
  };
  const top = make(root);
  const stack: [MhlObject, DefaultTreeAdapterTypes.Element, number][] = [[root, top, 1]];
  while (stack.length > 0) {
    const [n, el, depth] = stack.pop() as (typeof stack)[number];
    const children = Array.isArray(n['children']) ? n['children'] : [];
    // A node written by hand may have `text` and no children: its text is its content.
    if (children.length === 0 && typeof n['text'] === 'string' && n['text'] !== '')
      a.insertText(el, n['text']);
    for (const c of children) {
      if (!isObject(c)) continue;
      if (c['tag'] === '#text') a.insertText(el, String(c['text'] ?? ''));
      else {
        if (depth >= MAX_HTML_DEPTH) throw tooDeep('the tree');
        const child = make(c);
        a.appendChild(el, child);
        stack.push([c, child, depth + 1]);
      }
    }
  }
  return top;
}

const NODE_AND_SELECTOR = { positional: ['node', 'selector'] } as const;

/**
 * The `html` namespace. Raises `NATIVE` for a bad argument or selector; no operation waits on
 * anything but loading the parser.
 */
export const HTML_NAMESPACE = defineNamespace({
  parse: async (args: CallArgs) => {
    const a = readArgs('html.parse', args, { positional: ['text'] });
    return parseHtml(a.op, a.string('text'));
  },
  get_element: async (args: CallArgs) => {
    const a = readArgs('html.get_element', args, NODE_AND_SELECTOR);
    const root = await nodeArg(a.op, a.value('node'));
    const sel = selectors(a.op, a.string('selector'));
    return native(a.op, () => select(root, sel, 1)[0] ?? null);
  },
  get_elements: async (args: CallArgs) => {
    const a = readArgs('html.get_elements', args, NODE_AND_SELECTOR);
    const root = await nodeArg(a.op, a.value('node'));
    const sel = selectors(a.op, a.string('selector'));
    return native(a.op, () => select(root, sel, Number.POSITIVE_INFINITY));
  },
  get_attribute: async (args: CallArgs) => {
    const a = readArgs('html.get_attribute', args, { positional: ['node', 'name'] });
    const node = await nodeArg(a.op, a.value('node'));
    const name = a.string('name').toLowerCase();
    const attrs = node['attrs'];
    if (!isObject(attrs)) return null;
    const hit = Object.entries(attrs).find(([k]) => k.toLowerCase() === name);
    return hit && typeof hit[1] === 'string' ? hit[1] : null;
  },
  get_text: async (args: CallArgs) => {
    const a = readArgs('html.get_text', args, { positional: ['node'] });
    const node = await nodeArg(a.op, a.value('node'));
    return native(a.op, () => textOf(node));
  },
  to_html: async (args: CallArgs) => {
    const a = readArgs('html.to_html', args, { positional: ['node'] });
    const v = a.value('node');
    return toHtml(a.op, Array.isArray(v) ? v : [v]);
  },
});

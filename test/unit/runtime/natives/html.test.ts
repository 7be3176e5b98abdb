/**
 * The `html` namespace (spec: mhl-language.md §8): parse5 trees as plain `{tag, attrs, text,
 * children}` nodes, the selector subset of html-select.ts, text extraction and serialisation.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isObject,
  type MhlObject,
  newObject,
  toPlain,
  type Value,
} from '../../../../src/runtime/interpreter/values.js';
import { HTML_NAMESPACE } from '../../../../src/runtime/natives/html.js';
import { MAX_HTML_DEPTH } from '../../../../src/runtime/natives/html-select.js';
import { call, isNativeError, testContext } from './native-context.js';

const ctx = testContext(process.cwd());
const html = (op: string, ...positional: Value[]): Promise<Value> =>
  call(HTML_NAMESPACE, op, ctx, positional);

const PAGE = `<!doctype html><title>T</title>
<div id="a" class="box main"><p>One <b>bold</b> word</p><p class="x">Two</p>
<section><p lang="en-GB">Three</p><span data-k="v w">s</span></section></div>
<ul><li>1</li><li>2</li></ul><script>var x = "<p>no</p>";</script>`;

async function doc(): Promise<MhlObject> {
  const d = await html('parse', PAGE);
  assert.ok(isObject(d));
  return d;
}

async function texts(selector: string): Promise<string[]> {
  const found = await html('get_elements', await doc(), selector);
  assert.ok(Array.isArray(found));
  return Promise.all(found.map(async (n) => String(await html('get_text', n))));
}

describe('html.parse', () => {
  it('returns the root element as plain nodes with text children', async () => {
    const d = await doc();
    assert.equal(d['tag'], 'html');
    const p = (await html('get_element', d, 'p')) as MhlObject;
    assert.deepEqual(toPlain(p), {
      tag: 'p',
      attrs: {},
      text: 'One  word',
      children: [
        { tag: '#text', attrs: {}, text: 'One ', children: [] },
        {
          tag: 'b',
          attrs: {},
          text: 'bold',
          children: [{ tag: '#text', attrs: {}, text: 'bold', children: [] }],
        },
        { tag: '#text', attrs: {}, text: ' word', children: [] },
      ],
    });
  });

  it('refuses a value that is not text', async () => {
    await assert.rejects(html('parse', 3), isNativeError);
  });
});

describe('html selectors', () => {
  const cases: [string, string[]][] = [
    ['p', ['One bold word', 'Two', 'Three']],
    ['#a > p', ['One bold word', 'Two']],
    ['div p', ['One bold word', 'Two', 'Three']],
    ['div > section > p', ['Three']],
    ['.x', ['Two']],
    ['div.box.main > p.x', ['Two']],
    ['[lang]', ['Three']],
    ['[lang^=en]', ['Three']],
    ['[lang$="GB"]', ['Three']],
    ['[lang*=n-G]', ['Three']],
    ["[data-k~='w']", ['s']],
    ['[data-k=v]', []],
    ['LI', ['1', '2']],
    ['b, li', ['bold', '1', '2']],
    ['ul *', ['1', '2']],
    ['body > div p', ['One bold word', 'Two', 'Three']],
    ['body > p', []],
    ['div p > b', ['bold']],
    ['html div > section span', ['s']],
    ['section > p, #a > p b', ['bold', 'Three']],
  ];
  for (const [selector, expected] of cases) {
    it(`matches ${selector}`, async () => {
      assert.deepEqual(await texts(selector), expected);
    });
  }

  it('returns the first match or null from get_element', async () => {
    const d = await doc();
    assert.equal(await html('get_text', await html('get_element', d, 'li')), '1');
    assert.equal(await html('get_element', d, 'table'), null);
  });

  it('searches below the node it is given', async () => {
    const section = await html('get_element', await doc(), 'section');
    assert.deepEqual(
      ((await html('get_elements', section, 'p')) as MhlObject[]).map((n) => n['text']),
      ['Three'],
    );
  });

  for (const bad of ['p:first-child', 'p + p', 'p ~ p', '', 'a,', 'p >', '[x', '#']) {
    it(`refuses ${JSON.stringify(bad)}`, async () => {
      await assert.rejects(html('get_elements', await doc(), bad), isNativeError);
    });
  }
});

describe('html attributes, text and serialisation', () => {
  it('reads attributes case-insensitively; a missing one is null', async () => {
    const span = await html('get_element', await doc(), 'span');
    assert.equal(await html('get_attribute', span, 'DATA-K'), 'v w');
    assert.equal(await html('get_attribute', span, 'href'), null);
  });

  it('leaves script text out of get_text and collapses whitespace', async () => {
    const text = String(await html('get_text', await doc()));
    assert.ok(!text.includes('no'));
    assert.ok(text.startsWith('T One bold word Two Three'));
  });

  it('serialises nodes back to HTML with escaping and void elements', async () => {
    const d = await html('parse', '<p class="a&quot;b">x &lt; y<br>z</p>');
    const p = await html('get_element', d, 'p');
    assert.equal(await html('to_html', p), '<p class="a&quot;b">x &lt; y<br>z</p>');
    const items = await html('get_elements', await doc(), 'li');
    assert.equal(await html('to_html', items), '<li>1</li><li>2</li>');
  });

  it('accepts HTML text wherever a node is expected', async () => {
    assert.equal(await html('get_text', '<p>a <i>b</i></p>'), 'a b');
    assert.equal(await html('get_attribute', '<html lang="pt">', 'lang'), 'pt');
  });

  it('refuses a value that is not a node', async () => {
    await assert.rejects(html('get_text', 3), isNativeError);
    await assert.rejects(
      html('to_html', [{ tag: 'not a tag' } as unknown as Value]),
      isNativeError,
    );
  });
});

describe('html on deep and wide pages', () => {
  const nested = (tag: string, n: number) => `${`<${tag}>`.repeat(n)}x`;
  /** A node tree `n` elements deep built by hand, iteratively (it never went through parse). */
  const handBuilt = (n: number): MhlObject => {
    const make = (children: Value[]): MhlObject =>
      newObject([
        ['tag', 'b'],
        ['attrs', newObject()],
        ['text', ''],
        ['children', children],
      ]);
    let node = make([]);
    for (let i = 1; i < n; i++) node = make([node]);
    return node;
  };

  for (const depth of [30_000, 100_000]) {
    it(`refuses a ${depth}-deep page with NATIVE in every operation, not a stack overflow`, async () => {
      const page = nested('b', depth);
      for (const [op, ...rest] of [
        ['parse'],
        ['get_elements', 'b b'],
        ['get_element', 'div > b'],
        ['get_text'],
        ['to_html'],
      ] as const)
        await assert.rejects(html(op, page, ...rest), isNativeError, op);
    });

    it(`refuses a ${depth}-deep hand-built tree with NATIVE`, async () => {
      const tree = handBuilt(depth);
      await assert.rejects(html('get_elements', tree, 'b b'), isNativeError);
      await assert.rejects(html('get_text', tree), isNativeError);
      await assert.rejects(html('to_html', tree), isNativeError);
    });
  }

  it(`takes a page exactly ${MAX_HTML_DEPTH} elements deep and refuses one more`, async () => {
    // html and body are the first two levels.
    const d = await html('parse', nested('div', MAX_HTML_DEPTH - 2));
    assert.ok(isObject(d));
    const divs = await html('get_elements', d, 'body > div div');
    assert.ok(Array.isArray(divs));
    assert.equal(divs.length, MAX_HTML_DEPTH - 3);
    assert.equal(await html('get_text', d), 'x');
    const back = await html('to_html', d);
    assert.equal(typeof back === 'string' && back.split('<div>').length - 1, MAX_HTML_DEPTH - 2);
    await assert.rejects(html('parse', nested('div', MAX_HTML_DEPTH - 1)), isNativeError);
  });

  it('matches in one pass on a page both deep and wide', async () => {
    // 500 levels of <b> over 20,000 <i>: re-scanning the ancestors of each <i> for a <div> would
    // be 10 million compound tests; one pass is 20,500 nodes times the selector's compounds.
    const page = `${'<b>'.repeat(500)}${'<i></i>'.repeat(20_000)}`;
    const d = await html('parse', page);
    assert.ok(isObject(d));
    assert.deepEqual(await html('get_elements', d, 'div i'), []);
    const found = await html('get_elements', d, 'b > i');
    assert.ok(Array.isArray(found));
    assert.equal(found.length, 20_000);
  });

  it('takes an element with 50,000 attributes', async () => {
    const attrs = Array.from({ length: 50_000 }, (_, i) => ` a${i}="${i}"`).join('');
    const d = await html('parse', `<p${attrs}>t</p>`);
    assert.ok(isObject(d));
    const p = await html('get_element', d, '[a49999="49999"]');
    assert.ok(isObject(p));
    assert.equal(await html('get_attribute', p, 'A123'), '123');
    const back = await html('to_html', p);
    assert.ok(typeof back === 'string' && back.endsWith(' a49999="49999">t</p>'));
  });
});

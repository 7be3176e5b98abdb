/**
 * The `html` namespace (spec: mhl-language.md §8): parse5 trees as plain `{tag, attrs, text,
 * children}` nodes, the selector subset of html-select.ts, text extraction and serialisation.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isObject,
  type MhlObject,
  toPlain,
  type Value,
} from '../../../../src/runtime/interpreter/values.js';
import { HTML_NAMESPACE } from '../../../../src/runtime/natives/html.js';
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

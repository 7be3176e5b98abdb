import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { buildCatalog, type Catalog, loadCatalog } from '../../../src/catalog/index.js';
import { memoryHost } from '../../../src/lang/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { RpcError } from '../../../src/protocol/index.js';
import { Admission } from '../../../src/runs/index.js';
import { EnumValue } from '../../../src/runtime/index.js';
import { completionMethods, workflowTemplates } from '../../../src/surfaces/completion.js';
import { loggingMethods, outputEntry } from '../../../src/surfaces/logging.js';
import type { MethodEntry } from '../../../src/surfaces/methods.js';
import {
  convertArguments,
  PromptArgumentError,
  promptArguments,
} from '../../../src/surfaces/prompt-arguments.js';
import { promptMethods } from '../../../src/surfaces/prompts.js';
import type { ResourceProvider } from '../../../src/surfaces/resources.js';
import { tempDir } from '../../helpers/cli.js';
import { requestContext } from './request-context.js';

function fixture(): Catalog {
  const loaded = loadCatalog(resolve('test/fixtures/prompts'));
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.problems));
  return loaded.catalog;
}

const CATALOG = fixture();
const review = () => CATALOG.prompts.get('Review') ?? assert.fail('no Review');

const CTX = requestContext();

function handler(entries: MethodEntry[], method: string) {
  const found = entries.find((e) => e.method === method);
  assert.ok(found, method);
  return (params: Record<string, unknown>) => found.handler(params, CTX);
}

async function refusal(promise: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  await assert.rejects(promise, RpcError);
  try {
    await promise;
  } catch (error) {
    return { code: (error as RpcError).code, data: (error as RpcError).data };
  }
  return assert.fail('no refusal');
}

const surface = promptMethods({
  catalog: CATALOG,
  logger: createLogger(),
  defaultCwd: resolve('.'),
  childEnv: {},
  env: {},
  cacheRoot: tempDir('mhl-prompts-cache-'),
  defaultTimeoutMs: 10_000,
  admission: new Admission(4),
});

describe('catalog prompts', () => {
  it('collects the prompts of every served file, with frontmatter title and description', () => {
    assert.deepEqual([...CATALOG.prompts.keys()].sort(), ['Note', 'Review', 'Summarize']);
    const summarize = CATALOG.prompts.get('Summarize');
    assert.equal(summarize?.title, 'Summarize a topic');
    assert.equal(summarize?.description, 'A short summary of a topic for an audience');
  });

  it('refuses two prompts of one name at load, naming both files relative to the root', () => {
    const files = {
      '/pack/a.mh': 'prompt P() { "a" }\npipeline A { step S { log("x") } }\n',
      '/pack/b.mh': 'prompt P() { "b" }\n',
    };
    const host = memoryHost(new Map(Object.entries(files)));
    const loaded = buildCatalog({ root: '/pack', files: Object.keys(files), host, source: 'pack' });
    assert.equal(loaded.ok, false);
    if (loaded.ok) return;
    assert.deepEqual(
      loaded.problems.map((p) => [p.code, ...p.files]),
      [['DUPLICATE_PROMPT', '/pack/a.mh', '/pack/b.mh']],
    );
    assert.doesNotMatch(loaded.problems[0]?.message ?? '', /\/pack\//);
  });
});

describe('prompt arguments', () => {
  it('lists typed parameters in order, required when they have no default', () => {
    assert.deepEqual(
      promptArguments(review()).map((a) => [a.name, a.required, a.description]),
      [
        ['file', true, 'text'],
        ['lines', true, 'a whole number'],
        ['strict', false, 'true or false (optional)'],
        ['level', false, 'one of Strict, Relaxed (optional)'],
      ],
    );
  });

  it('converts strings to the declared types', () => {
    const values = convertArguments(review(), {
      file: 'a',
      lines: '7',
      strict: 'true',
      level: 'Relaxed',
    });
    assert.equal(values.get('lines'), 7);
    assert.equal(values.get('strict'), true);
    assert.ok(values.get('level') instanceof EnumValue);
    assert.equal(values.has('missing'), false);
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ['a fraction for an int', { file: 'a', lines: '1.5' }, 'lines'],
    ['text for an int', { file: 'a', lines: 'x' }, 'lines'],
    ['yes for a bool', { file: 'a', lines: '1', strict: 'yes' }, 'strict'],
    ['an unknown variant', { file: 'a', lines: '1', level: 'Loose' }, 'level'],
    ['a number value', { file: 'a', lines: 1 }, 'lines'],
    ['a missing required one', { lines: '1' }, 'file'],
    ['an undeclared one', { file: 'a', lines: '1', extra: 'x' }, 'extra'],
  ];
  for (const [what, sent, argument] of cases) {
    it(`refuses ${what}, naming it`, () => {
      assert.throws(
        () => convertArguments(review(), sent),
        (e: unknown) => e instanceof PromptArgumentError && e.argument === argument,
      );
    });
  }
});

describe('prompts/list and prompts/get', () => {
  it('lists every prompt sorted by name', async () => {
    const list = await handler(surface, 'prompts/list')({});
    const prompts = list['prompts'] as { name: string; title?: string }[];
    assert.deepEqual(
      prompts.map((p) => p.name),
      ['Note', 'Review', 'Summarize'],
    );
    await assert.rejects(handler(surface, 'prompts/list')({ cursor: 'x' }), RpcError);
  });

  it('renders inline and file prompts, defaults filled in', async () => {
    const get = handler(surface, 'prompts/get');
    const inline = await get({ name: 'Review', arguments: { file: 'x.ts', lines: '2' } });
    assert.deepEqual(inline['messages'], [
      {
        role: 'user',
        content: { type: 'text', text: 'Review x.ts (2 lines) in Strict mode; strict: false.' },
      },
    ]);
    const file = await get({ name: 'Summarize', arguments: { topic: 't', audience: 'kids' } });
    assert.equal(file['description'], 'A short summary of a topic for an audience');
    assert.match(JSON.stringify(file['messages']), /Summarize t for kids in three sentences\./);
  });

  it('answers -32602 for an unknown prompt, a bad name and bad arguments', async () => {
    const get = handler(surface, 'prompts/get');
    assert.equal((await refusal(get({ name: 'Nope' }))).code, -32602);
    assert.equal((await refusal(get({}))).code, -32602);
    assert.equal((await refusal(get({ name: 'Note', arguments: [] }))).code, -32602);
    const bad = await refusal(get({ name: 'Review', arguments: { file: 'a', lines: 'x' } }));
    assert.deepEqual(bad, { code: -32602, data: { field: 'arguments.lines', argument: 'lines' } });
  });
});

describe('completion/complete', () => {
  const runs: ResourceProvider = {
    templates: [
      { uriTemplate: 'mhl://run/{runId}/logs', name: 'run logs', mimeType: 'text/plain' },
    ],
    read: () => undefined,
  };
  const complete = handler(
    completionMethods(CATALOG, [workflowTemplates(CATALOG), runs]),
    'completion/complete',
  );
  const prompt = (name: string, value: string, promptName = 'Review') =>
    complete({ ref: { type: 'ref/prompt', name: promptName }, argument: { name, value } });

  it('offers enum variants and booleans by case-insensitive prefix, nothing for text', async () => {
    assert.deepEqual((await prompt('level', 'R'))['completion'], {
      values: ['Relaxed'],
      total: 1,
      hasMore: false,
    });
    const bools = (await prompt('strict', ''))['completion'] as { values: string[] };
    assert.deepEqual(bools.values, ['true', 'false']);
    const text = (await prompt('file', 'a'))['completion'] as { values: string[] };
    assert.deepEqual(text.values, []);
  });

  it('completes workflow names, and no run ids', async () => {
    const names = await complete({
      ref: { type: 'ref/resource', uri: 'mhl://workflow/{name}' },
      argument: { name: 'name', value: '' },
    });
    assert.deepEqual((names['completion'] as { values: string[] }).values, [
      'Chatty',
      'Rendered',
      'Waiter',
    ]);
    const ids = await complete({
      ref: { type: 'ref/resource', uri: 'mhl://run/{runId}/logs' },
      argument: { name: 'runId', value: '' },
    });
    assert.deepEqual(ids['completion'], { values: [], total: 0, hasMore: false });
  });

  it('caps values at 100 and says there are more', async () => {
    const many: ResourceProvider = {
      templates: [{ uriTemplate: 'x://{n}', name: 'x', mimeType: 'text/plain' }],
      read: () => undefined,
      complete: () => Array.from({ length: 150 }, (_, i) => `v${i}`),
    };
    const result = await handler(
      completionMethods(CATALOG, [many]),
      'completion/complete',
    )({
      ref: { type: 'ref/resource', uri: 'x://{n}' },
      argument: { name: 'n', value: 'v' },
    });
    const completion = result['completion'] as {
      values: string[];
      total: number;
      hasMore: boolean;
    };
    assert.deepEqual(
      [completion.values.length, completion.total, completion.hasMore],
      [100, 150, true],
    );
  });

  it('refuses an unknown prompt, argument, template or variable with -32602', async () => {
    assert.equal((await refusal(prompt('level', '', 'Nope'))).code, -32602);
    assert.equal((await refusal(prompt('nope', ''))).code, -32602);
    const template = (uri: string, name: string) =>
      complete({ ref: { type: 'ref/resource', uri }, argument: { name, value: '' } });
    assert.equal((await refusal(template('mhl://nothing/{x}', 'x'))).code, -32602);
    assert.equal((await refusal(template('mhl://workflow/{name}', 'other'))).code, -32602);
    assert.equal((await refusal(complete({ ref: { type: 'ref/tool' } }))).code, -32602);
  });
});

describe('logging', () => {
  it('maps log.* prefixes to levels and strips them; a bare log line is info', () => {
    assert.deepEqual(outputEntry('[WARN] disk'), { level: 'warning', text: 'disk' });
    assert.deepEqual(outputEntry('[ERROR] gone'), { level: 'error', text: 'gone' });
    assert.deepEqual(outputEntry('[INFO] fyi'), { level: 'info', text: 'fyi' });
    assert.deepEqual(outputEntry('plain [WARN]'), { level: 'info', text: 'plain [WARN]' });
  });

  it('refuses an unknown level with -32602', async () => {
    const setLevel = handler(loggingMethods(), 'logging/setLevel');
    assert.equal((await refusal(setLevel({ level: 'loud' }))).code, -32602);
  });
});

/**
 * Resource links of eagerly bundled steps, through the built CLI on a variant of the fixture
 * corpus (copied to a temp folder; the fixture itself is never edited): links that escape the
 * tree (`../`, absolute paths, a symlink out of `resources/`), name a missing workflow, resource
 * or section each give their own warning in `_meta.validation`, never a failure and never a
 * byte from outside the workflows root; in reference mode the linked bodies are bundled under
 * `resources` and share get_resource's ledger entry.
 */
import assert from 'node:assert/strict';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import { SEPARATOR, type ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';
import { SESSIONS_CORPUS } from '../helpers/sessions.js';

const SECRET = 'SECRET-OUTSIDE-THE-WORKFLOWS-ROOT';
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';
const meta = (r: ToolCallResult) =>
  (r as { _meta?: Record<string, unknown> })._meta as {
    validation: { status: string; warnings: string[] };
    resource_refs?: string[];
    bundled_resources?: string[];
    delivery?: string;
  };
const bundleOf = (r: ToolCallResult) => parse(text(r).slice(0, text(r).indexOf(SEPARATOR)));

/** The hostile links appended to a bundled technique's protocol, and the warning each gives. */
const HOSTILE: [link: string, warning: string | undefined][] = [
  ['../../../outside/resources/secret.md', 'Resource not found: secret in workflow outside'],
  ['../resources/../../../outside/resources/secret.md', undefined], // the same id as above
  ['/etc/resources/secret.md', 'Resource not found: secret in workflow etc'],
  [
    'meta/resources/../../../outside/secret',
    'Resource not found: ../../../outside/secret in workflow meta',
  ],
  ['../../resources/secret.md', undefined], // reads as `../secret`: not a resource id at all
  ['../resources/leak.md', 'Resource not found: leak in workflow requirements-refinement'],
  ['ghost/thing', 'Resource not found: thing in workflow ghost'],
  ['../resources/nope.md#x', 'Resource not found: nope in workflow requirements-refinement'],
  [
    '../resources/specification-protocol.md#no-such-section',
    "Section '#no-such-section' not found in resource 'specification-protocol'.",
  ],
];

describe('sessions resource links of bundled steps', () => {
  let dir: string;
  let root: string;
  let server: Connected;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-links-'));
    root = join(dir, 'workflows');
    cpSync(SESSIONS_CORPUS, root, { recursive: true });
    // What a link may try to reach: beside the root, and a symlink out of a resources folder.
    mkdirSync(join(dir, 'outside', 'resources'), { recursive: true });
    writeFileSync(join(dir, 'outside', 'resources', 'secret.md'), `${SECRET}\n`);
    // `<root>/../resources/secret.md`, what a workflow named `..` would hold.
    mkdirSync(join(dir, 'resources'));
    writeFileSync(join(dir, 'resources', 'secret.md'), `${SECRET}\n`);
    symlinkSync(
      join(dir, 'outside', 'resources', 'secret.md'),
      join(root, 'requirements-refinement', 'resources', 'leak.md'),
    );
    const file = join(root, 'requirements-refinement', 'techniques', 'intake-sources.md');
    const lines = HOSTILE.map(([link], i) => `- Hostile link ${i}: [x](${link}).`).join('\n');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        '\n## Rules',
        `\n### 7. Hostile Links\n\n${lines}\n\n## Rules`,
      ),
    );
    server = await startMhl(CLI, root, join(dir, 'run'));
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function firstActivity(bundle?: 'reference') {
    const started = JSON.parse(
      text(await server.call('start_session', { workflow_id: 'requirements-refinement' })),
    );
    const index = started.session_index as string;
    await server.call('next_activity', { session_index: index, activity_id: 'intake-and-analyze' });
    const got = await server.call('get_activity', {
      session_index: index,
      context_tokens: 200000,
      ...(bundle ? { bundle } : {}),
    });
    assert.ok(!got.isError, text(got));
    return { index, got };
  }

  const expected = HOSTILE.flatMap(([, w]) => (w === undefined ? [] : [w]));
  const warned = (warnings: string[]) =>
    warnings
      .filter((w) => w.startsWith('Unresolvable resource ref'))
      .map((w) =>
        w.replace(/^Unresolvable resource ref '[^']*' linked from bundled step techniques: /, ''),
      );

  test('full mode lists every id and warns once per broken link, in link order', async () => {
    const { got } = await firstActivity();
    const m = meta(got);
    assert.equal(m.validation.status, 'warning');
    assert.deepEqual(warned(m.validation.warnings), expected);
    const refs = bundleOf(got).resource_refs as string[];
    assert.deepEqual(refs, m.resource_refs);
    for (const id of ['outside/secret', 'etc/secret', 'ghost/thing', 'leak', 'nope#x'])
      assert.ok(refs.includes(id), `${id} is listed`);
    assert.ok(!refs.some((r) => r.startsWith('.') || r.startsWith('/')), 'no path-shaped ids');
    assert.ok(!text(got).includes(SECRET));
  });

  test('reference mode bundles the bodies it can read, warns for the rest, reads nothing outside', async () => {
    const { index, got } = await firstActivity('reference');
    const m = meta(got);
    assert.deepEqual(warned(m.validation.warnings), expected);
    const bundle = bundleOf(got);
    const resources = bundle.resources as Record<string, { content?: string; resource_id: string }>;
    const section = 'specification-protocol#source-reference-format';
    assert.ok(resources[section]?.content?.startsWith('#'), 'a linked section is bundled');
    assert.equal(resources[section]?.resource_id, section);
    for (const id of ['outside/secret', 'leak', 'ghost/thing'])
      assert.equal(resources[id], undefined);
    assert.deepEqual(Object.keys(resources), m.bundled_resources);
    assert.ok(!text(got).includes(SECRET));
    // The bundle recorded the body in get_resource's ledger: a reference fetch now collapses.
    const again = await server.call('get_resource', {
      session_index: index,
      resource_id: section,
      bundle: 'reference',
    });
    assert.equal(meta(again).delivery, 'unchanged');
    const full = await server.call('get_resource', { session_index: index, resource_id: section });
    assert.ok(text(full).endsWith(resources[section]?.content ?? '?'), 'the same body');
  });

  test('get_resource refuses the same escapes with RESOURCE_NOT_FOUND', async () => {
    const { index } = await firstActivity();
    for (const id of ['leak', '../secret', 'outside/secret', '../../outside/resources/secret']) {
      const r = await server.call('get_resource', { session_index: index, resource_id: id });
      assert.ok(r.isError, id);
      const code = (r as { _meta?: { 'mhl/diagnostic'?: { code?: string } } })._meta?.[
        'mhl/diagnostic'
      ]?.code;
      assert.ok(code === 'RESOURCE_NOT_FOUND' || code === 'INVALID_ARGUMENT', `${id}: ${code}`);
      assert.ok(!text(r).includes(SECRET));
    }
  });
});

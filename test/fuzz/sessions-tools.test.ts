/**
 * Hostile arguments to every sessions tool, through the built CLI and the SDK client: random
 * JSON for each argument (strings with path segments, huge and odd values, wrong types) on a
 * live session. Every call must come back as a result (an `isError` result at worst) with a
 * stable code, never a protocol error or an internal fault, never the workflows root or key path, and
 * the session must still verify afterwards. Then a session file mutated at random is always
 * SEAL_MISMATCH.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import type { ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';
import { fc, holds } from '../helpers/fuzz.js';
import { SESSIONS_CORPUS as CORPUS, SESSIONS_TOOLS as TOOLS } from '../helpers/sessions.js';

const KEYS = [
  'workflow_id',
  'activity_id',
  'resource_id',
  'step_id',
  'checkpoint_id',
  'option_id',
  'agent_id',
  'planning_folder',
  'planning_slug',
  'repo',
  'context_tokens',
  'bundle',
  'view',
  'child_index',
  'trace_tokens',
  'step_manifest',
  'variables_changed',
  'message',
  'options',
  'auto_advance',
  'condition_not_met',
  'activity',
  'usage',
  'basis',
  'transition_condition',
  'full',
];
const CODES = new Set([
  'INVALID_ARGUMENT',
  'SEAL_MISMATCH',
  'NOT_FOUND',
  'COLLISION',
  'INVALID_INDEX',
  'WORKFLOW_NOT_FOUND',
  'WORKFLOW_INVALID',
  'ACTIVITY_NOT_FOUND',
  'STEP_NOT_FOUND',
  'TECHNIQUE_NOT_FOUND',
  'RESOURCE_NOT_FOUND',
  'CHECKPOINT_ACTIVE',
  'NO_ACTIVE_CHECKPOINT',
  'CHECKPOINT_INVALID',
  'INVALID_PATH',
  'REPO_CONFLICT',
  'BATCH_FULL',
]);

const hostileString = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '../../etc/passwd',
    '/etc/passwd',
    '..',
    '.',
    '',
    'meta',
    '__terminal__',
    'a::b::c',
    'x/../../y',
    'ponytail',
    'the-ladder#rungs',
    '\u0000',
    'A'.repeat(5000),
  ),
);
const value = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
);

describe('sessions tools under hostile arguments', () => {
  let dir: string;
  let root: string;
  let server: Connected;
  let index: string;
  let folder: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-fuzz-'));
    root = join(dir, 'root');
    cpSync(CORPUS, root, { recursive: true });
    server = await startMhl(CLI, root, dir);
    const started = JSON.parse(
      (await server.call('start_session', { workflow_id: 'ponytail' })).content?.[0]?.text ?? '{}',
    );
    index = started.session_index;
    folder = started.planning_folder_path;
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every call is a result with a stable code, never a fault or a server path', async (t) => {
    const args = fc.record({
      tool: fc.constantFrom(...TOOLS),
      withIndex: fc.boolean(),
      extra: fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 4 }),
    });
    await holds(
      t,
      fc.asyncProperty(args, async ({ tool, withIndex, extra }) => {
        const r = (await server.call(tool, {
          ...extra,
          ...(withIndex ? { session_index: index } : {}),
        })) as ToolCallResult;
        const text = r.content?.[0]?.text ?? '';
        // planning_folder_path is the agent's to know; the workflows root and the key are not.
        assert.ok(
          !text.includes(root) && !text.includes(join(dir, 'mhl', 'key')),
          `${tool}: no server path`,
        );
        if (r.isError) {
          const code = (r._meta?.['mhl/diagnostic'] as { code?: string } | undefined)?.code ?? '';
          assert.ok(CODES.has(code), `${tool}: stable code, got ${code}: ${text.slice(0, 200)}`);
        }
      }),
      150,
    );
    // The session survived whatever was thrown at it, sealed.
    const status = await server.call('inspect_session', { session_index: index, view: 'identity' });
    assert.equal(status.isError, undefined);
  });

  test('a randomly mutated session file is always SEAL_MISMATCH', async (t) => {
    const path = join(folder, 'session.json');
    const original = readFileSync(path);
    await holds(
      t,
      fc.asyncProperty(
        fc.nat(original.length - 1),
        fc.integer({ min: 1, max: 255 }),
        async (at, xor) => {
          const bad = Buffer.from(original);
          bad[at] = (bad[at] as number) ^ xor;
          writeFileSync(path, bad);
          try {
            const r = await server.call('get_workflow_status', { session_index: index });
            assert.equal(
              (r._meta?.['mhl/diagnostic'] as { code?: string } | undefined)?.code,
              'SEAL_MISMATCH',
            );
          } finally {
            writeFileSync(path, original);
          }
        },
      ),
      150,
    );
  });
});

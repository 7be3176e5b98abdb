/**
 * The activity-session profile end to end: the built CLI (`mhl serve mcp --profile sessions`)
 * over the real workflow-server corpus, driven by the official MCP SDK client through the
 * deterministic walker (bench/lib/session-walker.mjs). Every corpus workflow is walked to its
 * terminal state (read from session.json on disk), and the whole transcript, normalised
 * (indexes, uuids, times, folders), must equal the checked-in golden file.
 * `UPDATE_GOLDEN=1` rewrites it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { normaliseText } from '../../bench/lib/session-compare.mjs';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import { type Walk, walk } from '../../bench/lib/session-walker.mjs';
import { WALKS } from '../../bench/lib/session-walks.mjs';
import { CLI } from '../helpers/cli.js';

const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'corpus');
const GOLDEN = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'walk.golden.json');
const LONG = 600;

/** One call of the transcript: arguments and the result, long texts as length and digest. */
function transcriptCall(call: Walk['calls'][number], walked: Walk, folders: string[]) {
  const norm = (t: string) => normaliseText(t, [walked.sessionIndex], folders);
  const text = norm(call.result.content?.[0]?.text ?? '');
  const meta =
    call.result._meta === undefined
      ? undefined
      : JSON.parse(norm(JSON.stringify(call.result._meta)));
  if (meta?.trace_token !== undefined) meta.trace_token = '<token>';
  return {
    tool: call.name,
    args: JSON.parse(norm(JSON.stringify(call.args))),
    ...(call.result.isError ? { isError: true } : {}),
    text:
      text.length <= LONG
        ? text
        : { chars: text.length, sha256: createHash('sha256').update(text).digest('hex') },
    ...(meta?.validation ? { validation: meta.validation } : {}),
  };
}

describe('sessions profile walk over the corpus', () => {
  let dir: string;
  let server: Connected;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-walk-'));
    server = await startMhl(CLI, CORPUS, dir);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('walks every workflow to its terminal state, deterministically, as the golden transcript', async () => {
    const folders = [join(dir, 'mhl', 'ws'), tmpdir()];
    const transcript: Record<string, unknown>[] = [];
    for (const w of WALKS) {
      const walked = await walk(server.call, w.workflow, w.options);
      const wfText = walked.calls[1]?.result.content?.[0]?.text ?? '';
      const folder = /planning_folder_path: (.+)/.exec(wfText)?.[1]?.trim() as string;
      const file = JSON.parse(readFileSync(join(folder, 'session.json'), 'utf8'));
      assert.equal(file.status, 'completed', `${w.name} ends completed`);
      assert.equal(file.currentActivity, '__terminal__');
      assert.ok(walked.calls.every((c) => !c.result.isError));
      transcript.push({
        walk: w.name,
        path: walked.path,
        status: file.status,
        seq: file.seq,
        calls: walked.calls.map((c) => transcriptCall(c, walked, folders)),
      });
    }
    const text = `${JSON.stringify(transcript, null, 1)}\n`;
    if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(GOLDEN)) writeFileSync(GOLDEN, text);
    assert.deepEqual(JSON.parse(text), JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });
});

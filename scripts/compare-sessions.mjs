#!/usr/bin/env node
/**
 * Side by side: the same walks of the corpus (test/e2e/sessions-walk policies) against mhl
 * (`--profile sessions`) and the public workflow-server built from its snapshot
 * (scripts/build-workflow-server.mjs), comparing every tool result modulo timestamps, ids and
 * seals. Prints one JSON line per differing (tool, part) with a count and the first example,
 * then a summary line (walks, calls per server, differences, groups, and the differences kept on
 * purpose, which are counted apart). The walks are WALKS, REFERENCE_WALKS and PROBE_WALKS
 * (bench/lib/session-walks.mjs). `--full` prints every difference, the kept ones marked `kept`.
 * Needs `npm run build` first.
 *
 *   node scripts/compare-sessions.mjs [--full]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareWalks } from '../bench/lib/session-compare.mjs';
import { startMhl, startPublic } from '../bench/lib/session-servers.mjs';
import { walk } from '../bench/lib/session-walker.mjs';
import { keptOnPurpose, PROBE_WALKS, REFERENCE_WALKS, WALKS } from '../bench/lib/session-walks.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const corpus = process.env.SESSIONS_CORPUS ?? '/work/shared/corpus/workflow-server';
const entry = execFileSync(process.execPath, [join(repo, 'scripts', 'build-workflow-server.mjs')], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'ignore'],
}).trim();
const dir = mkdtempSync(join(tmpdir(), 'mhl-compare-'));
const mhl = await startMhl(join(repo, 'dist', 'bin', 'mhl.js'), corpus, dir);
const pub = await startPublic(entry, corpus, dir);
const ALL = [...WALKS, ...REFERENCE_WALKS, ...PROBE_WALKS];
const grouped = new Map();
let total = 0;
let keptCount = 0;
let callCount = 0;
try {
  for (const w of ALL) {
    const a = await walk(mhl.call, w.workflow, w.options);
    const b = await walk(pub.call, w.workflow, w.options);
    callCount += a.calls.length;
    const diffs = compareWalks(
      a,
      b,
      [join(dir, 'mhl', 'ws'), join(dir, 'public', 'ws')],
      keptOnPurpose,
    );
    for (const d of diffs) {
      if (process.argv.includes('--full'))
        process.stdout.write(`${JSON.stringify({ walk: w.name, ...d })}\n`);
      // Differences kept on purpose (docs/sessions.md) are counted apart, not grouped.
      if (d.kept !== undefined) {
        keptCount++;
        continue;
      }
      total++;
      const key = `${d.tool}:${d.part}`;
      const g = grouped.get(key) ?? {
        tool: d.tool,
        part: d.part,
        count: 0,
        first: { walk: w.name, call: d.call, mhl: d.mhl, public: d.public },
      };
      g.count++;
      grouped.set(key, g);
    }
  }
} finally {
  await mhl.close();
  await pub.close();
  rmSync(dir, { recursive: true, force: true });
}
if (!process.argv.includes('--full'))
  for (const g of grouped.values()) process.stdout.write(`${JSON.stringify(g)}\n`);
process.stdout.write(
  `${JSON.stringify({ walks: ALL.length, calls: callCount, differences: total, groups: grouped.size, kept: keptCount })}\n`,
);

/**
 * Property test: random mutations of valid fixtures (byte flips, truncations, token swaps,
 * deletions, duplications, insertions) only ever produce diagnostics — never an exception, and
 * never more than a second per file. The seed is printed; MHL_FUZZ_SEED=<n> replays a run.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { checkFiles } from '../../../src/lang/checker.js';
import { tokenize } from '../../../src/lang/lexer.js';
import { memoryHost } from '../../../src/lang/source-host.js';
import { MH_FRAGMENTS } from '../../helpers/mh-fragments.js';

const MUTATIONS = 10_000;
const FIXTURES = resolve(import.meta.dirname, '../../fixtures/samples');
// Every fragment is only parsed here, so constructs that act (spawn, agent) are fair game.
const INSERTS = [...MH_FRAGMENTS, '..', '^', 'spawn', 'wait', 'agent'];

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function collect(dir: string, out: Map<string, string>): Map<string, string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else out.set(path, readFileSync(path, 'utf8'));
  }
  return out;
}

function mutate(text: string, random: () => number): string {
  const pick = (n: number) => Math.floor(random() * n);
  const tokens = tokenize(text, 'x.mh').tokens.slice(0, -1);
  const at = pick(text.length + 1);
  const t1 = tokens[pick(tokens.length)];
  const t2 = tokens[pick(tokens.length)];
  switch (pick(6)) {
    case 0:
      return text.slice(0, at) + String.fromCharCode(pick(128)) + text.slice(at + 1);
    case 1:
      return text.slice(0, at);
    case 2: {
      if (!t1 || !t2 || t1 === t2) return text;
      const [a, b] = t1.start < t2.start ? [t1, t2] : [t2, t1];
      if (a.end > b.start) return text;
      return (
        text.slice(0, a.start) +
        text.slice(b.start, b.end) +
        text.slice(a.end, b.start) +
        text.slice(a.start, a.end) +
        text.slice(b.end)
      );
    }
    case 3:
      return t1 ? text.slice(0, t1.start) + text.slice(t1.end) : text;
    case 4:
      return t1 ? `${text.slice(0, t1.end)} ${text.slice(t1.start)}` : text;
    default:
      return text.slice(0, at) + INSERTS[pick(INSERTS.length)] + text.slice(at);
  }
}

describe('front end under random mutation', () => {
  it(`turns ${MUTATIONS} mutated fixtures into diagnostics, each within 1 s`, (t) => {
    const seed = Number(process.env['MHL_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
    t.diagnostic(`seed ${seed} (replay with MHL_FUZZ_SEED=${seed})`);
    const random = mulberry32(seed);
    const files = collect(FIXTURES, new Map());
    const sources = [...files.keys()].filter((p) => p.endsWith('.mh'));
    assert.ok(sources.length >= 5, 'fixtures missing');
    let diagnosed = 0;
    let slowest = 0;
    for (let i = 0; i < MUTATIONS; i++) {
      const path = sources[Math.floor(random() * sources.length)] as string;
      let text = files.get(path) as string;
      const rounds = 1 + Math.floor(random() * 3);
      for (let r = 0; r < rounds; r++) text = mutate(text, random);
      const host = memoryHost(new Map(files).set(path, text));
      const started = performance.now();
      try {
        const result = checkFiles([path], host);
        if (result.diagnostics.length > 0) diagnosed++;
      } catch (e) {
        const repro = join(tmpdir(), `mhl-fuzz-${seed}-${i}.mh`);
        writeFileSync(repro, text);
        assert.fail(
          `mutation ${i} of ${path} threw (input saved to ${repro}): ${(e as Error).stack}`,
        );
      }
      const elapsed = performance.now() - started;
      slowest = Math.max(slowest, elapsed);
      assert.ok(elapsed < 1000, `mutation ${i} of ${path} took ${elapsed.toFixed(0)} ms`);
    }
    t.diagnostic(
      `${diagnosed} of ${MUTATIONS} mutations produced diagnostics; slowest ${slowest.toFixed(1)} ms`,
    );
    // Most mutations break something; if almost none are diagnosed the checker has gone blind.
    assert.ok(diagnosed > MUTATIONS / 4, `only ${diagnosed} mutations were diagnosed`);
  });
});

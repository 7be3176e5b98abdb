/**
 * Property: every `.mh` file under test/fixtures, mutated (byte flips, MHL tokens inserted,
 * truncation, a line duplicated or dropped, a range deleted), goes through the checker without
 * an exception, and every diagnostic it gives points into the file (line and column from 1,
 * within the text, consistent with its offset). Those mutants that still check clean and use
 * only side-effect-free natives are then run by the real runner, with a fake agent on the
 * agent seed: the run ends with a structured outcome, never a rejection, within its bound.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkFiles } from '../../src/lang/checker.js';
import { memoryHost } from '../../src/lang/source-host.js';
import { createAgentState } from '../../src/runtime/agents/agents.js';
import { CheckpointStore } from '../../src/runtime/checkpoints/checkpoints.js';
import { loadProgram } from '../../src/runtime/pipeline/program.js';
import { runPipeline } from '../../src/runtime/pipeline/runner.js';
import { Redactor } from '../../src/runtime/services/redact.js';
import { MemoryStore } from '../../src/store/index.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { fc, holds, replaying } from '../helpers/fuzz.js';
import { MH_FRAGMENTS } from '../helpers/mh-fragments.js';

const FIXTURES = resolve(REPO_ROOT, 'test/fixtures');
const FAKE = resolve(FIXTURES, 'bin/fake-agent.mjs');
/** How long a mutant may run before it is cancelled, and the bound on cancelling it. */
const RUN_MS = 2000;
const SETTLE_MS = 10_000;

/** Every text file under the fixtures (imports and prompt files resolve against these). */
function collect(dir: string, out: Map<string, string>): Map<string, string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = statSync(path);
    if (stat.isDirectory()) collect(path, out);
    else if (stat.size < 64 * 1024) out.set(path, readFileSync(path, 'utf8'));
  }
  return out;
}

const FILES = collect(FIXTURES, new Map());
/** An agent program served by the fake agent CLI, so runs reach the agent path too. */
const AGENT_SEED = join(FIXTURES, 'fuzz/agent.mh');
FILES.set(
  AGENT_SEED,
  `agent Echo {
    command: "${process.execPath}"
    args: ["${FAKE}", "-p", "\${prompt}"]
}

workflow Ask {
    input topic: string = "fuzz"
    var answer = ""
    step One {
        answer = Echo.run(prompt: "about \${topic}")
        if (answer.length > 0) { log(answer) } else { fail("empty") }
    }
}
`,
);
const SOURCES = [...FILES.keys()].filter((p) => p.endsWith('.mh')).sort();

/** Natives and constructs a mutant must not reach when run: anything that acts outside. */
const EFFECTS = /\b(?:cmd|fs|dir|git|http|env|import|spawn|kv|memory)\b|\bagent\b(?![\s\S]*Echo)/;
/** Whether `text` may act outside; the agent seed's own paths (the checkout's) do not count. */
function acts(text: string): boolean {
  return EFFECTS.test(text.replaceAll(process.execPath, '').replaceAll(FAKE, ''));
}
const TOKENS = [
  ...MH_FRAGMENTS,
  'while',
  'for',
  'const',
  'return',
  'break',
  'try',
  'catch',
  'match',
  'fail("x")',
  'pause("x")',
  'workflow',
  'input',
  'output:',
  '-1',
  '\r\n',
  '\t',
  '\uFEFF',
  '\uD800',
  '__proto__',
  'constructor',
  'toString',
  ' __proto__ ',
  '.constructor',
  '["__proto__"]',
  '1e999',
  '9007199254740993',
];

type Mutation =
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'insert'; at: number; token: string }
  | { kind: 'truncate'; at: number }
  | { kind: 'duplicate-line' | 'drop-line'; at: number }
  | { kind: 'delete'; at: number; length: number };

const position = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    at: position,
    byte: fc.integer({ min: 0, max: 255 }),
  }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: position,
    token: fc.constantFrom(...TOKENS),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: position }),
  fc.record({
    kind: fc.constantFrom('duplicate-line' as const, 'drop-line' as const),
    at: position,
  }),
  fc.record({
    kind: fc.constant('delete' as const),
    at: position,
    length: fc.integer({ min: 1, max: 20 }),
  }),
);

function apply(text: string, m: Mutation): string {
  const at = Math.floor(m.at * (text.length + 1));
  switch (m.kind) {
    case 'flip': {
      // Flips a byte of the UTF-8 encoding: the text may stop being valid UTF-8 (decoded as U+FFFD).
      const bytes = Buffer.from(text);
      const i = Math.floor(m.at * bytes.length);
      if (i < bytes.length) bytes[i] = m.byte;
      return bytes.toString('utf8');
    }
    case 'insert':
      return text.slice(0, at) + m.token + text.slice(at);
    case 'truncate':
      return text.slice(0, at);
    case 'delete':
      return text.slice(0, at) + text.slice(at + m.length);
    default: {
      const lines = text.split('\n');
      const i = Math.floor(m.at * lines.length);
      if (m.kind === 'duplicate-line') lines.splice(i, 0, lines[i] ?? '');
      else lines.splice(i, 1);
      return lines.join('\n');
    }
  }
}

const mutant = fc
  .record({
    file: fc.constantFrom(...SOURCES),
    mutations: fc.array(mutation, { minLength: 1, maxLength: 4 }),
  })
  .map(({ file, mutations }) => ({
    file,
    mutations,
    text: mutations.reduce(apply, FILES.get(file) as string),
  }));

/** Checks `text` as `file` and asserts every diagnostic's position lies inside its file. */
function checkMutant(file: string, text: string) {
  const files = new Map(FILES).set(file, text);
  const result = checkFiles([file], memoryHost(files));
  for (const d of result.diagnostics) {
    const { span } = d;
    const where = `${d.code} at ${span.line}:${span.col} [${span.start},${span.end}) in ${span.file}`;
    assert.ok(Number.isInteger(span.line) && span.line >= 1, `line: ${where}`);
    assert.ok(Number.isInteger(span.col) && span.col >= 1, `column: ${where}`);
    const source = files.get(span.file);
    if (source === undefined) continue;
    assert.ok(span.start >= 0 && span.start <= span.end, `offsets: ${where}`);
    assert.ok(span.start <= source.length, `start past the end (${source.length}): ${where}`);
    const lines = source.split('\n');
    assert.ok(span.line <= lines.length, `line past the end (${lines.length}): ${where}`);
    const lineText = (lines[span.line - 1] as string).replace(/\r$/, '');
    assert.ok(
      span.col <= lineText.length + 1,
      `column past the line (${lineText.length}): ${where}`,
    );
    const before = source.slice(0, span.start).split('\n');
    const at = `${before.length}:${(before.at(-1) as string).length + 1}`;
    assert.equal(`${span.line}:${span.col}`, at, `line:column disagrees with offset: ${where}`);
  }
  return { files, result };
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('.mh mutations', () => {
  it('check without throwing, with diagnostics inside the file', async (t) => {
    await holds(
      t,
      fc.property(mutant, ({ file, text }) => {
        checkMutant(file, text);
      }),
      400,
    );
  });

  it('run, when they check clean, to a structured outcome', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'mhl-fuzz-run-'));
    dirs.push(cwd);
    const runnable = SOURCES.filter(
      (p) => !p.includes('/broken/') && !acts(FILES.get(p) as string),
    );
    assert.ok(runnable.includes(AGENT_SEED) && runnable.length > 5, 'runnable seeds are missing');
    t.diagnostic(
      `${runnable.length} runnable seeds: ${runnable.map((p) => p.slice(FIXTURES.length + 1)).join(', ')}`,
    );
    let ran = 0;
    const runMutant = fc
      .record({
        file: fc.constantFrom(...runnable),
        mutations: fc.array(mutation, { maxLength: 3 }),
      })
      .map(({ file, mutations }) => ({
        file,
        text: mutations.reduce(apply, FILES.get(file) as string),
      }));
    await holds(
      t,
      fc.asyncProperty(runMutant, async ({ file, text }) => {
        if (acts(text)) return;
        const { files } = checkMutant(file, text);
        const loaded = loadProgram(file, memoryHost(files));
        if (!loaded.ok) return;
        const pipeline = loaded.pipelines[0];
        if (pipeline === undefined) return;
        ran++;
        const redactor = new Redactor();
        const signal = AbortSignal.timeout(RUN_MS);
        const outcome = runPipeline(loaded.program, pipeline, {
          inputs: {},
          ephemeral: true,
          signal,
          state: new CheckpointStore(new MemoryStore(), redactor),
          services: {
            cwd,
            childEnv: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
            env: {},
            redactor,
            output: () => {},
            cacheDir: join(cwd, '.mhl-cache'),
            agents: createAgentState(),
          },
        });
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<never>((_, fail) => {
          timer = setTimeout(() => fail(new Error(`run not settled ${SETTLE_MS} ms`)), SETTLE_MS);
        });
        try {
          const settled = await Promise.race([outcome, bound]);
          assert.ok(
            ['completed', 'paused', 'failed', 'canceled'].includes(settled.status),
            `status ${String(settled.status)}`,
          );
          if (settled.status === 'failed') {
            assert.equal(typeof settled.error?.message, 'string', 'a failure says why');
          }
        } finally {
          clearTimeout(timer);
        }
      }),
      120,
    );
    t.diagnostic(`${ran} mutants checked clean and ran`);
    // Zero mutations are allowed, so unmodified seeds run too: if none ran, the property is blind.
    if (!replaying()) assert.ok(ran > 0, 'no mutant ran');
  });
});

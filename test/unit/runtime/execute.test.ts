/**
 * executeWorkflow (issue 10): the one way a run starts. Each run owns its agent response cache
 * (an answer computed for one caller is never served to another), a served run's agent cache
 * folder lives under the server's root and is gone when the run ends, and an ephemeral run
 * writes nothing. Real programs, the real fake-agent CLI.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { diskHost } from '../../../src/lang/index.js';
import {
  AgentLimiters,
  executeWorkflow,
  loadProgram,
  toPlain,
} from '../../../src/runtime/index.js';

const FAKE = resolve(import.meta.dirname, '../../fixtures/bin/fake-agent.mjs');

function program(dir: string, source: string) {
  const file = join(dir, 'main.mh');
  writeFileSync(file, source);
  const loaded = loadProgram(file, diskHost);
  assert.ok(loaded.ok, 'the test program loads');
  const pipeline = loaded.pipelines[0];
  assert.ok(pipeline);
  return { program: loaded.program, pipeline };
}

describe('executeWorkflow', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-exec-'));
  const count = join(dir, 'calls.txt');
  const loaded = program(
    dir,
    `agent Cached {
    command: "${process.execPath}"
    args: ["${FAKE}", "-p", "\${prompt}"]
    cache: { ttl: 10m, storage: "memory" }
}

pipeline Ask {
    var a = ""
    var b = ""
    step One {
        a = Cached.run(prompt: "[count:${count}] hello")
        b = Cached.run(prompt: "[count:${count}] hello")
    }
}
`,
  );
  const root = mkdtempSync(join(tmpdir(), 'mhl-exec-root-'));
  const base = {
    ...loaded,
    inputs: {},
    cwd: dir,
    childEnv: { PATH: `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}` },
    env: {},
    state: 'ephemeral' as const,
    signal: new AbortController().signal,
    output: () => {},
    agentCache: { root },
    agentLimiters: new AgentLimiters(),
  };
  const calls = () => (existsSync(count) ? readFileSync(count, 'utf8').trim().split('\n') : []);

  it("caches an agent's answer within a run, never across runs", async () => {
    const first = await executeWorkflow(base);
    assert.equal(first.outcome.status, 'completed', JSON.stringify(first.outcome.error));
    const vars = toPlain(first.outcome.vars) as Record<string, string>;
    assert.equal(vars['a'], vars['b']);
    assert.equal(calls().length, 1, 'the second call of the run is a cache hit');
    const second = await executeWorkflow(base);
    assert.equal(second.outcome.status, 'completed');
    assert.equal(calls().length, 2, 'a later run (another caller) asks the agent itself');
  });

  it('removes the run’s agent cache folder under the root, and an ephemeral run writes no state', async () => {
    const before = readdirSync(dir).sort();
    const run = await executeWorkflow(base);
    assert.equal(run.outcome.status, 'completed');
    assert.deepEqual(readdirSync(root), [], 'nothing left under the cache root');
    assert.deepEqual(readdirSync(dir).sort(), before, 'no .mhl state in the working directory');
  });
});

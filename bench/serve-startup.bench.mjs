// Time from spawning `mhl serve mcp` on a folder of 100 workflows to its first server/discover
// answer on stdio (median of 10), beside the same for a bare node process that answers one
// line, in the same run; then, in a second series, to the answer of a tools/call sent right
// behind the discover (its input validator may not have been compiled yet: the background pass
// that compiles them starts once the server is up). One JSON line per figure. Build first: this
// runs dist/.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUNS = 10;
const CLI = fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mhl-bench-serve-'));
for (let i = 0; i < 100; i++) {
  writeFileSync(
    join(dir, `flow${i}.mh`),
    `pipeline Flow${i} {\n  description: "workflow ${i}"\n  input name: string\n  input count: number = 1\n  var out = ""\n  step Build { out = "\${name} \${count}" }\n  step Report { log(out) }\n}\n`,
  );
}
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const discover = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } })}\n`;
const call = `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'Flow57', arguments: { name: 'x' }, _meta: META } })}\n`;
const bare =
  "process.stdin.once('data', () => { process.stdout.write('{}\\n'); process.exit(0); })";

/** Milliseconds from spawn to the answer of `lastId` (one line of output for the bare process). */
function timeToAnswer(args, input, lastId) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.write(input);
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      text += d;
      const lines = text.split('\n').slice(0, -1);
      if (!lines.some((l) => lastId === undefined || JSON.parse(l).id === lastId)) return;
      done(Number(process.hrtime.bigint() - started) / 1e6);
      child.stdin.end();
      child.kill();
    });
    child.on('error', fail);
  });
}

async function median(args, input = discover, lastId = undefined) {
  const samples = [];
  for (let i = 0; i < RUNS; i++) samples.push(await timeToAnswer(args, input, lastId));
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const mhl = await median([CLI, 'serve', 'mcp', dir]);
const node = await median(['-e', bare]);
const firstCall = await median([CLI, 'serve', 'mcp', dir], discover + call, 2);
console.log(
  JSON.stringify({
    bench: 'serve-startup',
    figure: 'mhl_spawn_to_discover_ms',
    workflows: 100,
    value: +mhl.toFixed(1),
  }),
);
console.log(
  JSON.stringify({
    bench: 'serve-startup',
    figure: 'bare_node_spawn_to_answer_ms',
    value: +node.toFixed(1),
  }),
);
console.log(
  JSON.stringify({
    bench: 'serve-startup',
    figure: 'mhl_minus_bare_ms',
    value: +(mhl - node).toFixed(1),
  }),
);
console.log(
  JSON.stringify({
    bench: 'serve-startup',
    figure: 'mhl_spawn_to_first_call_ms',
    workflows: 100,
    value: +firstCall.toFixed(1),
  }),
);
rmSync(dir, { recursive: true, force: true });

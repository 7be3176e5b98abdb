// Runs every *.bench.mjs in this folder in its own process, one after another (they share two
// cores; running them together would measure contention), or only those whose file name contains
// the first argument (`node bench/run-all.mjs idle`). Build first: benchmarks use dist/.
//
// Every line a benchmark prints goes through as it comes. Lines that are goal lines, JSON with a
// string `goal` and a boolean `goal_met` (docs/benchmarks.md, "Goals"), are also collected, and
// the run ends with a summary: each goal again, as `{"summary":"goal",...}`, then
// `{"summary":"goals","met":N,"total":M,"goal_met":<all met>}`. A benchmark that exits non-zero
// or is killed gets `{"summary":"crashed","bench":<file>,"status":...}`, the others still run,
// and the exit status is then 1. Goals not met do not change it: benchmarks do not gate CI.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
const files = readdirSync(here)
  .sort()
  .filter((file) => file.endsWith('.bench.mjs') && (!only || file.includes(only)));
if (files.length === 0) {
  console.error(`no benchmark matches ${JSON.stringify(only)}`);
  process.exit(2);
}

/** The goal line `text` is, or undefined. */
function goalOf(text) {
  if (!text.startsWith('{')) return undefined;
  try {
    const line = JSON.parse(text);
    return typeof line?.goal === 'string' && typeof line.goal_met === 'boolean' ? line : undefined;
  } catch {
    return undefined;
  }
}

/** Runs one benchmark, passing its lines through; resolves with its goals and exit status. */
function run(file) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(here, file)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const goals = [];
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (text) => {
      process.stdout.write(`${text}\n`);
      const goal = goalOf(text);
      if (goal !== undefined) goals.push(goal);
    });
    // 'close' comes after the last line has been read.
    child.once('close', (code, signal) => done({ goals, code, signal }));
  });
}

const goals = [];
let crashed = 0;
for (const file of files) {
  const result = await run(file);
  goals.push(...result.goals);
  if (result.code !== 0) {
    crashed++;
    const status = result.signal ?? result.code;
    console.log(JSON.stringify({ summary: 'crashed', bench: file, status }));
  }
}
for (const goal of goals) console.log(JSON.stringify({ summary: 'goal', ...goal }));
const met = goals.filter((goal) => goal.goal_met).length;
console.log(
  JSON.stringify({ summary: 'goals', met, total: goals.length, goal_met: met === goals.length }),
);
process.exitCode = crashed > 0 ? 1 : 0;

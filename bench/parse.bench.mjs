// Parse speed: lexes, parses and fully checks a generated 10,000-line .mh file and prints lines/s
// for each stage, with JSON.parse over the same number of bytes as a same-run baseline (absolute
// figures drift on shared machines; the ratio does not). One JSON line per figure, then the goal
// line bench/run-all.mjs collects: check at 200,000 lines/s or more, with V8's default flags.
import { checkFiles, memoryHost, parse } from '../dist/lang/index.js';
import { lex } from '../dist/lang/lexer.js';
import { generateSource } from './gen-source.mjs';

const LINES = 10_000;
const RUNS = 15;
const CHECK_GOAL_LINES_PER_S = 200_000;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn) {
  for (let i = 0; i < 3; i++) fn();
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  return median(samples);
}

const source = generateSource(LINES);
const lines = source.split('\n').length;
const file = '/bench/generated.mh';
const host = memoryHost(new Map([[file, source]]));
const check = checkFiles([file], host);
if (check.diagnostics.some((d) => d.severity === 'error')) {
  throw new Error(`generated source does not lint clean: ${check.diagnostics[0].message}`);
}
const json = JSON.stringify({ lines: source.split('\n') });

const figures = {
  lex: time(() => lex(source, file)),
  parse: time(() => parse(source, file)),
  check: time(() => checkFiles([file], host)),
  json_parse_baseline: time(() => JSON.parse(json)),
};
for (const [stage, seconds] of Object.entries(figures)) {
  const figure = {
    bench: 'parse',
    stage,
    lines,
    bytes: source.length,
    seconds,
    lines_per_s: Math.round(lines / seconds),
  };
  console.log(JSON.stringify(figure));
}
console.log(
  JSON.stringify({
    bench: 'parse',
    figure: 'check_vs_json_parse',
    ratio: +(figures.check / figures.json_parse_baseline).toFixed(2),
  }),
);
const checkLinesPerS = Math.round(lines / figures.check);
console.log(
  JSON.stringify({
    bench: 'parse',
    goal: 'check_lines_per_s',
    value: checkLinesPerS,
    target: CHECK_GOAL_LINES_PER_S,
    goal_met: checkLinesPerS >= CHECK_GOAL_LINES_PER_S,
  }),
);

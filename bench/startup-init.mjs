// Which modules a warm `mhl serve mcp` start spends its module initialisation on: a copy of the
// built CLI whose bundle times every module initialiser esbuild wrapped (its `__esm` and
// `__commonJS` helpers), exclusive of the initialisers each one called, so a module's figure is
// its own top-level code and the built-in modules it required first. Every start answers one
// `server/discover` on 100 generated workflows with a warm cache; the first start (it fills the
// cache) is left out. Prints one JSON line per module, the median over the starts, largest first,
// after a `total` line. Not a goal: a profiler with no sampling overhead, for finding what to make
// lazy (docs/benchmarks.md, serve-startup). Usage, after `npm run build`:
//   node bench/startup-init.mjs [--starts=N] [--top=N] [--cli=PATH/dist/bin/mhl.js]
// The first module to build a zod schema also pays zod's one-off warm-up: read the total.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DISCOVER_LINE, writeWorkflows } from './lib/startup-fixture.mjs';

const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const STARTS = Number(flag('starts') ?? 7);
const TOP = Number(flag('top') ?? 40);
const cli = resolve(flag('cli') ?? fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url)));
const scratch = mkdtempSync(join(tmpdir(), 'mhl-startup-init-'));

// The copy sits two levels below a folder with mhl's package.json and node_modules, as dist/bin
// does, so the launcher finds its version and the bundle its lazily loaded dependencies.
const project = dirname(dirname(dirname(cli)));
const copy = join(project, `.startup-init-${process.pid}`);
cpSync(dirname(dirname(cli)), copy, { recursive: true });
const bundle = join(copy, 'bin', 'mhl-main.cjs');

/** The esbuild helper `helper` (its text as esbuild writes it), replaced by `timed`. */
function patch(text, helper, timed) {
  if (!text.includes(helper)) {
    throw new Error(`esbuild's helper not found in the bundle (a new esbuild?):\n${helper}`);
  }
  return text.replace(helper, timed);
}
// Each initialiser's time minus its nested initialisers' (`stack` holds their running sums).
const record = `const el = performance.now() - t0; const inner = __initStack.pop();
    if (__initStack.length) __initStack[__initStack.length - 1] += el;
    __initTimes.set(name, (__initTimes.get(name) ?? 0) + el - inner);`;
let text = readFileSync(bundle, 'latin1');
text = patch(
  text,
  `var __esm = (fn, res) => function __init() {
  return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;
};`,
  `var __initTimes = new Map(), __initStack = [];
process.on('exit', () => process.stderr.write('MHL_INIT ' + JSON.stringify([...__initTimes]) + '\\n'));
var __esm = (fn, res) => function __init() {
  if (!fn) return res;
  const name = __getOwnPropNames(fn)[0], body = fn[name];
  fn = 0;
  const t0 = performance.now();
  __initStack.push(0);
  try { res = (0, body)(0); } finally { ${record} }
  return res;
};`,
);
text = patch(
  text,
  `var __commonJS = (cb, mod) => function __require() {
  return mod || (0, cb[__getOwnPropNames(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports;
};`,
  `var __commonJS = (cb, mod) => function __require() {
  if (mod) return mod.exports;
  const name = __getOwnPropNames(cb)[0];
  const t0 = performance.now();
  __initStack.push(0);
  try { (0, cb[name])((mod = { exports: {} }).exports, mod); } finally { ${record} }
  return mod.exports;
};`,
);
writeFileSync(bundle, text, 'latin1');

const flows = writeWorkflows(join(scratch, 'flows'), 100);

const samples = [];
try {
  for (let i = 0; i <= STARTS; i++) {
    // stdin ends after the discover: the server answers it, then shuts down and exits.
    const run = spawnSync(process.execPath, [join(copy, 'bin', 'mhl.js'), 'serve', 'mcp', flows], {
      input: DISCOVER_LINE,
      env: { ...process.env, MHL_CACHE_DIR: join(scratch, 'cache') },
      encoding: 'utf8',
    });
    const found = /^MHL_INIT (.*)$/m.exec(run.stderr);
    if (run.status !== 0 || found === null) {
      throw new Error(`start ${i} failed (exit ${run.status}):\n${run.stderr.slice(0, 2000)}`);
    }
    if (i > 0) samples.push(new Map(JSON.parse(found[1])));
  }
} finally {
  rmSync(copy, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const names = new Set(samples.flatMap((s) => [...s.keys()]));
const rows = [...names].map((module) => ({
  module,
  ms: median(samples.map((s) => s.get(module) ?? 0)),
}));
const totals = samples.map((s) => [...s.values()].reduce((a, b) => a + b, 0));
const r = (x) => +x.toFixed(2);
const line = (o) => console.log(JSON.stringify({ bench: 'startup-init', ...o }));
line({ figure: 'module_init_total_ms', value: r(median(totals)), starts: STARTS });
for (const { module, ms } of rows.sort((a, b) => b.ms - a.ms).slice(0, TOP)) {
  line({ figure: 'module_init_ms', module, value: r(ms) });
}

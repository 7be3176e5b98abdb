#!/usr/bin/env node
/**
 * Technique files through both parsers: every technique markdown file of the corpus (and, with
 * `--random N`, N seeded random technique files) read by mhl's `parseTechnique` and by the
 * public workflow-server's markdown loader (built from its snapshot by
 * scripts/build-workflow-server.mjs), comparing capability, inputs, outputs, protocol and rules
 * as JSON text, so key order counts. Prints one line per differing file, then a summary line.
 * Needs `npm run build` first.
 *
 *   node scripts/compare-techniques.mjs [--random N] [--seed S] [-v]
 */
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const corpus = process.env.SESSIONS_CORPUS ?? '/work/shared/corpus/workflow-server';
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const verbose = process.argv.includes('-v');
const entry = execFileSync(process.execPath, [join(repo, 'scripts', 'build-workflow-server.mjs')], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'ignore'],
}).trim();
const pub = await import(
  pathToFileURL(join(dirname(entry), 'loaders', 'markdown-technique-loader.js')).href
);
const { parseTechnique } = await import(
  pathToFileURL(join(repo, 'dist', 'surfaces', 'sessions', 'definition', 'technique-parse.js')).href
);
// The public loader logs a warning per file it refuses; the comparison reports those itself.
console.warn = () => {};
process.stderr.write = () => true;

const FIELDS = ['capability', 'inputs', 'outputs', 'protocol', 'rules'];
const view = (t) => (t ? JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, t[f]]))) : 'null');

/** The public loader's reading of `file` under `techniquesDir`, or null when it refuses it. */
async function publicRead(techniquesDir, file) {
  const parts = relative(techniquesDir, file).split('/');
  const name = basename(file, '.md');
  try {
    if (parts.length === 1 && name !== 'TECHNIQUE')
      return await pub.tryLoadMarkdownTechnique(techniquesDir, name);
    if (name === 'TECHNIQUE' && parts.length > 1)
      return await pub.tryLoadMarkdownTechnique(techniquesDir, parts.slice(0, -1).join('/'));
    return await pub.tryLoadNestedTechnique(
      techniquesDir,
      parts.slice(0, -1).join('/') || '.',
      name,
    );
  } catch {
    return null;
  }
}

let same = 0;
let differ = 0;
async function check(label, techniquesDir, file) {
  const a = view(parseTechnique(basename(file, '.md'), readFileSync(file, 'utf8')));
  const b = view(await publicRead(techniquesDir, file));
  if (a === b) return same++;
  differ++;
  process.stdout.write(`${JSON.stringify({ file: label })}\n`);
  if (verbose) process.stdout.write(`  mhl    ${a}\n  public ${b}\n`);
}

function files(dir, out = []) {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) files(p, out);
    else if (e.endsWith('.md') && e !== 'README.md') out.push(p);
  }
  return out;
}

for (const wf of readdirSync(corpus).sort()) {
  const dir = join(corpus, wf, 'techniques');
  if (
    !statSync(join(corpus, wf)).isDirectory() ||
    !readdirSync(join(corpus, wf)).includes('techniques')
  )
    continue;
  for (const f of files(dir)) await check(`${wf}/${relative(dir, f)}`, dir, f);
}

// Random files from the line shapes the parsing rules turn on: items at several indents and
// markers, continuation and blank lines, fences, headings of neighbouring levels, reserved
// sub-sections in any case, links, CRLF.
const random = arg('--random', 0);
let seed = arg('--seed', 1);
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = (a) => a[Math.floor(rnd() * a.length)];
const LINES = [
  () => '',
  () => pick(['   ', '\t']),
  () =>
    `${pick(['-', '*', '1.', '12.', '+'])}${pick([' ', '  ', '\t', ''])}${pick(['step', 'Call `x`', '', ' ', 'a  '])}`,
  () => `${pick(['  ', '   ', '    ', '\t'])}${pick(['-', '*', '2.'])} nested`,
  () => `${pick(['', '  ', '   ', '\t'])}continuation ${pick(['text', 'more  '])}`,
  () => pick(['```', '```yaml', '   ```']),
  () =>
    `${pick(['##', '###', '####', '#####'])}${pick([' ', '  ', '\t', ''])}${pick(['1. Title', 'Initial', 'final', 'Sub', '2.', ''])}${pick(['', '  '])}`,
  () => pick(['key: value', '# comment', '> quote', '| a | b |']),
  () => `see [r](../resources/${pick(['x', 'y'])}.md#a) and [t](./TECHNIQUE.md)`,
];
const lines = (n) => Array.from({ length: n }, () => pick(LINES)()).join('\n');
if (random > 0) {
  const root = mkdtempSync(join(tmpdir(), 'mhl-techniques-'));
  const dir = join(root, 'techniques');
  mkdirSync(dir);
  try {
    for (let i = 0; i < random; i++) {
      const parts = [`## Capability\n\n${rnd() < 0.9 ? 'Does things.' : lines(3)}`];
      if (rnd() < 0.6)
        parts.push(
          `## Inputs\n\n### a\n\n${lines(3)}\n\n#### ${pick(['default', 'Default', 'c'])}\n\n${pick(['`v`', '``v``', 'v'])}\n\n### b\n\n${lines(2)}`,
        );
      if (rnd() < 0.6)
        parts.push(
          `## Outputs\n\n### o\n\n${lines(2)}\n\n#### ${pick(['artifact', 'Artifact', 'c'])}\n\n${pick(['`f.md`', 'f.md', 'bad'])}\n\n#### ${pick(['audience', 'other'])}\n\n${pick(['agent', 'human', '`agent`'])}`,
        );
      if (rnd() < 0.95)
        parts.push(`## ${pick(['Protocol', 'protocol'])}\n\n${lines(Math.floor(rnd() * 14))}`);
      if (rnd() < 0.5) parts.push(`## Rules\n\n${lines(6)}`);
      if (rnd() < 0.1) parts.push('## Protocol\n\n- a second protocol section');
      const text = `---\nmetadata:\n  version: 1.0.0\n---\n\n${parts.join('\n\n')}\n`;
      const file = join(dir, 't.md');
      writeFileSync(file, rnd() < 0.1 ? text.replace(/\n/g, '\r\n') : text);
      await check(`random #${i}`, dir, file);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
process.stdout.write(`${JSON.stringify({ same, differ })}\n`);

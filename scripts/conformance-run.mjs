/**
 * Driver for scripts/conformance.sh: serves test/fixtures/conformance over Streamable HTTP
 * with the built CLI, runs every server scenario of the conformance suite 0.1.16 and the
 * stateless and input-required scenarios of the 0.2 line against it (each suite on Node 22),
 * and prints one line per scenario and `passed/applicable/total`. It installs nothing: the
 * shell script hands it the Node 22 binary and the two suites' entry points.
 *
 * Usage: node scripts/conformance-run.mjs --node22 BIN --suite NAME=ENTRY[:FILTER] ... --out DIR
 *          [--only REGEX]
 *   FILTER is a regular expression over a suite's scenario names (default: every server
 *   scenario); --only narrows every suite further (a by-hand re-run of a few scenarios).
 * Exit: 0 when every applicable scenario passed, 1 when one failed, 2 when setup failed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
const FOLDER = 'test/fixtures/conformance';
const SCENARIO_TIMEOUT_MS = 60_000;

/**
 * Scenarios that cannot apply to a workflow server, with the reason. docs/conformance.md
 * explains each at length; keep the two in step.
 */
const NOT_APPLICABLE = {
  'tools-call-image':
    'a workflow result is JSON (text + structuredContent); MHL has no image content',
  'tools-call-audio':
    'a workflow result is JSON (text + structuredContent); MHL has no audio content',
  'tools-call-embedded-resource':
    'a workflow result is JSON (text + structuredContent); MHL has no resource content',
  'tools-call-mixed-content': 'needs image and resource content blocks in a tool result',
  'tools-call-sampling':
    'MHL agents run their own engines; a workflow cannot ask the client to sample',
  'input-required-result-basic-sampling':
    'MHL agents run their own engines; a workflow cannot ask the client to sample',
  'input-required-result-basic-list-roots': 'a workflow cannot ask the client for its roots',
  'input-required-result-multiple-input-requests':
    'needs sampling and roots/list input requests beside elicitation',
  'resources-read-text':
    'resources are the server\u2019s own (mhl://workflow/…, mhl://run/…); a folder cannot add test://',
  'resources-read-binary': 'resources are the server\u2019s own; MHL serves no binary resource',
  'resources-templates-read':
    'resources are the server\u2019s own; a folder cannot add the test://template/{id}/data template',
  'resources-subscribe':
    'it subscribes to test://watched-resource, which a folder cannot add (unknown URI: -32002)',
  'resources-unsubscribe':
    'it subscribes to test://watched-resource, which a folder cannot add (unknown URI: -32002)',
  'prompts-get-embedded-resource': 'an MHL prompt renders to one text message',
  'prompts-get-with-image': 'an MHL prompt renders to one text message',
  'input-required-result-non-tool-request':
    'an MHL prompt is a template: prompts/get cannot pause for input',
  'input-required-result-capability-check':
    'passes only with a sampling input request; a workflow can ask for its inputs only',
};

/**
 * Checks, inside otherwise applicable scenarios, that cannot apply to a workflow server: they
 * are left out of the verdict and named in the scenario's line.
 */
const NOT_APPLICABLE_CHECKS = {
  'sep-2575-server-rejects-undeclared-capability': 'needs a tool that uses sampling',
  'sep-2575-missing-capability-http-400': 'needs a tool that uses sampling',
  'elicitation-sep1330-titled-single': 'MHL enum variants have no titles',
  'elicitation-sep1330-legacy-enumnames': 'MHL enum variants have no titles',
  'elicitation-sep1330-titled-multi': 'MHL enum variants have no titles',
};

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

function options() {
  const { values } = parseArgs({
    options: {
      node22: { type: 'string' },
      suite: { type: 'string', multiple: true },
      out: { type: 'string' },
      only: { type: 'string' },
    },
  });
  if (!values.node22 || !values.suite?.length || !values.out)
    fail('usage: conformance-run.mjs --node22 BIN --suite NAME=ENTRY[:FILTER] ... --out DIR');
  const suites = values.suite.map((spec) => {
    const [name, rest] = spec.split(/=(.*)/s);
    const [entry, filter] = rest.split(/:(.*)/s);
    return { name, entry, filter: filter ? new RegExp(filter) : undefined };
  });
  const only = values.only ? new RegExp(values.only) : undefined;
  return { node22: values.node22, suites, out: values.out, only };
}

/** The suite's server scenario names, from its `list` command (the section before "Client"). */
function serverScenarios(node22, suite) {
  const listed = spawnSync(node22, [suite.entry, 'list'], { encoding: 'utf8' });
  if (listed.status !== 0) fail(`${suite.name}: list failed: ${listed.stderr}`);
  const section = listed.stdout.split(/^Client scenarios/m)[0] ?? '';
  const names = [...section.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1]);
  return suite.filter ? names.filter((n) => suite.filter.test(n)) : names;
}

/** Starts `mhl serve mcp --http` on a free port; resolves with the server and its MCP URL. */
function startServer() {
  const child = spawn(
    process.execPath,
    ['dist/bin/mhl.js', 'serve', 'mcp', '--http', FOLDER, '--port', '0'],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  return new Promise((done, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
      const found = /listening on (http:\/\/\S+)/.exec(stderr);
      if (found) done({ child, url: `${found[1]}/mcp`, log: () => stderr });
    });
    child.on('close', () => reject(new Error(`server exited:\n${stderr}`)));
  });
}

/** Runs one scenario; resolves with the checks it saved (empty when it saved none). */
function runScenario(node22, suite, scenario, url, out) {
  const dir = join(out, suite.name, scenario);
  mkdirSync(dir, { recursive: true });
  const args = [suite.entry, 'server', '--url', url, '--scenario', scenario, '-o', dir];
  return new Promise((done) => {
    const child = spawn(node22, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), SCENARIO_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, checks: readChecks(dir), output });
    });
  });
}

/** Every checks.json under `dir` (the suite writes one per run, in a dated subfolder). */
function readChecks(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .filter((f) => String(f).endsWith('checks.json'))
    .flatMap((f) => JSON.parse(readFileSync(join(dir, String(f)), 'utf8')));
}

/**
 * pass: the suite saved checks and none of the applicable ones failed or warned. The suite's
 * exit code is not used: it also counts the checks left out above.
 */
function verdict({ code, checks }) {
  if (checks.length === 0) return { passed: false, why: `no checks saved (exit ${code})` };
  const skipped = checks.filter((c) => NOT_APPLICABLE_CHECKS[c.id] !== undefined);
  const bad = checks.filter(
    (c) =>
      (c.status === 'FAILURE' || c.status === 'WARNING') &&
      NOT_APPLICABLE_CHECKS[c.id] === undefined,
  );
  const notes = [
    ...bad.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`),
    ...[...new Set(skipped.map((c) => c.id))].map(
      (id) => `${id} n/a: ${NOT_APPLICABLE_CHECKS[id]}`,
    ),
  ];
  if (bad.length === 0 && !checks.some((c) => c.status === 'SUCCESS'))
    notes.push('informational checks only');
  return { passed: bad.length === 0, why: notes.join('; ') };
}

async function main() {
  const { node22, suites, out, only } = options();
  if (!existsSync(join(ROOT, 'dist/bin/mhl.js'))) fail('dist/bin/mhl.js missing: npm run build');
  const server = await startServer().catch((e) => fail(e.message));
  console.error(`server: ${server.url}`);
  let total = 0;
  let applicable = 0;
  let passed = 0;
  try {
    for (const suite of suites) {
      for (const scenario of serverScenarios(node22, suite)) {
        if (only && !only.test(scenario)) continue;
        total += 1;
        const result = await runScenario(node22, suite, scenario, server.url, out);
        const { passed: ok, why } = verdict(result);
        const na = NOT_APPLICABLE[scenario];
        if (na === undefined) {
          applicable += 1;
          if (ok) passed += 1;
        }
        const label = na !== undefined ? 'N/A ' : ok ? 'PASS' : 'FAIL';
        const detail = na !== undefined ? na : why;
        console.log(`${label} ${suite.name} ${scenario}${detail ? `  (${detail})` : ''}`);
      }
    }
  } finally {
    server.child.kill('SIGTERM');
  }
  console.log(`conformance: ${passed}/${applicable}/${total} (passed/applicable/total)`);
  process.exit(passed === applicable ? 0 : 1);
}

await main();

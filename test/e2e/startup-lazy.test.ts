// What `mhl serve mcp` loads before its first answer. Ajv and yaml cost ~40 ms to load, so a
// pipelines server leaves them until after it answers (src/lang/lazy-modules.ts); a static
// `import ... from 'yaml'` anywhere the server imports would load yaml at every start again.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';

// Records every module request until the process first writes to stdout (its first answer).
const PRELOAD = `
const Module = require('node:module');
const { writeFileSync } = require('node:fs');
const loaded = [];
let answered = false;
const load = Module._load;
Module._load = function (request, ...rest) {
  if (!answered) loaded.push(request);
  return load.call(this, request, ...rest);
};
const write = process.stdout.write;
process.stdout.write = function (...args) {
  answered = true;
  return write.apply(this, args);
};
process.on('exit', () => writeFileSync(process.env.MHL_TEST_LOADED, JSON.stringify(loaded)));
`;

const DISCOVER = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
})}\n`;

describe('mhl serve mcp: start-up', () => {
  it('answers its first request before it loads yaml or Ajv', async () => {
    const dir = tempDir('mhl-startup-lazy-');
    const preload = join(dir, 'preload.cjs');
    const record = join(dir, 'loaded.json');
    writeFileSync(preload, PRELOAD);
    const result = await runCli(['serve', 'mcp', join(REPO_ROOT, 'test/fixtures/serve-steps')], {
      input: DISCOVER,
      env: {
        NODE_OPTIONS: `--require ${preload}`,
        MHL_TEST_LOADED: record,
        MHL_CACHE_DIR: join(dir, 'cache'),
      },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"id":1,"result"/);
    const loaded = JSON.parse(readFileSync(record, 'utf8')) as string[];
    assert.ok(loaded.includes('node:child_process'), "the record covers the bundle's own requires");
    const eager = loaded.filter((request) => /^(yaml|ajv)(\/|$)/.test(request));
    assert.deepEqual(eager, [], 'loaded before the first answer');
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  configurationId,
  parseUnit,
  quoteArg,
  renderUnit,
  type ServiceDefinition,
  serveArgv,
  unitDrift,
} from '../../../src/service/index.js';
import { CLI, tempDir } from '../../helpers/cli.js';

const ANALYZE = '/usr/bin/systemd-analyze';

function definition(over: Partial<ServiceDefinition> = {}): ServiceDefinition {
  return {
    schema_version: 1,
    service_id: 'mhl-managed-mcp.service@1000',
    version: '0.1.0',
    node: process.execPath,
    mhl: CLI,
    workflows: '/srv/workflows',
    cwd: '/srv',
    port: 8787,
    max_active: 32,
    default_timeout_ms: 300000,
    config_home: '/home/ana/.config',
    ...over,
  };
}

/** The words of a setting, as systemd reads them (quotes, \\, %%; $$ on command lines only). */
function execWords(line: string, command = true): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    const raw = (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? '')).replace(
      /%%/g,
      '%',
    );
    out.push(command ? raw.replace(/\$\$/g, '$') : raw);
  }
  return out;
}

/** Runs `systemd-analyze verify --user` on a unit written into a fresh folder. */
function verify(text: string): { code: number | null; output: string } {
  const dir = tempDir('mhl-unit-');
  const runtime = join(dir, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  const file = join(dir, 'mhl-managed-mcp.service');
  writeFileSync(file, text);
  const run = spawnSync(ANALYZE, ['verify', '--user', file], {
    encoding: 'utf8',
    env: { ...process.env, XDG_RUNTIME_DIR: runtime, SYSTEMD_LOG_COLOR: '0' },
  });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

const haveAnalyze = existsSync(ANALYZE);
if (!haveAnalyze && process.env['CI'] !== 'true') {
  process.stdout.write(`# skipping systemd-analyze checks: ${ANALYZE} is not installed\n`);
}

describe('service unit file', () => {
  it('passes systemd-analyze verify, with hostile characters in every path', {
    skip: !haveAnalyze && process.env['CI'] !== 'true',
  }, () => {
    const dir = tempDir('mhl unit %h $HOME "q" \\ ');
    const mhl = join(dir, 'mhl 100% $x.js');
    copyFileSync(CLI, mhl);
    for (const def of [
      definition(),
      definition({ mhl, workflows: join(dir, 'flows'), cwd: dir, config_home: dir }),
    ]) {
      const result = verify(renderUnit(def));
      assert.equal(result.code, 0, result.output);
      assert.equal(result.output.trim(), '');
    }
  });

  it('is refused by systemd-analyze when an ExecStart is broken', {
    skip: !haveAnalyze && process.env['CI'] !== 'true',
  }, () => {
    const broken = renderUnit(definition()).replace(/^ExecStart=.*$/m, 'ExecStart=relative/node');
    assert.notEqual(verify(broken).code, 0);
  });

  it('quotes every argument so the manager reads back the exact argv', () => {
    const hostile = definition({
      workflows: '/srv/a "b" \\c %h $HOME ${X} %%',
      cwd: '/tmp/with space',
    });
    const exec = parseUnit(renderUnit(hostile)).get('Service.ExecStart') ?? '';
    assert.deepEqual(execWords(exec), serveArgv(hostile));
    const env = definition({ config_home: '/home/a $b %c "d" \\e' });
    const line = parseUnit(renderUnit(env)).get('Service.Environment') ?? '';
    assert.deepEqual(execWords(line, false), [`XDG_CONFIG_HOME=${env.config_home}`]);
    assert.equal(quoteArg('%'), '"%%"');
    assert.equal(quoteArg('$'), '"$$"');
  });

  it('gives the served process a durable --state-dir, so async runs survive a restart', () => {
    const def = definition({ state_dir: '/home/ana/.local/state/mhl/managed-mcp/runs' });
    const argv = serveArgv(def);
    const at = argv.indexOf('--state-dir');
    assert.ok(at > 0, argv.join(' '));
    assert.equal(argv[at + 1], def.state_dir);
    const exec = parseUnit(renderUnit(def)).get('Service.ExecStart') ?? '';
    assert.deepEqual(execWords(exec), argv);
    assert.notEqual(configurationId(def), configurationId(definition()));
  });

  it('carries the ownership marker, the configuration identity and default.target', () => {
    const def = definition();
    const unit = parseUnit(renderUnit(def));
    assert.equal(unit.get('Unit.X-MhlManaged'), def.service_id);
    assert.equal(unit.get('Unit.X-MhlConfigurationId'), configurationId(def));
    assert.equal(unit.get('Install.WantedBy'), 'default.target');
    assert.ok(serveArgv(def).includes(configurationId(def)));
    assert.equal(renderUnit(def), renderUnit(definition()), 'the same definition, the same bytes');
  });

  it('reports drift property by property, sorted', () => {
    const text = renderUnit(definition());
    const edited = `${text.replace('RestartSec=60', 'RestartSec=1')}\n[Service]\nNice=5\n`;
    assert.deepEqual(unitDrift(text, edited), [
      { property: 'Service.Nice', expected: null, actual: '5' },
      { property: 'Service.RestartSec', expected: '60', actual: '1' },
    ]);
    assert.deepEqual(unitDrift(text, text), []);
  });

  it('gives every distinct definition its own identity', () => {
    const ids = new Set(
      [definition(), definition({ port: 8788 }), definition({ max_active: 2 })].map(
        configurationId,
      ),
    );
    assert.equal(ids.size, 3);
    assert.match(configurationId(definition()), /^[0-9a-f]{32}$/);
  });
});

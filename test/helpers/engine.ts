/**
 * Driving `mhl serve mcp --profile workflow-engine` from tests as a host would: the built CLI
 * in a child process, an official SDK client (v1 on stdio by default; v1 or v2 over HTTP), and
 * the pieces a host builds: a confirmed state, a host description, a project folder where
 * setup assets and artifacts are written and attested.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO_ROOT, tempDir } from './cli.js';

export const ENGINE_RELEASE = resolve(REPO_ROOT, 'examples/engine-release');
export const ENGINE_TARGET = resolve(REPO_ROOT, 'examples/engine-release-1.3.0');
/** A test key (at least 32 bytes); real servers take theirs from a secret store. */
export const TEST_KEY = 'test-engine-key-0123456789abcdefghijklmnop';

export const TOOLS = {
  start: 'rimthan.start_workflow',
  continue: 'rimthan.continue_workflow',
  prepare: 'rimthan.prepare_step_validation',
  submit: 'rimthan.submit_step_validation',
} as const;

// Results are read field by field as JSON; the wire schemas are checked by the server and the SDK.
// biome-ignore lint/suspicious/noExplicitAny: a test reads deep JSON answers without narrowing each level
export type Structured = any;

export interface CallAnswer {
  readonly isError: boolean;
  readonly structured: Structured;
  readonly text: string;
  /** `_meta["mhl/diagnostic"]`, on refused arguments and domain errors. */
  readonly diagnostic: Structured;
}

/** One engine server on stdio with a v1 SDK client. */
export class EngineSession {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  stderr = '';
  readonly #watchers = new Set<() => void>();

  constructor(args: readonly string[], env: Record<string, string> = {}) {
    this.transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', '--profile', 'workflow-engine', ...args],
      env: { ...(process.env as Record<string, string>), MHL_ENGINE_KEY: TEST_KEY, ...env },
      stderr: 'pipe',
    });
    this.transport.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString('utf8');
      for (const watch of this.#watchers) watch();
    });
    this.client = new Client({ name: 'engine-e2e', version: '1.0.0' });
  }

  async connect(): Promise<this> {
    await this.client.connect(this.transport);
    return this;
  }

  async call(name: string, args: Record<string, unknown>): Promise<CallAnswer> {
    const result = (await this.client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: Structured;
      content?: { type: string; text: string }[];
      _meta?: Structured;
    };
    return {
      isError: result.isError === true,
      structured: result.structuredContent ?? {},
      text: result.content?.[0]?.text ?? '',
      diagnostic: result._meta?.['mhl/diagnostic'],
    };
  }

  /** Resolves once the server's stderr holds `match` (a log line, never a sleep). */
  logged(match: string): Promise<void> {
    return new Promise((done) => {
      const check = () => {
        if (!this.stderr.includes(match)) return;
        this.#watchers.delete(check);
        done();
      };
      this.#watchers.add(check);
      check();
    });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** Starts and connects an engine session on the example release (and its migration target). */
export function engineSession(
  args: readonly string[] = [ENGINE_RELEASE, '--migration-target', ENGINE_TARGET],
  env: Record<string, string> = {},
): Promise<EngineSession> {
  return new EngineSession(args, env).connect();
}

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A confirmed state: every field confirmed now (or at `at`) by the user. */
export function confirmed(state: Record<string, unknown>, at = new Date()): Structured {
  const confirmations: Record<string, unknown> = {};
  for (const field of Object.keys(state)) {
    confirmations[field] = {
      confirmed_at: at.toISOString(),
      confirmed_by: 'user@example.com',
      source: 'user',
    };
  }
  return { state, confirmations };
}

export const POLICY = { writable_paths: ['.'], forbidden_paths: ['.git'], allow_symlinks: false };

/**
 * The two-validator fixture `test/fixtures/engine/loop-release` and the host its tests walk it
 * with: writes confined to `.rimthan` and `out`, a web-capable validator, adapter 1.0.0.
 */
export const LOOP_RELEASE = resolve(REPO_ROOT, 'test/fixtures/engine/loop-release');
export const LOOP_POLICY = {
  writable_paths: ['.rimthan', 'out'],
  forbidden_paths: [],
  allow_symlinks: false,
};
export const LOOP_HOST = {
  harness: 'claude-code',
  adapter: { id: 'claude-code', version: '1.0.0' },
  capabilities: ['file-write'],
  validator_capabilities: ['web'],
  repository_policy: LOOP_POLICY,
};
/** Who ran the validators, as reports against the loop fixture name it. */
export const LOOP_BY = { harness: 'claude-code', adapter_version: '1.0.0' };

export function claudeHost(overrides: Record<string, unknown> = {}): Structured {
  return {
    harness: 'claude-code',
    adapter: { id: 'claude-code', version: '1.0.3' },
    capabilities: ['file-write', 'subagents'],
    validator_capabilities: ['subagent'],
    repository_policy: POLICY,
    ...overrides,
  };
}

/** A fresh project folder for one walk. */
export function project(): string {
  return tempDir('mhl-engine-project-');
}

/** Writes `text` at `rel` under `root` (making folders). */
export function put(root: string, rel: string, text: string | Buffer): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

/**
 * What a host does at setup-workspace: installs each host asset at its install path and
 * returns the workspace manifest artifact listing them.
 */
export function installSetup(root: string, step: Structured, host: Structured): Structured {
  const assets: Structured[] = [];
  for (const kind of ['prompts', 'skills', 'subagents']) {
    for (const asset of step.host_assets[kind]) {
      put(root, asset.install_path, asset.text);
      assets.push({ kind, name: asset.name, path: asset.install_path, sha256: asset.sha256 });
    }
  }
  const manifest = {
    harness: host.harness,
    adapter: host.adapter,
    capabilities: [...host.capabilities].sort(),
    validator_capabilities: [...host.validator_capabilities].sort(),
    assets,
  };
  return artifact(
    root,
    'workspace-manifest',
    '.rimthan/workspace-manifest.json',
    JSON.stringify(manifest),
  );
}

/** Writes an artifact on disk and returns it as prepare takes it. */
export function artifact(root: string, id: string, path: string, text: string): Structured {
  put(root, path, text);
  const media_type = path.endsWith('.md') ? 'text/markdown' : 'application/json';
  return { id, path, media_type, content: text, encoding: 'utf8' };
}

export function attestation(root: string, extra: Record<string, unknown> = {}): Structured {
  return { project_root: root, repository_policy: POLICY, ...extra };
}

/** A report for every validator prepare returned, with `outcome`. */
export function reports(
  prepared: Structured,
  outcome: 'pass' | 'fail' = 'pass',
  by: Structured = { harness: 'claude-code', adapter_version: '1.0.3' },
): Structured[] {
  return prepared.validators.map((v: Structured) => ({
    validator_id: v.id,
    version: v.version,
    outcome,
    findings: outcome === 'fail' ? [{ message: 'a claim has no source', severity: 'error' }] : [],
    instruction_digest: v.instruction_digest,
    input_digest: v.input_digest,
    validated_by: by,
  }));
}

export const LITERATURE = JSON.stringify({
  question: 'Should we adopt the new cache?',
  sources: [
    { title: 'Cache study', url: 'https://example.com/a', claim: 'halves latency' },
    { title: 'Field report', url: 'https://example.org/b', claim: 'no regressions' },
  ],
});

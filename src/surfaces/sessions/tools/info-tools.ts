/**
 * The tools that need no session (spec session-profile §3.1): `discover` (server lines and the
 * bootstrap protocol of `meta`), `list_workflows` (every manifest but `meta`'s, load errors
 * reported, never dropped) and `health_check`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import type { SessionsContext } from '../context.js';
import { manifestPath, readManifest } from '../definition/loader.js';
import { readText } from '../definition/yaml-files.js';
import { jsonResult, textResult, toYaml } from './common.js';

/**
 * The argument schema, built on first use rather than at import: only the sessions surface
 * builds it (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for it (under 0.05 ms of start-up, measured with initprof).
 */
function buildInfoSchemas() {
  const NoInput = z.object({});

  return { noInput: NoInput };
}

let built: ReturnType<typeof buildInfoSchemas> | undefined;

function infoSchemas(): ReturnType<typeof buildInfoSchemas> {
  built ??= buildInfoSchemas();
  return built;
}

type Schemas = ReturnType<typeof infoSchemas>;

/** Every workflow id under the root (folders with a manifest, or top-level YAML files), `meta` excluded. */
export function workflowIds(root: string): string[] {
  let names: import('node:fs').Dirent[] = [];
  try {
    names = readdirSync(root, { withFileTypes: true });
  } catch {
    // An unreadable root lists nothing; start-up already checked it exists.
  }
  const ids: string[] = [];
  for (const n of names) {
    if (n.name.startsWith('.') || n.name === 'meta') continue;
    if (n.isDirectory() && manifestPath(root, n.name)?.startsWith(`${n.name}/`)) ids.push(n.name);
    else if (n.isFile() && /\.ya?ml$/.test(n.name)) ids.push(n.name.replace(/\.ya?ml$/, ''));
  }
  return ids.sort();
}

export const discover: SessionTool<Schemas['noInput']> = {
  name: 'discover',
  description: 'Entry point: server info and the bootstrap procedure. No session_index required.',
  input: () => infoSchemas().noInput,
  traced: false,
  readOnly: true,
  run: (_args, ctx) => {
    const protocol = readText(join(ctx.root, 'meta', 'resources', 'bootstrap-protocol.md'));
    const lines = [
      `server: ${ctx.settings.serverName}`,
      `version: ${ctx.settings.serverVersion}`,
      'repo_binding: required — pass repo: "owner/repo" on start_session, derived from git via version-control::resolve-host-repo (the origin remote of the outermost superproject that claims the workspace checkout). The user or workspace AGENTS.md is a fallback only where that derivation yields nothing: a workspace that is not a git repo, or a host with no origin remote.',
    ];
    if (protocol !== undefined) lines.push('', protocol);
    return textResult(lines.join('\n'));
  },
};

export const listWorkflows: SessionTool<Schemas['noInput']> = {
  name: 'list_workflows',
  description:
    'List available workflows (id, title, version, tags). On load failures returns {workflows, load_errors}.',
  input: () => infoSchemas().noInput,
  traced: false,
  readOnly: true,
  run: (_args, ctx) => {
    const workflows: Record<string, unknown>[] = [];
    const errors: { file: string; error: string }[] = [];
    for (const id of workflowIds(ctx.root)) {
      try {
        const { manifest } = readManifest(ctx.root, id);
        workflows.push({
          id: manifest.id,
          title: manifest.title,
          version: manifest.version,
          ...(manifest.tags ? { tags: manifest.tags } : {}),
        });
      } catch (e) {
        errors.push({ file: manifestPath(ctx.root, id) ?? id, error: (e as Error).message });
      }
    }
    return textResult(toYaml(errors.length > 0 ? { workflows, load_errors: errors } : workflows));
  },
};

export const healthCheck: SessionTool<Schemas['noInput']> = {
  name: 'health_check',
  description: 'Server health: status, name, version, workflow count, uptime.',
  input: () => infoSchemas().noInput,
  traced: false,
  readOnly: true,
  run: (_args, ctx: SessionsContext) =>
    jsonResult({
      status: 'healthy',
      server: ctx.settings.serverName,
      version: ctx.settings.serverVersion,
      workflows_available: workflowIds(ctx.root).length,
      uptime_seconds: Math.floor((Date.now() - ctx.startedAt) / 1000),
      repo_binding: 'required_on_start_session',
    }),
};

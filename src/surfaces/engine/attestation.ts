/**
 * What a host attests on disk, checked by reading it back (`readback.ts`): outputs written at
 * their declared paths with the submitted bytes, within the repository policy and the output's
 * write policy; a step's inputs still the bytes their receipts name; and, for
 * `setup-workspace`, a workspace manifest that lists every host asset at the adapter's install
 * path with the release's exact bytes, for the bound harness, adapter and capabilities.
 */

import type { CheckedArtifact } from './artifact-checks.js';
import { sha256Hex } from './canonical-json.js';
import type { CheckpointPayload, HostBinding } from './checkpoint.js';
import { type Failure, failure } from './errors.js';
import type { RepositoryPolicy } from './host.js';
import { readBack } from './readback.js';
import type { LoadedWorkflow, Release, ReleaseFile } from './release.js';
import { isProjectPath } from './release-check.js';
import { type AdapterDef, hostAssetPath, type StepDef } from './release-schema.js';
import { installPath, requiredHostAssets } from './step-payload.js';

/** The largest host asset read back (release assets are held in memory whole anyway). */
const MAX_ASSET_BYTES = 1024 * 1024;

const under = (path: string, dir: string) =>
  dir === '.' || path === dir || path.startsWith(`${dir}/`);

/** `repository_policy_conflict` for each path the policy does not let the host write. */
export function policyFailures(
  policy: RepositoryPolicy,
  paths: readonly string[],
  at: string,
): Failure[] {
  const bad = [...policy.writable_paths, ...policy.forbidden_paths].filter(
    (p) => p !== '.' && !isProjectPath(p),
  );
  if (bad.length > 0) {
    return [
      failure('path_outside_project', 'policy paths must be project-relative without ..', at),
    ];
  }
  return paths
    .filter(
      (p) =>
        !policy.writable_paths.some((w) => under(p, w)) ||
        policy.forbidden_paths.some((f) => under(p, f)),
    )
    .map((p) =>
      failure(
        'repository_policy_conflict',
        `the repository policy does not allow writing ${p}`,
        at,
      ),
    );
}

/** Each checked output read back at its path: present, symlink-free, the submitted bytes. */
export function outputFailures(
  root: string,
  policy: RepositoryPolicy,
  checked: readonly CheckedArtifact[],
  cp: CheckpointPayload,
): Failure[] {
  const failures: Failure[] = [];
  for (const { output, sha256 } of checked) {
    const at = `artifacts.${output.id}`;
    const taken = Object.entries(cp.artifacts).find(
      ([id, r]) => id !== output.id && r.path === output.path,
    );
    if (taken && output.write_policy === 'create') {
      failures.push(
        failure(
          'repository_policy_conflict',
          `${output.path} holds artifact ${taken[0]}; ${output.id} may only create`,
          at,
        ),
      );
    }
    const read = readBack(root, output.path, output.max_bytes, policy.allow_symlinks);
    if (!read.ok)
      failures.push(
        failure(read.code, `artifact ${output.id} at ${output.path} could not be read back`, at),
      );
    else if (sha256Hex(read.bytes) !== sha256) {
      failures.push(
        failure(
          'output_attestation_required',
          `the file at ${output.path} is not the submitted ${output.id}`,
          at,
        ),
      );
    }
  }
  return failures;
}

/** The step's inputs read back: still the bytes of their receipts. */
export function inputFailures(
  root: string,
  policy: RepositoryPolicy,
  step: StepDef,
  cp: CheckpointPayload,
): Failure[] {
  return step.inputs.flatMap((id) => {
    const receipt = cp.artifacts[id];
    if (!receipt)
      return [failure('input_digest_mismatch', `input ${id} has no receipt`, `inputs.${id}`)];
    const read = readBack(root, receipt.path, receipt.bytes, policy.allow_symlinks);
    if (!read.ok || sha256Hex(read.bytes) !== receipt.sha256) {
      return [
        failure(
          'input_digest_mismatch',
          `input ${id} at ${receipt.path} is not the bytes its receipt names`,
          `inputs.${id}`,
        ),
      ];
    }
    return [];
  });
}

interface ManifestEntry {
  kind?: unknown;
  name?: unknown;
  path?: unknown;
  sha256?: unknown;
}

/** The setup step's workspace manifest against the bound host and the release's assets. */
export function workspaceFailures(
  release: Release,
  workflow: LoadedWorkflow,
  step: StepDef,
  adapter: AdapterDef,
  host: HostBinding,
  manifest: CheckedArtifact,
  root: string,
  policy: RepositoryPolicy,
): Failure[] {
  const failures: Failure[] = [];
  const mismatch = (message: string, path = 'artifacts.workspace-manifest') =>
    failures.push(failure('workspace_manifest_contract_mismatch', message, path));
  const doc = JSON.parse(manifest.bytes.toString('utf8')) as Record<string, unknown>;
  const adapterDoc = doc['adapter'] as { id?: unknown; version?: unknown } | undefined;
  if (doc['harness'] !== host.harness) mismatch('harness differs from the checkpoint host');
  if (adapterDoc?.id !== adapter.id || adapterDoc?.version !== host.adapter_version) {
    mismatch('adapter differs from the checkpoint host adapter');
  }
  const same = (a: unknown, b: readonly string[]) =>
    Array.isArray(a) && JSON.stringify([...a].sort()) === JSON.stringify(b);
  if (!same(doc['capabilities'], host.capabilities))
    mismatch('capabilities differ from the checkpoint host');
  if (!same(doc['validator_capabilities'], host.validator_capabilities)) {
    mismatch('validator_capabilities differ from the checkpoint host');
  }
  const entries = (Array.isArray(doc['assets']) ? doc['assets'] : []) as ManifestEntry[];
  const required = requiredHostAssets(workflow, step);
  const expected: { kind: string; name: string; path: string; sha256: string }[] = [];
  for (const kind of ['prompts', 'skills', 'subagents'] as const) {
    for (const name of required[kind]) {
      const file = release.files.get(hostAssetPath(kind, name)) as ReleaseFile;
      expected.push({ kind, name, path: installPath(adapter, kind, name), sha256: file.sha256 });
    }
  }
  for (const want of expected) {
    const got = entries.filter((e) => e.kind === want.kind && e.name === want.name);
    if (got.length !== 1 || got[0]?.path !== want.path || got[0]?.sha256 !== want.sha256) {
      mismatch(
        `${want.kind} ${want.name} must be listed once at ${want.path} with the release's digest`,
      );
      continue;
    }
    const read = readBack(root, want.path, MAX_ASSET_BYTES, policy.allow_symlinks);
    if (!read.ok)
      failures.push(
        failure(read.code, `${want.kind} ${want.name} at ${want.path} could not be read back`),
      );
    else if (sha256Hex(read.bytes) !== want.sha256)
      mismatch(`${want.path} is not the release's ${want.kind} ${want.name}`);
  }
  if (entries.length !== expected.length)
    mismatch('the manifest lists assets the workflow does not deliver');
  failures.push(
    ...policyFailures(
      policy,
      expected.map((e) => e.path),
      'attestation.repository_policy',
    ),
  );
  return failures;
}

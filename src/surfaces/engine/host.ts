/**
 * Host binding (`_host_blockers`): the host's harness must match a host adapter of the release
 * at a compatible version (same major, minor at least the released one), and its capabilities
 * must cover the workflow's `required_capabilities`. A start binds only the harness, the adapter
 * version and the sorted capability lists into the checkpoint.
 */
import type { HostBinding } from './checkpoint.js';
import { type Failure, failure } from './errors.js';
import type { LoadedWorkflow, Release } from './release.js';
import type { AdapterDef } from './release-schema.js';
import { compatibleVersion } from './semver.js';

export interface HostArgument {
  readonly harness: string;
  readonly adapter: { readonly id: string; readonly version: string };
  readonly capabilities: readonly string[];
  readonly validator_capabilities: readonly string[];
  readonly repository_policy: RepositoryPolicy;
}

export interface RepositoryPolicy {
  readonly writable_paths: readonly string[];
  readonly forbidden_paths: readonly string[];
  readonly allow_symlinks: boolean;
}

/** Sorted, without repeats. */
export function sortedSet(items: readonly string[]): string[] {
  return [...new Set(items)].sort();
}

/** The checkpoint's host binding for `host`. */
export function hostBinding(host: HostArgument): HostBinding {
  return {
    harness: host.harness,
    adapter_version: host.adapter.version,
    capabilities: sortedSet(host.capabilities),
    validator_capabilities: sortedSet(host.validator_capabilities),
  };
}

/** The adapter of `release` a bound host uses: its harness at a compatible version. */
export function boundAdapter(release: Release, host: HostBinding): AdapterDef | undefined {
  return release.adapters.find(
    (a) => a.harness === host.harness && compatibleVersion(host.adapter_version, a.version),
  );
}

/** Why `host` cannot walk `workflow` of `release` (`host_incompatible`), or none. */
export function hostBlockers(
  release: Release,
  workflow: LoadedWorkflow,
  host: {
    harness: string;
    adapterId?: string;
    adapterVersion: string;
    capabilities: readonly string[];
  },
): Failure[] {
  const failures: Failure[] = [];
  const adapter = release.adapters.find(
    (a) =>
      a.harness === host.harness &&
      (host.adapterId === undefined || a.id === host.adapterId) &&
      compatibleVersion(host.adapterVersion, a.version),
  );
  if (!adapter) {
    const offered = release.adapters.map((a) => `${a.id}@${a.version} (${a.harness})`).join(', ');
    failures.push(
      failure(
        'host_incompatible',
        `no host adapter of this release matches harness ${host.harness} at ${host.adapterVersion}; the release has ${offered}`,
        'host.adapter',
      ),
    );
  }
  const missing = workflow.def.required_capabilities.filter((c) => !host.capabilities.includes(c));
  if (missing.length > 0) {
    failures.push(
      failure(
        'host_incompatible',
        `the host lacks capabilities ${missing.join(', ')}`,
        'host.capabilities',
      ),
    );
  }
  return failures;
}

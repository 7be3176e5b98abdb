/**
 * A loaded, verified release as the tools use it: immutable once built. Everything a call needs
 * is here (definitions, asset bytes and digests, compiled schemas), so a call reads no file of
 * the release; only `release-load.ts` builds one.
 */
import type { ValidateFunction } from 'ajv';
import type { AdapterDef, StepDef, WorkflowDef } from './release-schema.js';

/** One file of a release. */
export interface ReleaseFile {
  readonly path: string;
  readonly text: string;
  readonly sha256: string;
}

/** A workflow of a release, with what the tools derive from it once. */
export interface LoadedWorkflow {
  readonly def: WorkflowDef;
  /** Digest of the definition and of every asset it references. */
  readonly manifestDigest: string;
  readonly stateValidator: ValidateFunction;
  readonly steps: ReadonlyMap<string, StepDef>;
}

export interface Release {
  readonly id: string;
  readonly version: string;
  /** SHA-256 over the canonical listing of every file's path and SHA-256. */
  readonly digest: string;
  readonly files: ReadonlyMap<string, ReleaseFile>;
  readonly workflows: readonly LoadedWorkflow[];
  readonly adapters: readonly AdapterDef[];
  /** Compiled output schemas, by asset path. */
  readonly schemas: ReadonlyMap<string, ValidateFunction>;
}

/** The identity a token carries. */
export function releaseIdentity(release: Release): { id: string; version: string; digest: string } {
  return { id: release.id, version: release.version, digest: release.digest };
}

/** The workflow `id@version` of a release, if it has it. */
export function findWorkflow(
  release: Release,
  id: string,
  version: string,
): LoadedWorkflow | undefined {
  return release.workflows.find((w) => w.def.id === id && w.def.version === version);
}

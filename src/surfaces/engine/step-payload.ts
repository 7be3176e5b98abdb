/**
 * What a host receives for the step it is to perform: the exact step definition, its
 * instruction, every host asset with the path the adapter installs it at, the adapter, the
 * validators with their instructions, and the resource URIs of all of it. The setup step
 * carries every host asset the workflow uses, since it is where they are installed.
 */
import type { LoadedWorkflow, Release, ReleaseFile } from './release.js';
import { SETUP_STEP } from './release-check.js';
import { type AdapterDef, hostAssetPath, type StepDef } from './release-schema.js';

const KINDS = ['prompts', 'skills', 'subagents'] as const;
type Kind = (typeof KINDS)[number];

/** The resource URI of a release file. */
export function releaseUri(release: Release, path: string): string {
  return `mhl://engine/release/${release.digest}/${path}`;
}

function textAsset(release: Release, path: string) {
  const file = release.files.get(path) as ReleaseFile;
  return { path, sha256: file.sha256, text: file.text };
}

/** The host assets `step` needs installed: all of the workflow's for setup, else its own. */
export function requiredHostAssets(
  workflow: LoadedWorkflow,
  step: StepDef,
): Record<Kind, string[]> {
  const steps = step.id === SETUP_STEP ? workflow.def.steps : [step];
  const out = { prompts: [] as string[], skills: [] as string[], subagents: [] as string[] };
  for (const s of steps) {
    for (const kind of KINDS) {
      for (const name of s.host_assets[kind]) if (!out[kind].includes(name)) out[kind].push(name);
    }
  }
  return out;
}

/** Where the adapter installs the asset `kind`/`name`, project-relative. */
export function installPath(adapter: AdapterDef, kind: Kind, name: string): string {
  return adapter.delivery[kind].replaceAll('{name}', name);
}

/** A validator as a host runs it. */
export function validatorPayload(release: Release, v: StepDef['validators'][number]) {
  const instruction = textAsset(release, v.instruction);
  return {
    id: v.id,
    version: v.version,
    instruction,
    instruction_digest: instruction.sha256,
    report_required: v.report_required,
    requires_capabilities: v.requires_capabilities,
    inputs: v.inputs,
  };
}

/** The step payload of `step` for a host on `adapter`. */
export function stepPayload(
  release: Release,
  workflow: LoadedWorkflow,
  step: StepDef,
  adapter: AdapterDef,
) {
  const assets = requiredHostAssets(workflow, step);
  const uris = new Set<string>([releaseUri(release, step.instruction)]);
  const hostAssets = Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      assets[kind].map((name) => {
        const path = hostAssetPath(kind, name);
        uris.add(releaseUri(release, path));
        return {
          name,
          ...textAsset(release, path),
          install_path: installPath(adapter, kind, name),
        };
      }),
    ]),
  );
  for (const out of step.outputs) if (out.schema) uris.add(releaseUri(release, out.schema));
  for (const v of step.validators) uris.add(releaseUri(release, v.instruction));
  return {
    id: step.id,
    definition: step,
    instruction: textAsset(release, step.instruction),
    host_assets: hostAssets,
    host_adapter: {
      id: adapter.id,
      version: adapter.version,
      harness: adapter.harness,
      capabilities: adapter.capabilities,
      delivery: adapter.delivery,
    },
    validators: step.validators.map((v) => validatorPayload(release, v)),
    resources: [...uris],
  };
}

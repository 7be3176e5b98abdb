/**
 * Gates: a step with outputs or validators advances only on proof. A validator's input digest
 * binds its id, version, instruction and the digests of the artifacts it reads, so a pass is
 * reused only while all of those are identical; a step is proven when every output has a
 * receipt and every required validator a pass for the inputs as they are.
 */
import { canonicalDigest } from './canonical-json.js';
import type { CheckpointPayload } from './checkpoint.js';
import type { Release, ReleaseFile } from './release.js';
import type { StepDef, ValidatorDef } from './release-schema.js';

/** True when the step cannot advance on `continue_workflow` alone. */
export function isGated(step: StepDef): boolean {
  return step.outputs.length > 0 || step.validators.length > 0;
}

/** The artifact ids a validator reads: its `inputs`, else the step's outputs. */
export function validatorInputs(step: StepDef, v: ValidatorDef): string[] {
  return [...(v.inputs.length > 0 ? v.inputs : step.outputs.map((o) => o.id))].sort();
}

/** The key of a validator's receipts: `id@version`. */
export function validatorKey(v: { id: string; version: string }): string {
  return `${v.id}@${v.version}`;
}

/** The input digest of `v` over artifact digests `sha256Of(id)` (undefined: not all known). */
export function inputDigest(
  release: Release,
  step: StepDef,
  v: ValidatorDef,
  sha256Of: (id: string) => string | undefined,
): string | undefined {
  const artifacts: { id: string; sha256: string }[] = [];
  for (const id of validatorInputs(step, v)) {
    const sha256 = sha256Of(id);
    if (sha256 === undefined) return undefined;
    artifacts.push({ id, sha256 });
  }
  const instruction = (release.files.get(v.instruction) as ReleaseFile).sha256;
  return canonicalDigest({ validator: validatorKey(v), instruction, artifacts });
}

/** True when the checkpoint's receipts prove `step` done. */
export function stepProven(release: Release, step: StepDef, cp: CheckpointPayload): boolean {
  if (!step.outputs.every((o) => cp.artifacts[o.id] !== undefined)) return false;
  return step.validators
    .filter((v) => v.report_required)
    .every((v) => {
      const digest = inputDigest(release, step, v, (id) => cp.artifacts[id]?.sha256);
      return digest !== undefined && cp.validators[validatorKey(v)]?.input_digest === digest;
    });
}

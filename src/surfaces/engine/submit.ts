/**
 * `rimthan.submit_step_validation`: verifies the checkpoint, the state digest and the signed
 * validation bundle (the bundle object must be exactly what was signed, for this checkpoint),
 * then matches the reports to the bundle exactly: every required, not reused validator once,
 * nothing else, each for the bundle's instruction and input digests and from the bound host.
 * A failed report keeps the step (`validation_failed`, findings, a new checkpoint keeping the
 * passes); all passed, the artifact and validator receipts are updated and the step transitions.
 */
import { canonicalJson } from './canonical-json.js';
import {
  type EngineContext,
  nextCheckpoint,
  type OpenCheckpoint,
  openCheckpoint,
} from './checkpoint.js';
import { payloadFor } from './continue.js';
import { EngineError } from './errors.js';
import { validatorKey } from './gate.js';
import type { StepDef } from './release-schema.js';
import { type ConfirmedState, stateDigest } from './state.js';
import { verifyToken } from './tokens.js';
import { nextTarget } from './transition.js';

interface BundleValidator {
  readonly id: string;
  readonly version: string;
  readonly instruction_digest: string;
  readonly input_digest: string;
  readonly report_required: boolean;
  readonly reused: boolean;
}

interface Bundle {
  readonly step: string;
  readonly checkpoint_digest: string;
  readonly artifacts: readonly { id: string; path: string; sha256: string; bytes: number }[];
  readonly validators: readonly BundleValidator[];
}

export interface Report {
  readonly validator_id: string;
  readonly version: string;
  readonly outcome: 'pass' | 'fail';
  readonly findings: readonly {
    message: string;
    severity?: string;
    path?: string;
    artifact?: string;
  }[];
  readonly instruction_digest: string;
  readonly input_digest: string;
  readonly validated_by: { readonly harness: string; readonly adapter_version: string };
}

export interface SubmitArguments {
  readonly checkpoint: string;
  readonly confirmed_state: ConfirmedState;
  readonly validation_bundle: Readonly<Record<string, unknown>> & {
    readonly validation_token: string;
  };
  readonly reports: readonly Report[];
}

export function submitStepValidation(ctx: EngineContext, args: SubmitArguments) {
  const cp = openCheckpoint(ctx, args.checkpoint);
  if (stateDigest(args.confirmed_state) !== cp.payload.confirmed_state_digest) {
    throw new EngineError('state_digest_mismatch', 'confirmed_state is not the checkpoint’s');
  }
  const bundle = openBundle(ctx, cp, args.validation_bundle);
  const results = matchReports(cp, bundle, args.reports);
  const validators = { ...cp.payload.validators };
  const findings: Record<string, unknown>[] = [];
  for (const { validator, report } of results) {
    if (report === undefined) continue;
    if (report.outcome === 'pass') {
      validators[validatorKey(validator)] = {
        outcome: 'pass',
        input_digest: validator.input_digest,
      };
    } else {
      delete validators[validatorKey(validator)];
      for (const f of report.findings)
        findings.push({ validator_id: validator.id, version: validator.version, ...f });
      if (report.findings.length === 0) {
        findings.push({
          validator_id: validator.id,
          version: validator.version,
          message: 'failed without findings',
        });
      }
    }
  }
  if (results.some((r) => r.report?.outcome === 'fail')) {
    const checkpoint = nextCheckpoint(ctx, cp, { validators });
    return { status: 'validation_failed', checkpoint, findings, step: payloadFor(cp, cp.step) };
  }
  const artifacts = { ...cp.payload.artifacts };
  for (const a of bundle.artifacts)
    artifacts[a.id] = { path: a.path, sha256: a.sha256, bytes: a.bytes };
  const target = nextTarget(cp.step, args.confirmed_state.state);
  // The step is proven from here on: a checkpoint on it with the new receipts lets
  // continue_workflow take the transition once the state allows it.
  const proven = () => nextCheckpoint(ctx, cp, { artifacts, validators });
  switch (target.kind) {
    case 'question':
      return { status: 'input_required', checkpoint: proven(), question: target.question };
    case 'completed':
      return { status: 'completed', checkpoint: proven() };
    case 'blocked':
      // No branch matches the state as it is: the host changes it, then continues.
      return { status: 'input_required', checkpoint: proven(), failures: target.failures };
    default: {
      const step = cp.workflow.steps.get(target.to) as StepDef;
      const checkpoint = nextCheckpoint(ctx, cp, { step: step.id, artifacts, validators });
      return { status: 'advanced', checkpoint, step: payloadFor(cp, step) };
    }
  }
}

/** The signed bundle, which the object passed must equal, for this checkpoint and step. */
function openBundle(
  ctx: EngineContext,
  cp: OpenCheckpoint,
  passed: SubmitArguments['validation_bundle'],
): Bundle {
  const { validation_token: token, ...fields } = passed;
  const signed = verifyToken(ctx.ring, token, 'validation_bundle');
  const refuse = (why: string) =>
    new EngineError('invalid_validation_bundle', `the validation bundle ${why}`);
  if (canonicalJson(fields) !== canonicalJson(signed)) throw refuse('differs from what was signed');
  if (signed['checkpoint_digest'] !== cp.digest || signed['step'] !== cp.step.id) {
    throw refuse('was prepared for another checkpoint');
  }
  return signed as unknown as Bundle;
}

/** Each bundle validator with its report (undefined: reused, or optional and not reported). */
function matchReports(cp: OpenCheckpoint, bundle: Bundle, reports: readonly Report[]) {
  const byKey = new Map<string, Report>();
  for (const r of reports) {
    const key = `${r.validator_id}@${r.version}`;
    if (byKey.has(key))
      throw new EngineError('validator_report_duplicate', `${key} is reported twice`);
    byKey.set(key, r);
  }
  for (const key of byKey.keys()) {
    const v = bundle.validators.find((b) => validatorKey(b) === key);
    if (!v || v.reused)
      throw new EngineError(
        'validator_report_extra',
        `${key} is not to be reported in this bundle`,
      );
  }
  const host = cp.payload.host;
  return bundle.validators.map((v) => {
    const key = validatorKey(v);
    const report = byKey.get(key);
    if (v.reused) {
      const receipt = cp.payload.validators[key];
      if (receipt?.outcome !== 'pass' || receipt.input_digest !== v.input_digest) {
        throw new EngineError(
          'validator_report_stale',
          `${key} has no pass for these inputs to reuse`,
        );
      }
      return { validator: v, report: undefined };
    }
    if (report === undefined) {
      if (v.report_required)
        throw new EngineError('validator_report_missing', `${key} must be reported`);
      return { validator: v, report: undefined };
    }
    if (
      report.validated_by.harness !== host.harness ||
      report.validated_by.adapter_version !== host.adapter_version
    ) {
      throw new EngineError(
        'validator_report_host_mismatch',
        `${key} was validated by another host than the checkpoint's`,
      );
    }
    if (
      report.instruction_digest !== v.instruction_digest ||
      report.input_digest !== v.input_digest
    ) {
      throw new EngineError(
        'validator_report_stale',
        `${key} reports on other instructions or inputs`,
      );
    }
    return { validator: v, report };
  });
}

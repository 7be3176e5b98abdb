/**
 * `rimthan.prepare_step_validation`: the deterministic half of a gate, run before any semantic
 * validator. Every check is made and every failure returned together (`deterministic_validation_failed`,
 * `validation_bundle: null`); on success a signed validation bundle binds the checkpoint, the
 * artifact receipts and each validator's input digest, and only validators without a pass for
 * those exact inputs are returned to run.
 */
import { type CheckedArtifact, checkArtifacts, type SubmittedArtifact } from './artifact-checks.js';
import { inputFailures, outputFailures, policyFailures, workspaceFailures } from './attestation.js';
import { type EngineContext, type OpenCheckpoint, openCheckpoint } from './checkpoint.js';
import { type Failure, failure } from './errors.js';
import { inputDigest, validatorKey } from './gate.js';
import { boundAdapter, type RepositoryPolicy, sortedSet } from './host.js';
import { projectRoot } from './readback.js';
import { releaseIdentity } from './release.js';
import { SETUP_STEP } from './release-check.js';
import { type ConfirmedState, stateDigest } from './state.js';
import { validatorPayload } from './step-payload.js';
import { signToken } from './tokens.js';

export interface PrepareArguments {
  readonly checkpoint: string;
  readonly confirmed_state: ConfirmedState;
  readonly artifacts: readonly SubmittedArtifact[];
  readonly attestation?: {
    readonly project_root: string;
    readonly repository_policy: RepositoryPolicy;
    readonly validator_capabilities?: readonly string[];
  };
}

export function prepareStepValidation(ctx: EngineContext, args: PrepareArguments) {
  const cp = openCheckpoint(ctx, args.checkpoint);
  const { failures, checked } = deterministicChecks(cp, args);
  if (failures.length > 0) {
    return {
      status: 'deterministic_validation_failed',
      failures,
      validation_bundle: null,
      validators: [],
    };
  }
  const sha = (id: string) =>
    checked.find((c) => c.output.id === id)?.sha256 ?? cp.payload.artifacts[id]?.sha256;
  const summaries = cp.step.validators.map((v) => {
    const digest = inputDigest(cp.release, cp.step, v, sha) as string;
    const prior = cp.payload.validators[validatorKey(v)];
    return { def: v, digest, reused: prior?.outcome === 'pass' && prior.input_digest === digest };
  });
  const payload = {
    typ: 'validation_bundle',
    release: releaseIdentity(cp.release),
    workflow: cp.payload.workflow,
    manifest_digest: cp.workflow.manifestDigest,
    step: cp.step.id,
    checkpoint_digest: cp.digest,
    artifacts: checked.map((c) => ({
      id: c.output.id,
      path: c.output.path,
      sha256: c.sha256,
      bytes: c.bytes.length,
      media_type: c.output.media_type,
    })),
    validators: summaries.map((s) => ({
      id: s.def.id,
      version: s.def.version,
      instruction_digest: validatorPayload(cp.release, s.def).instruction_digest,
      input_digest: s.digest,
      report_required: s.def.report_required,
      reused: s.reused,
    })),
    issued_at: ctx.now().toISOString(),
  };
  const token = signToken(ctx.ring, payload);
  const signed = JSON.parse(
    Buffer.from(token.split('.')[0] as string, 'base64url').toString('utf8'),
  );
  return {
    status: 'ready_for_semantic_validation',
    validation_bundle: { ...signed, validation_token: token },
    validation_token: token,
    validators: summaries
      .filter((s) => !s.reused)
      .map((s) => ({ ...validatorPayload(cp.release, s.def), input_digest: s.digest })),
  };
}

/** Every deterministic check of the call, accumulated. */
function deterministicChecks(
  cp: OpenCheckpoint,
  args: PrepareArguments,
): { failures: Failure[]; checked: CheckedArtifact[] } {
  const failures: Failure[] = [];
  if (stateDigest(args.confirmed_state) !== cp.payload.confirmed_state_digest) {
    failures.push(
      failure(
        'state_digest_mismatch',
        'confirmed_state is not the checkpoint’s',
        'confirmed_state.state',
      ),
    );
  }
  const host = cp.payload.host;
  const submitted = args.attestation?.validator_capabilities;
  if (
    submitted !== undefined &&
    JSON.stringify(sortedSet(submitted)) !== JSON.stringify(host.validator_capabilities)
  ) {
    failures.push(
      failure(
        'host_capability_mismatch',
        'validator_capabilities differ from the checkpoint host',
        'attestation.validator_capabilities',
      ),
    );
  }
  for (const v of cp.step.validators) {
    const missing = v.requires_capabilities.filter((c) => !host.validator_capabilities.includes(c));
    if (missing.length > 0) {
      failures.push(
        failure(
          'validator_capability_missing',
          `validator ${validatorKey(v)} needs ${missing.join(', ')}`,
          'validators',
        ),
      );
    }
  }
  const { failures: artifactFailures, checked } = checkArtifacts(
    cp.release,
    cp.step,
    args.artifacts,
  );
  failures.push(...artifactFailures);
  const needsDisk = cp.step.outputs.length > 0 || cp.step.inputs.length > 0;
  const attestation = args.attestation;
  if (needsDisk && attestation === undefined) {
    failures.push(
      failure(
        'output_attestation_required',
        'this step’s artifacts must be attested on disk',
        'attestation',
      ),
    );
    return { failures, checked };
  }
  if (attestation === undefined) return { failures, checked };
  const root = projectRoot(attestation.project_root);
  if (root === undefined) {
    failures.push(
      failure(
        'path_outside_project',
        'project_root must be an absolute directory',
        'attestation.project_root',
      ),
    );
    return { failures, checked };
  }
  const policy = attestation.repository_policy;
  failures.push(
    ...policyFailures(
      policy,
      cp.step.outputs.map((o) => o.path),
      'attestation.repository_policy',
    ),
  );
  failures.push(...inputFailures(root, policy, cp.step, cp.payload));
  failures.push(...outputFailures(root, policy, checked, cp.payload));
  const manifest = checked.find((c) => c.output.id === 'workspace-manifest');
  if (cp.step.id === SETUP_STEP && manifest !== undefined) {
    const adapter = boundAdapter(cp.release, host);
    if (adapter)
      failures.push(
        ...workspaceFailures(
          cp.release,
          cp.workflow,
          cp.step,
          adapter,
          host,
          manifest,
          root,
          policy,
        ),
      );
  }
  return { failures, checked };
}

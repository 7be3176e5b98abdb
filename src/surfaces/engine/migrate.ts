/**
 * Explicit migration (`continue_workflow` with `migration`), fail-closed: only to the verified
 * `--migration-target` release, named by `id@version` or digest; to a newer version of the same
 * workflow in a different release; with every target state field confirmed anew and the bound
 * host accepted by the target. The preview lists every prior artifact and validator as
 * invalidated; unconfirmed, the answer stays `blocked` with `migration_confirmation_required`;
 * confirmed, the walk restarts at `setup-workspace` of the target, its parent the old checkpoint.
 */
import { type EngineContext, issueCheckpoint, type OpenCheckpoint } from './checkpoint.js';
import { EngineError, type Failure, failure } from './errors.js';
import { boundAdapter, hostBlockers } from './host.js';
import { releaseIdentity } from './release.js';
import { SETUP_STEP } from './release-check.js';
import type { StepDef } from './release-schema.js';
import { compareSemVer } from './semver.js';
import { type ConfirmedState, schemaFailures, stateDigest, unconfirmed } from './state.js';
import { stepPayload } from './step-payload.js';

export interface MigrationArgument {
  readonly target_release: string;
  readonly confirm: boolean;
}

export function migrateWorkflow(
  ctx: EngineContext,
  cp: OpenCheckpoint,
  next: ConfirmedState,
  migration: MigrationArgument,
) {
  const target = ctx.releases.target;
  if (!target) {
    throw new EngineError('migration_unavailable', 'this server has no --migration-target release');
  }
  const named = migration.target_release;
  if (named !== `${target.id}@${target.version}` && named !== target.digest) {
    throw new EngineError(
      'migration_target_mismatch',
      'target_release is not the verified migration target',
    );
  }
  if (target.digest === cp.release.digest) {
    throw new EngineError('migration_same_release', 'the target release is the checkpoint’s own');
  }
  const workflow = target.workflows
    .filter((w) => w.def.id === cp.workflow.def.id)
    .sort((a, b) => compareSemVer(b.def.version, a.def.version))[0];
  if (!workflow) {
    throw new EngineError(
      'migration_workflow_missing',
      `the target release has no ${cp.workflow.def.id}`,
    );
  }
  if (compareSemVer(workflow.def.version, cp.workflow.def.version) <= 0) {
    throw new EngineError('migration_not_newer', 'the target workflow version is not newer');
  }
  const host = cp.payload.host;
  const blockers: Failure[] = [
    ...schemaFailures(workflow.stateValidator, next),
    // Every field, confirmed since the checkpoint: the target may read them differently.
    ...unconfirmed(
      next,
      Object.keys(next.state).sort(),
      ctx.now().getTime(),
      Date.parse(cp.payload.issued_at),
    ),
    ...hostBlockers(target, workflow, {
      harness: host.harness,
      adapterVersion: host.adapter_version,
      capabilities: host.capabilities,
    }),
  ];
  const preview = {
    source: { release: releaseIdentity(cp.release), workflow: cp.payload.workflow },
    target: {
      release: releaseIdentity(target),
      workflow: { id: workflow.def.id, version: workflow.def.version },
    },
    restart_step: SETUP_STEP,
    invalidated_artifacts: Object.keys(cp.payload.artifacts).sort(),
    invalidated_validators: Object.keys(cp.payload.validators).sort(),
    compatible: blockers.length === 0,
    blockers,
  };
  if (blockers.length > 0) {
    return {
      status: 'blocked',
      checkpoint: cp.token,
      failures: blockers,
      migration_preview: preview,
    };
  }
  if (!migration.confirm) {
    const ask = failure(
      'migration_confirmation_required',
      'confirm the migration to restart on the target release',
      'migration.confirm',
    );
    return { status: 'blocked', checkpoint: cp.token, failures: [ask], migration_preview: preview };
  }
  const checkpoint = issueCheckpoint(ctx, target, workflow, {
    sequence: cp.payload.sequence + 1,
    step: SETUP_STEP,
    parent: cp.digest,
    confirmed_state_digest: stateDigest(next),
    artifacts: {},
    validators: {},
    host,
  });
  const adapter = boundAdapter(target, host);
  const step = workflow.steps.get(SETUP_STEP) as StepDef;
  return {
    status: 'active',
    checkpoint,
    step: stepPayload(target, workflow, step, adapter as NonNullable<typeof adapter>),
    migration_preview: preview,
  };
}

/**
 * `rimthan.continue_workflow`: verifies the checkpoint and the prior state's digest, checks the
 * next state (schema, confirmations of changed fields newer than the checkpoint), then either
 * migrates (`migrate.ts`), returns a gated step that is not proven yet (with a reissued
 * checkpoint when the state changed), or completes an ungated (or proven) step: the next step,
 * one question, or completion.
 */
import {
  type EngineContext,
  nextCheckpoint,
  type OpenCheckpoint,
  openCheckpoint,
} from './checkpoint.js';
import { failure } from './errors.js';
import { isGated, stepProven } from './gate.js';
import { boundAdapter } from './host.js';
import { type MigrationArgument, migrateWorkflow } from './migrate.js';
import type { StepDef } from './release-schema.js';
import {
  type ConfirmedState,
  changedFields,
  schemaFailures,
  stateDigest,
  unconfirmed,
} from './state.js';
import { stepPayload } from './step-payload.js';
import { nextTarget } from './transition.js';

export interface ContinueArguments {
  readonly checkpoint: string;
  readonly prior_confirmed_state: ConfirmedState;
  readonly confirmed_state: ConfirmedState;
  readonly migration?: MigrationArgument;
}

/** The step payload of `step` in the checkpoint's release, for its bound host. */
export function payloadFor(cp: OpenCheckpoint, step: StepDef) {
  const adapter = boundAdapter(cp.release, cp.payload.host);
  // A checkpoint binds a host its release accepted; an adapter gone is a release problem.
  if (!adapter) throw new Error('the checkpoint host matches no adapter of its release');
  return stepPayload(cp.release, cp.workflow, step, adapter);
}

export function continueWorkflow(ctx: EngineContext, args: ContinueArguments) {
  const cp = openCheckpoint(ctx, args.checkpoint);
  const prior = args.prior_confirmed_state;
  const next = args.confirmed_state;
  if (stateDigest(prior) !== cp.payload.confirmed_state_digest) {
    return {
      status: 'blocked',
      checkpoint: cp.token,
      failures: [
        failure(
          'state_digest_mismatch',
          'prior_confirmed_state is not the state this checkpoint was issued for',
          'prior_confirmed_state.state',
        ),
      ],
    };
  }
  if (args.migration !== undefined) return migrateWorkflow(ctx, cp, next, args.migration);
  const changed = changedFields(prior, next);
  const failures = [
    ...schemaFailures(cp.workflow.stateValidator, next),
    ...unconfirmed(
      next,
      changed.filter((f) => Object.hasOwn(next.state, f)),
      ctx.now().getTime(),
      Date.parse(cp.payload.issued_at),
    ),
  ];
  if (failures.length > 0) return { status: 'blocked', checkpoint: cp.token, failures };
  const digest = stateDigest(next);
  const reissued = () =>
    digest === cp.payload.confirmed_state_digest
      ? cp.token
      : nextCheckpoint(ctx, cp, { confirmed_state_digest: digest });
  if (isGated(cp.step) && !stepProven(cp.release, cp.step, cp.payload)) {
    return { status: 'active', checkpoint: reissued(), step: payloadFor(cp, cp.step) };
  }
  const target = nextTarget(cp.step, next.state);
  switch (target.kind) {
    case 'question':
      return { status: 'input_required', checkpoint: reissued(), question: target.question };
    case 'completed':
      return { status: 'completed', checkpoint: reissued() };
    case 'blocked':
      return { status: 'blocked', checkpoint: reissued(), failures: target.failures };
    default: {
      const step = cp.workflow.steps.get(target.to) as StepDef;
      const checkpoint = nextCheckpoint(ctx, cp, { step: step.id, confirmed_state_digest: digest });
      return { status: 'active', checkpoint, step: payloadFor(cp, step) };
    }
  }
}

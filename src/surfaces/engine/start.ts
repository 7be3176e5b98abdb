/**
 * `rimthan.start_workflow`: selects one workflow of the active release by id or alias (the
 * newest version unless one is named), checks the initial confirmed state (schema, every field
 * confirmed) and the host, and answers the mandatory `setup-workspace` step with checkpoint
 * sequence 1, no parent and no receipts.
 */
import { type EngineContext, issueCheckpoint } from './checkpoint.js';
import { EngineError } from './errors.js';
import { boundAdapter, type HostArgument, hostBinding, hostBlockers } from './host.js';
import type { LoadedWorkflow, Release } from './release.js';
import { SETUP_STEP } from './release-check.js';
import type { StepDef } from './release-schema.js';
import { compareSemVer } from './semver.js';
import { type ConfirmedState, schemaFailures, stateDigest, unconfirmed } from './state.js';
import { stepPayload } from './step-payload.js';

export interface StartArguments {
  readonly workflow: string;
  readonly workflow_version?: string;
  readonly confirmed_state: ConfirmedState;
  readonly host: HostArgument;
}

/** The workflow `name` selects in `release`: newest of its owner's versions, or `version`. */
export function selectWorkflow(release: Release, name: string, version?: string): LoadedWorkflow {
  const candidates = release.workflows
    .filter((w) => w.def.id === name || w.def.entry_aliases.includes(name))
    .sort((a, b) => compareSemVer(b.def.version, a.def.version));
  const newest = candidates[0];
  if (!newest) throw new EngineError('workflow_not_found', 'no workflow has that id or alias');
  // Authoring rejects an alias naming two workflows, so every candidate has one owner and id.
  const same = candidates.filter(
    (w) => w.def.id === newest.def.id && w.def.owner === newest.def.owner,
  );
  if (version === undefined) return newest;
  const exact = same.find((w) => w.def.version === version);
  if (!exact) {
    throw new EngineError(
      'workflow_version_not_found',
      `workflow ${newest.def.id} has no version ${version}`,
    );
  }
  return exact;
}

export function startWorkflow(ctx: EngineContext, args: StartArguments) {
  const release = ctx.releases.active();
  const workflow = selectWorkflow(release, args.workflow, args.workflow_version);
  const cs = args.confirmed_state;
  const failures = [
    ...schemaFailures(workflow.stateValidator, cs),
    ...unconfirmed(cs, Object.keys(cs.state).sort(), ctx.now().getTime()),
    ...hostBlockers(release, workflow, {
      harness: args.host.harness,
      adapterId: args.host.adapter.id,
      adapterVersion: args.host.adapter.version,
      capabilities: args.host.capabilities,
    }),
  ];
  if (failures.length > 0) return { status: 'blocked', failures };
  const host = hostBinding(args.host);
  const step = workflow.steps.get(SETUP_STEP) as StepDef;
  const checkpoint = issueCheckpoint(ctx, release, workflow, {
    sequence: 1,
    step: SETUP_STEP,
    parent: null,
    confirmed_state_digest: stateDigest(cs),
    artifacts: {},
    validators: {},
    host,
  });
  const adapter =
    release.adapters.find((a) => a.id === args.host.adapter.id) ?? boundAdapter(release, host);
  return {
    status: 'active',
    checkpoint,
    step: stepPayload(release, workflow, step, adapter as NonNullable<typeof adapter>),
  };
}

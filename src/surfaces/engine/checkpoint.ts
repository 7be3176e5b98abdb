/**
 * The checkpoint token's payload (docs/engine.md, "Tokens"): where a walk stands, which release
 * and workflow it is pinned to, the digest of the confirmed state, receipts of the artifacts
 * and validator passes so far, and the host it is bound to. Never a state value, an artifact's
 * contents or the objective. `openCheckpoint` verifies one and finds its pinned release,
 * workflow and step, or throws `invalid_checkpoint` / `release_unavailable`.
 */
import { EngineError } from './errors.js';
import { findWorkflow, type LoadedWorkflow, type Release, releaseIdentity } from './release.js';
import type { StepDef } from './release-schema.js';
import type { ReleaseStore } from './release-store.js';
import { type KeyRing, signToken, tokenDigest, verifyToken } from './tokens.js';

export interface ArtifactReceipt {
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
}

export interface HostBinding {
  readonly harness: string;
  readonly adapter_version: string;
  readonly capabilities: readonly string[];
  readonly validator_capabilities: readonly string[];
}

export interface CheckpointPayload {
  readonly typ: 'checkpoint';
  readonly release: { readonly id: string; readonly version: string; readonly digest: string };
  readonly workflow: { readonly id: string; readonly version: string };
  readonly manifest_digest: string;
  readonly sequence: number;
  readonly step: string;
  readonly parent: string | null;
  readonly confirmed_state_digest: string;
  readonly artifacts: Readonly<Record<string, ArtifactReceipt>>;
  readonly validators: Readonly<Record<string, { outcome: 'pass'; input_digest: string }>>;
  readonly host: HostBinding;
  readonly issued_at: string;
}

/** A verified checkpoint with what it pins. */
export interface OpenCheckpoint {
  readonly token: string;
  readonly digest: string;
  readonly payload: CheckpointPayload;
  readonly release: Release;
  readonly workflow: LoadedWorkflow;
  readonly step: StepDef;
}

/** What the engine's tools share: the keys, the releases and the clock. */
export interface EngineContext {
  readonly ring: KeyRing;
  readonly releases: ReleaseStore;
  readonly now: () => Date;
}

/** Verifies `token` and finds its pinned release, workflow and step. */
export function openCheckpoint(ctx: EngineContext, token: string): OpenCheckpoint {
  const payload = verifyToken(ctx.ring, token, 'checkpoint') as unknown as CheckpointPayload;
  const release = ctx.releases.pinned(payload.release.digest);
  const workflow = findWorkflow(release, payload.workflow.id, payload.workflow.version);
  const step = workflow?.steps.get(payload.step);
  if (!workflow || !step || workflow.manifestDigest !== payload.manifest_digest) {
    throw new EngineError('invalid_checkpoint', 'the checkpoint names no step of its release');
  }
  return { token, digest: tokenDigest(token), payload, release, workflow, step };
}

/** The fields a new checkpoint sets; the rest follow from the release and workflow. */
export interface CheckpointFields {
  readonly sequence: number;
  readonly step: string;
  readonly parent: string | null;
  readonly confirmed_state_digest: string;
  readonly artifacts: CheckpointPayload['artifacts'];
  readonly validators: CheckpointPayload['validators'];
  readonly host: HostBinding;
}

/** Signs a checkpoint at `fields.step` of `workflow` in `release`. */
export function issueCheckpoint(
  ctx: EngineContext,
  release: Release,
  workflow: LoadedWorkflow,
  fields: CheckpointFields,
): string {
  return signToken(ctx.ring, {
    typ: 'checkpoint',
    release: releaseIdentity(release),
    workflow: { id: workflow.def.id, version: workflow.def.version },
    manifest_digest: workflow.manifestDigest,
    ...fields,
    issued_at: ctx.now().toISOString(),
  });
}

/** The next checkpoint after `cp` (sequence + 1, `cp` as parent), with `changes` applied. */
export function nextCheckpoint(
  ctx: EngineContext,
  cp: OpenCheckpoint,
  changes: Partial<
    Pick<CheckpointFields, 'step' | 'confirmed_state_digest' | 'artifacts' | 'validators'>
  >,
): string {
  const p = cp.payload;
  return issueCheckpoint(ctx, cp.release, cp.workflow, {
    sequence: p.sequence + 1,
    step: changes.step ?? p.step,
    parent: cp.digest,
    confirmed_state_digest: changes.confirmed_state_digest ?? p.confirmed_state_digest,
    artifacts: changes.artifacts ?? p.artifacts,
    validators: changes.validators ?? p.validators,
    host: p.host,
  });
}

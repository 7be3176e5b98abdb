/**
 * The run layer's public face: the async run registry, the generic job registry (`job.*`),
 * admission slots, ownership, the call context, the run view, and `RunError` / `ArgumentError`
 * (stable codes the surfaces map; nothing here knows the protocol).
 */
export { Admission, AdmissionClosedError, type Refusal, type Slot } from './admission.js';
export { ArgumentError, shortKey } from './argument-error.js';
export {
  ABSOLUTE_PATH_PATTERN,
  type CallContext,
  type CallDefaults,
  checkWorkflowCall,
  parseCallContext,
} from './call-context.js';
export {
  type RunChange,
  RunChangeFeed,
  type RunChangeKind,
  type RunChangeListener,
} from './change-feed.js';
export {
  type CallCredentials,
  CREDENTIAL_ID_PATTERN,
  credentialsSchema,
  slotGuidance,
  takesCredentials,
} from './credentials.js';
export {
  JOB_TTL_MS,
  type JobFailure,
  type JobOutcome,
  type JobRefusal,
  JobRegistry,
  type JobRegistryOptions,
  type JobResponse,
  type JobState,
  type JobTask,
  type JobView,
  MAX_JOBS,
} from './jobs.js';
export { ANONYMOUS_OWNER, type OwnerContext, ownerOf, quotaKeyOf } from './owner.js';
export { RunRegistry } from './registry.js';
export type { LogSlice } from './run-log.js';
export type { RunPeek } from './run-peek.js';
export {
  DEFAULT_QUEUED_PER_CALLER,
  DEFAULT_RUNS_PER_CALLER,
  MAX_QUEUED_RUNS,
  MAX_RUNS,
} from './run-policy.js';
export {
  STATE_FAULT_CODES,
  type StateFaultCode,
  stateFaultOf,
} from './state-fault.js';
export { MAX_SPANS, type SpanOutcome, type StepSpan, StepTimeline } from './step-timeline.js';
export {
  type Caller,
  type CheckedCall,
  RunError,
  type RunErrorCode,
  type RunRegistryOptions,
  type RunState,
  type RunView,
  TERMINAL_STATES,
} from './types.js';

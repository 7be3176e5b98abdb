/**
 * The run layer's public face: the generic job registry (`job.*`), admission slots, ownership,
 * the run view and `RunError` (stable codes the surfaces map; nothing here knows the protocol).
 * The async run registry is a second, lazily loaded face (`registry.ts`): exporting it here
 * would put it on every server's start-up path, since the bundle splits by module.
 */
export { Admission, AdmissionClosedError, type Refusal, type Slot } from './admission.js';
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
export { ANONYMOUS_OWNER, type OwnerContext, ownerOf } from './owner.js';
export {
  type Caller,
  type CheckedCall,
  RUN_ERROR_CODES,
  RunError,
  type RunErrorCode,
  type RunRegistryOptions,
  type RunState,
  type RunView,
  TERMINAL_STATES,
} from './types.js';

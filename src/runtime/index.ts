/**
 * The runtime's public face: `executeWorkflow()` and what its callers need to prepare a run and
 * read its outcome (loading a file for `mhl run`, coercing `--input` values, the child
 * environment, redaction, values to JSON). Other layers import the runtime only from here; the
 * interpreter, the step loop, agents and checkpoints stay internal.
 */
export { AgentLimiters } from './agents/agent-rate-limit.js';
export type { AgentCache } from './agents/run-agents.js';
export { checkSession } from './checkpoints/checkpoint-keys.js';
export {
  type ExecuteOptions,
  type Execution,
  executeWorkflow,
  startWorkflow,
  type WorkflowState,
} from './execute.js';
export type { VaultLookup } from './interpreter/builtins.js';
export {
  PromptFailure,
  type PromptSource,
  renderServedPrompt,
  type ServedPromptOptions,
} from './interpreter/served-prompt.js';
export {
  EnumValue,
  formatValue,
  fromJson,
  isObject,
  type MhlObject,
  toPlain,
  type Value,
} from './interpreter/values.js';
export { coerceInput, matchesType, typeText } from './pipeline/inputs.js';
export { type LoadResult, loadProgram, selectPipeline } from './pipeline/program.js';
export { canResume } from './pipeline/resumable.js';
export type { FailureKind, RunEvent, RunOutcome, RunStatus } from './pipeline/runner.js';
export { type Cancellation, signalOf } from './services/cancellation.js';
export { childEnvironment } from './services/child-env.js';
export { type Deadline, deadline } from './services/deadline.js';
export { REDACTED, Redactor } from './services/redact.js';
export {
  type CaseFailure,
  type CaseResult,
  type CaseStatus,
  type FileResult,
  runTestFile,
  type TestRunOptions,
} from './testing/index.js';

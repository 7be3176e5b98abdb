/** The public shapes of a pipeline run: its options, the events it reports, its outcome. */
import type { PipelineDefinition } from '../../lang/index.js';
import type { CheckpointStore } from '../checkpoints/checkpoints.js';
import type { RunServices } from '../interpreter/declarations.js';
import type { MhlObject, Value } from '../interpreter/values.js';
import type { Cancellation } from '../services/cancellation.js';
import type { FailureKind } from './run-failure.js';

export type RunStatus = 'completed' | 'paused' | 'failed' | 'canceled';
export type { FailureKind };

export interface RunEvent {
  readonly type: 'run_start' | 'step_start' | 'step_end' | 'step_skipped' | 'iteration';
  readonly step: string;
  readonly index: number;
  readonly total: number;
  /** Set on `run_start`. */
  readonly session?: string;
}

export interface RunOptions {
  readonly inputs: Readonly<Record<string, Value>>;
  readonly resume?: boolean;
  readonly force?: boolean;
  /** The session to start or resume; a fresh run without one gets a random id. */
  readonly session?: string;
  readonly principal?: string;
  /** The run's cancellation: checks read it as is, `signalOf` gives its AbortSignal. */
  readonly signal: Cancellation;
  readonly services: RunServices;
  readonly state: CheckpointStore;
  /**
   * Nothing of this run outlives it (a synchronous `tools/call`): no step checkpoint, no result
   * record is written. A `pause()` alone still writes its checkpoint (and the latest pointer)
   * to `state`, so the caller can resume the paused step; give such a run a throwaway store.
   */
  readonly ephemeral?: boolean;
  readonly onEvent?: (event: RunEvent) => void;
  /** The pipeline's digest and checkpoint policy, computed once by the catalog; else here. */
  readonly definition?: PipelineDefinition;
  /** Also report every pipeline variable (`RunOutcome.state`), beside the `output:` result. */
  readonly reportState?: boolean;
}

export interface RunOutcome {
  readonly status: RunStatus;
  readonly pipeline: string;
  readonly session: string;
  readonly resumed: boolean;
  readonly executed: readonly string[];
  readonly skipped: readonly string[];
  readonly broke: boolean;
  readonly loop: boolean;
  readonly iterations: number;
  readonly terminalReason: string;
  /** The result (`output:` projection or every non-internal variable); partial state when paused. */
  readonly vars: MhlObject;
  readonly pauseReason?: Value;
  /** Every non-internal pipeline variable, when `RunOptions.reportState` asked for it. */
  readonly state?: MhlObject;
  /** The value `break` was given (null without one), with `state`. */
  readonly breakReason?: Value;
  readonly error?: {
    readonly message: string;
    readonly kind: FailureKind;
    /** A stable code (docs/errors.md): match on it, never on the message. */
    readonly code: string;
    /** Where it failed; `file` as clients may see it (relative to a served folder). */
    readonly file: string;
    readonly line: number;
    readonly col: number;
    /** The message without a position in front. */
    readonly summary: string;
    /** What to do about it. */
    readonly hint: string;
    readonly step?: string;
    readonly missing?: readonly string[];
    readonly unknown?: readonly string[];
  };
}

/**
 * The on-disk formats of run state (spec: mhl-language.md §11, §6.6): the per-step checkpoint
 * `<Pipeline>.json`, the loop progress `loop-<Pipeline>.json`, and a completed run's
 * `result.json`. Objects are loose: unknown fields from newer runtimes pass through, and fields
 * older runtimes never wrote (digest, runtime_version, state_version) are optional.
 *
 * Pure schemas; reading and writing them is `checkpoints.ts`.
 */
import { z } from 'zod';

/**
 * The declared fields of a loose record. Unknown fields still pass through at run time, but
 * callers see only what this runtime understands.
 */
type Known<T> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};

/** The state-schema version this runtime writes and the newest it reads. */
export const STATE_VERSION = 1;

/** Why a loop pipeline stopped iterating; "" while it is still running. */
export const TERMINAL_REASONS = ['', 'stop_when', 'max_iterations', 'break', 'pause'] as const;
export type TerminalReason = (typeof TERMINAL_REASONS)[number];

type Schemas = ReturnType<typeof buildSchemas>;
let built: Schemas | undefined;

/**
 * The schemas of the three records, built on first use: only reading a record back (a resume,
 * `context.vars`) needs them, and building them at import was 1.25 ms of every server's
 * start-up (bench/serve-startup.bench.mjs).
 */
export function recordSchemas(): Schemas {
  built ??= buildSchemas();
  return built;
}

function buildSchemas() {
  const Timestamp = z
    .string()
    .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not a date-time' })
    .describe('RFC 3339 date-time');

  const Variables = z
    .record(z.string(), z.unknown())
    .describe('Inputs and pipeline variables by name: JSON values, strings redacted');

  const StateVersion = z
    .int()
    .min(1)
    .optional()
    .describe('State-schema version; absent in files from runtimes that predate it (read as 1)');

  /** A per-step checkpoint: where a run stopped and the variables it had. */
  const checkpoint = z
    .looseObject({
      pipeline: z.string().min(1).describe('The pipeline or workflow name'),
      last_step: z.string().describe('The last step that completed'),
      next_step: z
        .string()
        .describe(
          'The step resume starts at (the transition actually chosen); empty when nothing is left',
        ),
      completed_steps: z.array(z.string()).describe('Steps completed so far, in order'),
      variables: Variables,
      saved_at: Timestamp.describe('When the checkpoint was written'),
      ttl_seconds: z
        .number()
        .default(0)
        .describe('Seconds after saved_at when the checkpoint expires; 0 or less never expires'),
      digest: z
        .string()
        .optional()
        .describe('Definition digest of the pipeline the run started with'),
      runtime_version: z.string().optional().describe('Version of the runtime that wrote the file'),
      state_version: StateVersion,
      paused: z
        .looseObject({ reason: z.string().describe('Why the run paused, as text') })
        .optional()
        .describe('Present when the run paused; resume re-enters next_step from its start'),
    })
    .describe('Per-step checkpoint state/<session>/<Pipeline>.json');

  /** Loop progress of a loop pipeline. */
  const loop = z
    .looseObject({
      loop: z.string().min(1).describe('The loop pipeline name'),
      next_iteration: z.int().min(0).describe('The next iteration to run (0-based)'),
      terminal_reason: z
        .string()
        .describe(
          '"" while running, else stop_when, max_iterations, break or pause (newer runtimes may add more)',
        ),
      saved_at: Timestamp.describe('When the file was written'),
      instance_id: z
        .string()
        .describe('The mem instance id shared by every iteration and by resume'),
      state_version: StateVersion,
    })
    .describe('Loop progress state/<session>/loop-<Pipeline>.json');

  /** The final state of a completed run, read by `context.vars` of a later run. */
  const result = z
    .looseObject({
      pipeline: z.string().min(1).describe('The pipeline or workflow name'),
      variables: Variables.describe('Final inputs and pipeline variables, strings redacted'),
      output: z.unknown().optional().describe('The evaluated output: projection, when declared'),
      completed_at: Timestamp.describe('When the run completed'),
      digest: z.string().optional().describe('Definition digest of the pipeline that ran'),
      runtime_version: z.string().optional().describe('Version of the runtime that wrote the file'),
      state_version: StateVersion,
    })
    .describe('Completed run state/<session>/result.json');
  return { checkpoint, loop, result };
}

export type CheckpointRecord = Known<z.infer<Schemas['checkpoint']>>;
export type LoopRecord = Known<z.infer<Schemas['loop']>>;
export type ResultRecord = Known<z.infer<Schemas['result']>>;

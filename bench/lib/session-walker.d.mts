// Types of session-walker.mjs (plain JS so benchmarks run it without a build step).
export const SEPARATOR: string;
export const TERMINAL: string;
export interface ToolCallResult {
  content?: { type: string; text?: string }[];
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}
export type CallTool = (name: string, args: Record<string, unknown>) => Promise<ToolCallResult>;
export interface WalkOptions {
  policy?: (step: Record<string, unknown>, activityId: string) => string;
  simulate?: (activityId: string, bag: Record<string, unknown>) => Record<string, unknown>;
  initialVariables?: Record<string, unknown>;
  maxVisits?: number;
  contextTokens?: number;
  endWithTerminal?: boolean;
  /** Passed to every get_activity (`reference`: reference-mode deliveries). */
  bundle?: 'reference' | 'full';
  /** Added to the start_session arguments (e.g. `{ context_mode: 'persistent' }`). */
  startArgs?: Record<string, unknown>;
  /** Extra calls at fixed points of the walk, recorded (errors included) with the rest. */
  probes?: WalkProbes;
}
export interface ProbeContext {
  index: string;
  probe: CallTool;
  calls: WalkedCall[];
}
export interface WalkProbes {
  start?: (c: ProbeContext) => Promise<void>;
  activity?: (c: ProbeContext & { activity: string; visit: number }) => Promise<void>;
  checkpoint?: (
    c: ProbeContext & {
      activity: string;
      step: Record<string, unknown>;
      phase: 'before-yield' | 'yielded' | 'responded' | 'resumed';
    },
  ) => Promise<void>;
  end?: (c: ProbeContext) => Promise<void>;
}
export interface WalkedCall {
  name: string;
  args: Record<string, unknown>;
  result: ToolCallResult;
  /** Made by a probe hook, not by the walk itself. */
  probe?: boolean;
}
export interface Walk {
  sessionIndex: string;
  path: string[];
  calls: WalkedCall[];
}
export function walk(call: CallTool, workflowId: string, options?: WalkOptions): Promise<Walk>;
export function when(text: string, bag: Record<string, unknown>): boolean;
export function condition(c: unknown, bag: Record<string, unknown>): boolean;
export function pickTransition(transitions: unknown, bag: Record<string, unknown>): string | undefined;
export function defaultPolicy(step: Record<string, unknown>): string;

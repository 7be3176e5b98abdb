/**
 * A `parallel` group (digest §6.5): its branches run concurrently on copies of the pipeline
 * variables, each between its own `step_start` and `step_end` hooks; at the barrier their
 * writes merge back into the pipeline scope, and two branches writing different values to one
 * variable fail the group. A failing branch does not cancel its siblings.
 */
import type { LoadedProgram, ParallelGroup, Step } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import type { RunScope } from '../interpreter/declarations.js';
import { Environment } from '../interpreter/environment.js';
import { CompleteSignal, PauseSignal } from '../interpreter/signals.js';
import { fromJson, toPlain, type Value } from '../interpreter/values.js';
import type { HookAnswer, PipelineHooks, StepStatus } from './hooks.js';

export interface GroupContext {
  readonly scope: RunScope;
  readonly root: LoadedProgram['root'];
  readonly hooks: PipelineHooks;
}

/**
 * Runs `group` against the pipeline scope `base`, under `signal` (the group's deadline; `run`
 * is the run's own). True when a branch (or its hook) called `complete()`: the run ends after
 * the barrier, with every branch's writes merged.
 */
export async function runGroup(
  ctx: GroupContext,
  group: ParallelGroup,
  base: Environment,
  signal: AbortSignal,
  run: AbortSignal,
): Promise<boolean> {
  const names = [...base.own()].map(([k]) => k);
  const before = new Map(names.map((k) => [k, base.lookup(k) as Value]));
  const branches = group.steps.map((step) => {
    const env = new Environment(ctx.scope.moduleEnv(ctx.root));
    for (const [k, v] of before) env.declare(k, fromJson(toPlain(v)));
    return { step, env };
  });
  const results = await Promise.allSettled(
    branches.map((b) => runBranch(ctx, group, b.step, b.env, signal, run)),
  );
  await ctx.scope.joinPending();
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed >= 0) throw (results[failed] as PromiseRejectedResult).reason;
  const writes = new Map<string, { value: Value; by: string }>();
  for (const { step, env } of branches) {
    for (const k of names) {
      const v = env.lookup(k) as Value;
      if (JSON.stringify(toPlain(v)) === JSON.stringify(toPlain(before.get(k) as Value))) continue;
      const earlier = writes.get(k);
      if (earlier && JSON.stringify(toPlain(earlier.value)) !== JSON.stringify(toPlain(v))) {
        throw new LangError(
          'PARALLEL',
          `parallel group "${group.name}": steps "${earlier.by}" and "${step.name}" both changed '${k}'`,
          group.span,
        );
      }
      writes.set(k, { value: v, by: step.name });
    }
  }
  for (const [k, { value }] of writes) base.assign(k, value, group.span);
  return results.some((r) => r.status === 'fulfilled' && r.value === 'complete');
}

/** One branch, between its own `step_start` and `step_end`. */
async function runBranch(
  ctx: GroupContext,
  group: ParallelGroup,
  step: Step,
  env: Environment,
  signal: AbortSignal,
  run: AbortSignal,
): Promise<HookAnswer> {
  if ((await ctx.hooks.stepStart(step.name, group.name)) === 'complete') return 'complete';
  const began = Date.now();
  try {
    await ctx.scope.interpreter.execIn(step.body, env.child(), signal);
  } catch (e) {
    if (run.aborted) throw e;
    const completed = e instanceof CompleteSignal;
    const status: StepStatus = completed
      ? 'completed'
      : e instanceof PauseSignal
        ? 'paused'
        : signal.aborted
          ? 'timed_out'
          : 'failed';
    const answer = await ctx.hooks.stepEnd(
      step.name,
      group.name,
      status,
      completed ? undefined : e,
      began,
    );
    if (completed || answer === 'complete') return 'complete';
    throw e;
  }
  return ctx.hooks.stepEnd(step.name, group.name, 'completed', undefined, began);
}

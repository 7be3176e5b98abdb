/**
 * A run's checkpoint: its persisted variables (inputs, pipeline variables, `mem`; JSON only),
 * written after every completed step and on `pause()`, with the latest pointer and, for a loop
 * pipeline, its loop record.
 */
import type { TerminalReason } from '../checkpoints/checkpoint-records.schema.js';
import { RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import {
  DurationValue,
  formatValue,
  isJsonValue,
  isObject,
  type MhlObject,
  newObject,
  type Value,
} from '../interpreter/values.js';
import { signalOf } from '../services/cancellation.js';
import { RunFailure } from './run-failure.js';
import { env, type RunState, setting } from './run-state.js';
import { persisted } from './settings.js';

/**
 * The persisted variables: inputs, pipeline variables and `mem`, JSON only. `strict` refuses a
 * function or task handle (a checkpoint cannot hold it); otherwise such values are left out.
 */
function snapshot(run: RunState, strict = true): MhlObject {
  const mem = run.mem.save(env(run));
  const out = newObject();
  for (const [k, v] of env(run).own()) {
    if (run.mem.has(k)) continue;
    if (!isJsonValue(v)) {
      if (!strict) continue;
      throw new RunFailure(
        'step_failed',
        RUN_ERROR_CODES.CHECKPOINT,
        `variable '${k}' holds a ${typeof v === 'object' && v ? (v as { typeName?: string }).typeName : typeof v}, which cannot be checkpointed; keep functions and task handles in step-local variables`,
        { span: run.decl.vars.find((v) => v.name === k)?.span },
      );
    }
    out[k] = persisted(v);
  }
  out['__mem'] = persisted(mem);
  return out;
}

function checkpointEnabled(run: RunState): boolean {
  return run.definition.checkpoints;
}

/** `checkpoint: {ttl: …}` in seconds (0: none), per pipeline: a literal, read once, not per step. */
const ttls = new WeakMap<RunState['decl'], number>();

function ttlSeconds(run: RunState): number {
  let seconds = ttls.get(run.decl);
  if (seconds === undefined) {
    const ttl = setting(run, 'checkpoint');
    const ttlValue = isObject(ttl) ? ttl['ttl'] : undefined;
    seconds = ttlValue instanceof DurationValue ? Math.round(ttlValue.ms / 1000) : 0;
    ttls.set(run.decl, seconds);
  }
  return seconds;
}

export async function checkpoint(
  run: RunState,
  next: number,
  lastStep = '',
  paused?: Value,
): Promise<void> {
  // A pause is written even when ephemeral: it is what the caller needs to resume the run.
  if (run.options.ephemeral && paused === undefined) return;
  if (!checkpointEnabled(run) && paused === undefined) return;
  const variables = snapshot(run);
  variables['__last_step'] = lastStep;
  const draft = {
    last_step: lastStep,
    next_step: run.steps[next]?.name ?? '',
    // Not copied: the store encodes it before it returns and keeps nothing of it.
    completed_steps: run.completed,
    variables,
    ttl_seconds: ttlSeconds(run),
    digest: run.definition.digest,
    ...(paused !== undefined ? { paused: { reason: formatValue(paused) } } : {}),
  };
  const options = { signal: signalOf(run.options.signal) };
  await run.options.state.save(run.session, run.decl.name, draft, options);
  if (!run.latestSet) {
    // The pointer names the session, which does not change during a run: write it once.
    await run.options.state.setLatest(run.decl.name, run.session, options);
    run.latestSet = true;
  }
  if (run.decl.loop) {
    const loop = {
      next_iteration: run.iteration,
      terminal_reason: run.terminalReason as TerminalReason,
      instance_id: run.session,
    };
    await run.options.state.saveLoop(run.session, run.decl.name, loop, options);
  }
}

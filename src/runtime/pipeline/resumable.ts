/**
 * Whether a stopped run can be resumed where it stopped: `mhl run` offers `--resume` only
 * then. Reads the run's last checkpoint; writes nothing.
 */
import type { PipelineDecl } from '../../lang/index.js';
import type { Store } from '../../store/index.js';
import { CheckpointStore } from '../checkpoints/checkpoints.js';
import { toPlain } from '../interpreter/values.js';
import { REDACTED, type Redactor } from '../services/redact.js';
import type { RunOutcome } from './runner.js';

/**
 * True when `outcome` paused or failed after a checkpoint in `store`, and that checkpoint holds
 * every declared input as given. An input that held a secret is saved redacted, so resuming
 * would run on `[REDACTED]`: not resumable.
 */
export async function canResume(
  outcome: RunOutcome,
  pipeline: PipelineDecl,
  store: Store,
  redactor: Redactor,
): Promise<boolean> {
  const kind = outcome.error?.kind;
  const stopped =
    outcome.status === 'paused' ||
    outcome.status === 'canceled' ||
    kind === 'step_failed' ||
    kind === 'step_timeout' ||
    kind === 'hook_failed';
  if (!stopped) return false;
  const state = new CheckpointStore(store, redactor);
  const record = await state.load(outcome.session, outcome.pipeline).catch(() => undefined);
  if (record === undefined) return false;
  return pipeline.inputs.every((input) => {
    const saved = record.variables[input.name];
    return saved !== undefined && !JSON.stringify(toPlain(saved)).includes(REDACTED);
  });
}

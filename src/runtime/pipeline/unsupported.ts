/**
 * Pipeline constructs `mhl lint` accepts but this runtime does not run yet. Their semantics are
 * marked ADV/UNVERIFIED in the language digest, so the run refuses them up front, at their
 * position, instead of guessing or silently skipping them (a skipped hook or an ignored
 * signature parameter would surface later as a confusing "undefined variable").
 */
import type { PipelineDecl } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';

const HOOKS = new Set(['session_start', 'session_end', 'step_start', 'step_end', 'stop_failure']);

/** Raises `UNSUPPORTED` (positioned) for the first such construct in `decl`; else returns. */
export function refuseUnsupported(decl: PipelineDecl): void {
  const hook = decl.props.find((p) => HOOKS.has(p.name));
  if (hook)
    throw new LangError(
      'UNSUPPORTED',
      `pipeline hook '${hook.name}' is not supported yet: use steps, try/finally or output:`,
      hook.span,
    );
  if (decl.signature)
    throw new LangError(
      'UNSUPPORTED',
      `typed pipeline signatures are not supported yet: declare 'input ${decl.signature.param.name}: …' instead`,
      decl.signature.param.span,
    );
  for (const s of decl.steps) {
    const steps = s.kind === 'Parallel' ? s.steps : [s];
    const entry = steps.find((x) => x.entry);
    if (entry)
      throw new LangError(
        'UNSUPPORTED',
        `entry steps are not supported yet: a run starts at the first step ('${entry.name}' is marked entry)`,
        entry.nameSpan,
      );
  }
}

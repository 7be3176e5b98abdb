/**
 * `Name.run(inputs: {…})` inside a test: runs a pipeline or workflow declared in the test's file
 * or imported into it, to its end, exactly as `mhl run` would (inputs validated and defaulted,
 * `goto`, `break`, `pause()`, loops, `output:`), in a sandbox that writes no state: checkpoints go
 * to a store that lives only as long as the call. It answers the run's report as a value:
 *
 *   {ok, state, executed, skipped, iterations, vars, output, error, pause_reason, break_reason}
 *
 * `state` is "completed", "broke", "paused", "failed" or "canceled"; `ok` is true unless the run
 * failed. `vars` holds every pipeline variable, `output` what a caller would receive (the
 * `output:` projection, else every variable). Inputs that do not fit the declaration raise a
 * catchable `INVALID_INPUTS` error instead: the call is wrong, not the workflow.
 */
import { randomUUID } from 'node:crypto';
import {
  buildNamespace,
  LangError,
  type LoadedProgram,
  type Module,
  type PipelineDecl,
} from '../../lang/index.js';
import { MemoryStore } from '../../store/index.js';
import { CheckpointStore } from '../checkpoints/checkpoints.js';
import type { RunServices } from '../interpreter/declarations.js';
import {
  type CallArgs,
  FunctionValue,
  isObject,
  type MhlObject,
  newObject,
  Reference,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import { type RunOutcome, runPipeline } from '../pipeline/runner.js';

/** The reference a test sees for a pipeline name: its only member is `run`. */
export function workflowReference(
  decl: PipelineDecl,
  module: Module,
  texts: LoadedProgram['texts'],
  services: RunServices,
): Reference {
  let program: LoadedProgram | undefined;
  const run = new FunctionValue(`${decl.name}.run`, async (args, signal) => {
    program ??= { root: module, namespace: buildNamespace(module), texts };
    const outcome = await runPipeline(program, decl, {
      inputs: inputsOf(decl.name, args),
      session: randomUUID().replaceAll('-', ''),
      signal,
      services,
      state: new CheckpointStore(new MemoryStore(), services.redactor),
      ephemeral: true,
      reportState: true,
    });
    if (outcome.error?.kind === 'invalid_inputs')
      throw new LangError('INVALID_INPUTS', outcome.error.message);
    if (outcome.status === 'canceled') signal.throwIfAborted();
    return report(outcome);
  });
  return new Reference('workflow', decl.name, (m) => (m === 'run' ? run : undefined));
}

function inputsOf(name: string, args: CallArgs): Readonly<Record<string, Value>> {
  const given = args.named.get('inputs') ?? args.positional[0] ?? null;
  const unknown = [...args.named.keys()].filter((k) => k !== 'inputs');
  if (unknown.length > 0 || args.ordered.length > 1)
    throw new LangError('CALL', `${name}.run takes one argument, inputs: {…}`);
  if (given === null) return {};
  if (!isObject(given))
    throw new LangError('TYPE', `${name}.run: inputs must be an object, got ${typeOf(given)}`);
  return given;
}

function report(o: RunOutcome): MhlObject {
  const state = o.status === 'completed' && o.broke ? 'broke' : o.status;
  const strings = (xs: readonly string[]) => xs.map((x): Value => x);
  return newObject([
    ['ok', o.status === 'completed' || o.status === 'paused'],
    ['state', state],
    ['executed', strings(o.executed)],
    ['skipped', strings(o.skipped)],
    ['iterations', o.iterations],
    ['vars', o.state ?? o.vars],
    ['output', o.status === 'completed' ? o.vars : null],
    ['error', o.error ? o.error.message : null],
    ['step', o.error?.step ?? null],
    ['pause_reason', o.status === 'paused' ? (o.pauseReason ?? null) : null],
    ['break_reason', o.broke ? (o.breakReason ?? null) : null],
  ]);
}

/**
 * Lint rules for the newest pipeline parts (docs/language.md, "Lifecycle hooks", "Typed
 * signatures", "Entry steps"): what the runtime gives these constructs only makes sense in
 * these forms, so a program that could never run as written is reported before it runs.
 */
import type { DeclOf } from './ast.js';
import { BUILTIN_TYPES } from './builtins.js';
import { DIAGNOSTIC_CODES, type Diagnostic, type Span } from './diagnostics.js';

type Report = (code: Diagnostic['code'], message: string, span: Span) => void;

const HOOKS = new Set(['session_start', 'session_end', 'step_start', 'step_end', 'stop_failure']);

export function checkPipelineParts(decl: DeclOf<'Pipeline'>, owner: string, report: Report): void {
  for (const p of decl.props) {
    if (!HOOKS.has(p.name)) continue;
    if (p.value.kind !== 'Lambda' || p.value.params.length !== 1)
      report(
        DIAGNOSTIC_CODES.INVALID,
        `${owner}: ${p.name} must be a lambda taking one parameter, e.g. ${p.name}: (info) -> log(info.pipeline)`,
        p.value.span,
      );
  }
  const returns = decl.signature?.returns;
  // A run's result is an object (the output: projection or the variables): R types that object.
  const kind =
    returns?.kind === 'ArrayType'
      ? 'array'
      : returns?.kind === 'NamedType'
        ? BUILTIN_TYPES[returns.name]
        : undefined;
  if (returns && kind !== undefined && kind !== 'object' && kind !== 'any')
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner}: a pipeline's return type types its result, which is an object; use a shape such as {summary: string} or a type alias of one`,
      returns.span,
    );
  const entries = decl.steps.filter((s) => s.kind === 'Step' && s.entry);
  for (const extra of entries.slice(1))
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner}: only one step may be marked entry ('${entries[0]?.name}' already is)`,
      extra.nameSpan,
    );
  // (`entry` inside a parallel group is a syntax error: a group holds plain steps.)
}

/**
 * `router R { agents: [A, B]  select: (prompt) -> …  decider: Judge }` and its one call,
 * `R.delegate(prompt:, schema:?)` (language digest §5.8).
 *
 * The choice is made in this order: `select` (when declared) is called with the prompt; a string
 * naming a listed agent (or the agent itself) wins, `null` defers to the `decider`, anything else is an error. The
 * decider is an agent asked a structured question: which of the listed agents should answer,
 * given each one's `description`; it receives a JSON Schema whose `agent` field is an enum of the
 * names, and its answer may be that JSON object, a JSON string, a CLI envelope holding either
 * (`result` or `structured_output`), or the bare name. The chosen agent then runs like
 * `A.run(prompt:, schema:)`, with its own hooks, retry, cache, limits and fallbacks.
 *
 * This module decides; running agents and evaluating expressions belong to the host (RunScope).
 */
import type { DeclOf, Expr, Module, Property, Span } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import {
  FunctionValue,
  formatValue,
  fromJson,
  isObject,
  Reference,
  typeOf,
  type Value,
} from './values.js';

/** A listed agent: the name the router's source wrote, and its declaration. */
export interface RouteTarget {
  readonly spelling: string;
  readonly decl: DeclOf<'Agent'>;
  readonly module: Module;
}

/** The prompt and schema one `delegate` call sends. */
export interface Delegation {
  readonly prompt: string;
  readonly schema: string | null;
}

/** What the router needs from the run that hosts it. */
export interface RouterHost {
  /** Evaluates an expression in the router's module scope. */
  evaluate(e: Expr, signal: AbortSignal): Promise<Value>;
  /** Calls a function value (the `select` lambda). */
  call(fn: FunctionValue, args: Value[], signal: AbortSignal, span: Span): Promise<Value>;
  /** The agent declaration an identifier names in the router's module, if any. */
  agent(name: string): { decl: DeclOf<'Agent'>; module: Module } | undefined;
  /** Runs a declared agent with its hooks and policies, as `A.run(prompt:, schema:)` would. */
  runDeclared(
    target: { decl: DeclOf<'Agent'>; module: Module },
    request: Delegation,
    signal: AbortSignal,
    span: Span,
  ): Promise<Value>;
  /** Runs an inline `agent { … }` literal (a decider written in place). */
  runInline(props: readonly Property[], request: Delegation, signal: AbortSignal): Promise<Value>;
}

const ROUTER = 'ROUTER';

/** Runs `R.delegate(…)`: picks an agent and returns its answer. Raises `ROUTER`; honours `signal`. */
export async function delegate(
  router: DeclOf<'Router'>,
  host: RouterHost,
  request: Delegation,
  signal: AbortSignal,
  span: Span,
): Promise<Value> {
  const targets = listedAgents(router, host);
  let chosen: RouteTarget | undefined;
  const select = router.props.find((p) => p.name === 'select')?.value;
  if (select) {
    const fn = await host.evaluate(select, signal);
    if (!(fn instanceof FunctionValue))
      throw routerError(router, `select must be a function, got ${typeOf(fn)}`, select.span);
    const picked = await host.call(fn, [request.prompt], signal, select.span);
    if (picked !== null) chosen = byName(router, targets, picked, 'select', span);
  }
  chosen ??= await decide(router, host, targets, request, signal, span);
  return host.runDeclared(chosen, request, signal, span);
}

function routerError(router: DeclOf<'Router'>, message: string, span: Span): LangError {
  return new LangError(ROUTER, `router '${router.name}': ${message}`, span);
}

/** The `agents:` list: identifiers of declared agents, at least one. */
function listedAgents(router: DeclOf<'Router'>, host: RouterHost): RouteTarget[] {
  const list = router.props.find((p) => p.name === 'agents')?.value;
  if (list?.kind !== 'Array' || list.items.length === 0)
    throw routerError(router, 'agents: must list at least one agent, e.g. [A, B]', router.span);
  return list.items.map((item) => {
    const found = item.kind === 'Ident' ? host.agent(item.name) : undefined;
    if (item.kind !== 'Ident' || !found)
      throw routerError(router, 'agents: entries must be declared agents', item.span);
    return { spelling: item.name, ...found };
  });
}

/** The listed agent a name designates (its spelling here or its declared name). */
function byName(
  router: DeclOf<'Router'>,
  targets: readonly RouteTarget[],
  picked: Value,
  who: string,
  span: Span,
): RouteTarget {
  // `nameof(A)` gives the name; the agent itself (`select: (p) -> A`) is accepted too.
  const name =
    typeof picked === 'string'
      ? picked.trim()
      : picked instanceof Reference && picked.refKind === 'agent'
        ? picked.name
        : undefined;
  const found =
    name === undefined
      ? undefined
      : targets.find((t) => t.spelling === name || t.decl.name === name);
  if (found) return found;
  const shown = typeof picked === 'string' ? `"${picked}"` : formatValue(picked);
  throw routerError(
    router,
    `${who} chose ${shown}, which is none of ${targets.map((t) => t.spelling).join(', ')}`,
    span,
  );
}

/** Asks the decider which agent should answer, and reads its answer. */
async function decide(
  router: DeclOf<'Router'>,
  host: RouterHost,
  targets: readonly RouteTarget[],
  request: Delegation,
  signal: AbortSignal,
  span: Span,
): Promise<RouteTarget> {
  const decider = router.props.find((p) => p.name === 'decider')?.value;
  if (!decider) throw routerError(router, 'select returned null and no decider is declared', span);
  const question: Delegation = {
    prompt: await decisionPrompt(targets, host, request.prompt, signal),
    schema: decisionSchema(targets),
  };
  let answer: Value;
  if (decider.kind === 'InlineAgent') {
    answer = await host.runInline(decider.props, question, signal);
  } else {
    const found = decider.kind === 'Ident' ? host.agent(decider.name) : undefined;
    if (!found)
      throw routerError(router, 'decider must be an agent or an inline agent { … }', decider.span);
    answer = await host.runDeclared(found, question, signal, span);
  }
  return byName(router, targets, chosenName(answer), 'the decider', span);
}

async function decisionPrompt(
  targets: readonly RouteTarget[],
  host: RouterHost,
  prompt: string,
  signal: AbortSignal,
): Promise<string> {
  const lines: string[] = [];
  for (const t of targets) {
    const e = t.decl.props.find((p) => p.name === 'description')?.value;
    const description = e ? formatValue(await host.evaluate(e, signal)) : '';
    lines.push(`- ${t.spelling}${description ? `: ${description}` : ''}`);
  }
  return [
    'Choose the one agent best suited to handle the request below.',
    'Agents:',
    ...lines,
    '',
    `Answer with JSON only: {"agent": "<name>"}, where <name> is one of: ${targets.map((t) => t.spelling).join(', ')}.`,
    '',
    'Request:',
    prompt,
  ].join('\n');
}

/** A JSON Schema for `{"agent": <one of the names>}`, the structured answer the decider gives. */
function decisionSchema(targets: readonly RouteTarget[]): string {
  return JSON.stringify({
    type: 'object',
    properties: { agent: { type: 'string', enum: targets.map((t) => t.spelling) } },
    required: ['agent'],
    additionalProperties: false,
  });
}

/**
 * The agent name inside a decider's answer: `{"agent": "A"}`, `"A"`, a CLI envelope that holds
 * one of those (`{"structured_output": {...}}`, `{"result": "..."}`), or the bare name. Returns
 * the answer itself when it holds none, so the error shows what the decider said.
 */
export function chosenName(answer: Value, depth = 0): Value {
  if (depth > 3) return answer;
  if (typeof answer === 'string') {
    const text = answer
      .trim()
      .replace(/^```(?:json)?\s*|\s*```$/g, '')
      .trim();
    if (/^[[{"]/.test(text)) {
      try {
        return chosenName(fromJson(JSON.parse(text)), depth + 1);
      } catch {
        // Not JSON after all: fall through and read it as a bare name.
      }
    }
    return text.replace(/^[`'"]|[`'".]$/g, '');
  }
  if (isObject(answer)) {
    for (const key of ['agent', 'structured_output', 'result']) {
      const v = answer[key];
      if (v !== undefined && v !== null) return chosenName(v, depth + 1);
    }
  }
  return answer;
}

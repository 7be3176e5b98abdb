/**
 * A deterministic walker for activity-session servers (spec session-profile §5, robot mode):
 * drives one workflow from `start_session` to its terminal state through an MCP client,
 * answering checkpoints by a policy (the default option, else the first), fetching every
 * unbundled technique step, reporting a step manifest, and choosing transitions from its own
 * copy of the variable bag with its own condition and `when` evaluators (independent of the
 * server's). Used by the e2e test, the side-by-side comparison and bench/sessions.bench.mjs;
 * it works against mhl and the public workflow-server alike.
 */
import { parse } from 'yaml';

export const SEPARATOR = '\n\n---\n\n';
export const TERMINAL = '__terminal__';

// ---- evaluators (reimplemented: the walker must not trust the server's) ----

function read(bag, path) {
  let v = bag;
  for (const p of String(path).split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[p];
  }
  return v;
}

function num(v) {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function cmp(a, op, b) {
  if (op === '==') return a === b;
  if (op === '!=') return a !== b;
  const x = num(a);
  const y = num(b);
  if (x === undefined || y === undefined) return false;
  return op === '>'
    ? x > y
    : op === '<'
      ? x < y
      : op === '>='
        ? x >= y
        : op === '<='
          ? x <= y
          : false;
}

export function condition(c, bag) {
  if (!c) return true;
  if (c.type === 'and') return c.conditions.every((x) => condition(x, bag));
  if (c.type === 'or') return c.conditions.some((x) => condition(x, bag));
  if (c.type === 'not') return !condition(c.condition, bag);
  const v = read(bag, c.variable);
  if (c.operator === 'exists') return v !== undefined && v !== null;
  if (c.operator === 'notExists') return v === undefined || v === null;
  return cmp(v, c.operator, c.value);
}

/** `when` text over the bag; text that does not parse is false. */
export function when(text, bag) {
  const tokens = [];
  const re =
    /\s*(\|\||&&|==|!=|>=|<=|>|<|!|\(|\)|"(?:\\.|[^"])*"|'(?:\\.|[^'])*'|-?\d+(?![\w.])|[A-Za-z_][\w.-]*)/y;
  let m;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    m = re.exec(text);
    if (!m) {
      if (/^\s*$/.test(text.slice(at))) break;
      return false;
    }
    tokens.push(m[1]);
    at = re.lastIndex;
  }
  let i = 0;
  const value = (t) => {
    if (t === undefined) throw new Error('value');
    if (/^["']/.test(t)) return t.slice(1, -1).replace(/\\(.)/g, '$1');
    if (/^-?\d+$/.test(t)) return Number(t);
    if (t === 'true') return true;
    if (t === 'false') return false;
    if (t === 'null') return null;
    if (/^[A-Za-z_]/.test(t)) return t;
    throw new Error('value');
  };
  const primary = () => {
    const t = tokens[i++];
    if (t === '(') {
      const v = or();
      if (tokens[i++] !== ')') throw new Error(')');
      return v;
    }
    if (t === 'true') return true;
    if (t === 'false') return false;
    if (t === undefined || !/^[A-Za-z_]/.test(t) || t === 'null') throw new Error('ident');
    if (['==', '!=', '>', '<', '>=', '<='].includes(tokens[i])) {
      const op = tokens[i++];
      return cmp(read(bag, t), op, value(tokens[i++]));
    }
    return Boolean(read(bag, t));
  };
  const unary = () => {
    if (tokens[i] !== '!') return primary();
    i++;
    return !unary();
  };
  const and = () => {
    let v = unary();
    while (tokens[i] === '&&') {
      i++;
      const r = unary();
      v = v && r;
    }
    return v;
  };
  const or = () => {
    let v = and();
    while (tokens[i] === '||') {
      i++;
      const r = and();
      v = v || r;
    }
    return v;
  };
  try {
    if (tokens.length === 0) return false;
    const v = or();
    return i === tokens.length ? v : false;
  } catch {
    return false;
  }
}

const gate = (step, bag) =>
  (step.when === undefined || when(step.when, bag)) && condition(step.condition, bag);

/** §1.10: the first true condition, an unconditioned entry at once, else the default. */
export function pickTransition(transitions, bag) {
  let fallback;
  for (const t of transitions ?? []) {
    if (t.condition) {
      if (condition(t.condition, bag)) return t.to;
    } else if (t.isDefault) fallback ??= t.to;
    else return t.to;
  }
  return fallback;
}

/** The default policy: `defaultOption` when it is an option, else the first option. */
export function defaultPolicy(step) {
  const ids = (step.options ?? []).map((o) => o.id);
  return ids.includes(step.defaultOption) ? step.defaultOption : ids[0];
}

// ---- the walk ----

function textOf(result) {
  return result?.content?.[0]?.text ?? '';
}

/**
 * Walks `workflowId` to its end. `call(name, args)` performs one tool call and resolves to the
 * result; `options.policy(step, activityId)` picks checkpoint options; `options.simulate(id, bag)`
 * returns variables a real agent would set in that activity; `options.bundle` is passed to every
 * get_activity (`'reference'` for reference-mode deliveries); `options.startArgs` are added to
 * start_session (e.g. `context_mode`); `options.probes` are hooks
 * (`start` after get_workflow, `activity` after each get_activity, `checkpoint` at each phase of a checkpoint, `end` after the
 * terminal next_activity) that make extra calls through `probe`, recorded even when they fail, so
 * the comparison covers the tools and paths a walk itself never takes. Resolves to
 * `{sessionIndex, path, calls, status}`.
 */
export async function walk(call, workflowId, options = {}) {
  const policy = options.policy ?? defaultPolicy;
  const maxVisits = options.maxVisits ?? 4;
  const contextTokens = options.contextTokens ?? 200000;
  const calls = [];
  const invoke = async (name, args) => {
    const result = await call(name, args);
    calls.push({ name, args, result });
    if (result.isError) throw new Error(`${name} failed: ${textOf(result).slice(0, 300)}`);
    return result;
  };
  // A probe call is recorded like any other but may fail: error results are compared too.
  // A protocol-level failure (the client rejecting a malformed result) is recorded as such.
  const probe = async (name, args) => {
    let result;
    try {
      result = await call(name, args);
    } catch (e) {
      result = { isError: true, thrown: e?.code ?? String(e), content: [] };
    }
    calls.push({ name, args, result, probe: true });
    return result;
  };
  const hooks = options.probes ?? {};
  const started = await invoke('start_session', {
    workflow_id: workflowId,
    agent_id: 'e2e-walker',
    ...(options.startArgs ?? {}),
  });
  const { session_index: index } = JSON.parse(textOf(started));
  const wfText = textOf(await invoke('get_workflow', { session_index: index }));
  const summary = parse(wfText.slice(wfText.indexOf(SEPARATOR) + SEPARATOR.length));
  await hooks.start?.({ index, probe, calls });
  const bag = {};
  for (const v of summary.variables ?? [])
    if (v.defaultValue !== undefined) bag[v.name] = structuredClone(v.defaultValue);
  Object.assign(bag, options.initialVariables ?? {});
  let current = summary.initialActivity ?? summary.activities?.[0]?.id;
  let manifest;
  const visits = new Map();
  const path = [];
  while (current !== undefined) {
    const seen = (visits.get(current) ?? 0) + 1;
    visits.set(current, seen);
    if (seen > maxVisits) throw new Error(`loop guard: ${current} entered ${seen} times`);
    path.push(current);
    await invoke('next_activity', {
      session_index: index,
      activity_id: current,
      ...(manifest ? { step_manifest: manifest } : {}),
    });
    if (current === TERMINAL) {
      await hooks.end?.({ index, probe, calls });
      break;
    }
    const got = await invoke('get_activity', {
      session_index: index,
      context_tokens: contextTokens,
      ...(options.bundle ? { bundle: options.bundle } : {}),
    });
    const text = textOf(got);
    const activity = parse(text.slice(text.indexOf(SEPARATOR) + SEPARATOR.length));
    const bundled = new Set(got._meta?.bundled_steps ?? []);
    await hooks.activity?.({ index, activity: current, visit: path.length, probe, calls });
    manifest = [];
    let jump;
    const run = async (steps) => {
      for (const step of steps ?? []) {
        if (!gate(step, bag)) continue;
        if (step.kind === 'loop' && step.id !== undefined)
          manifest.push({ step_id: step.id, output: 'done' });
        if (step.kind === 'checkpoint')
          jump =
            (await checkpoint(invoke, index, step, current, policy, bag, (phase) =>
              hooks.checkpoint?.({ index, activity: current, step, phase, probe, calls }),
            )) ?? jump;
        else if (step.kind === 'loop') await run(step.steps);
        else if (step.kind === 'technique' && !bundled.has(step.id))
          await invoke('get_technique', { session_index: index, step_id: step.id });
        for (const a of step.actions ?? [])
          if (a.action === 'set' && a.target && a.value !== undefined) bag[a.target] = a.value;
        if (step.id !== undefined && step.kind !== 'loop')
          manifest.push({ step_id: step.id, output: 'done' });
      }
    };
    await run(activity.steps);
    Object.assign(bag, options.simulate?.(current, bag) ?? {});
    const next = jump ?? pickTransition(activity.transitions, bag);
    // No outgoing transition: the orchestrator ends the session with the terminal sentinel,
    // so it finishes `completed` rather than left running at its last activity.
    current = next ?? (options.endWithTerminal === false ? undefined : TERMINAL);
  }
  return { sessionIndex: index, path, calls };
}

async function checkpoint(invoke, index, step, activityId, policy, bag, at = async () => {}) {
  const option = policy(step, activityId);
  await at('before-yield');
  const y = JSON.parse(
    textOf(await invoke('yield_checkpoint', { session_index: index, checkpoint_id: step.id })),
  );
  let effect;
  if (y.status === 'replayed') effect = y.effect;
  else {
    await at('yielded');
    await invoke('present_checkpoint', { session_index: index });
    const r = JSON.parse(
      textOf(await invoke('respond_checkpoint', { session_index: index, option_id: option })),
    );
    effect = r.effect;
    await at('responded');
    await invoke('resume_checkpoint', { session_index: index });
    await at('resumed');
  }
  Object.assign(bag, effect?.setVariable ?? {});
  return effect?.transitionTo;
}

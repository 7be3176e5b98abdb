/**
 * What a workflow can do to the world, read from its syntax tree without evaluating anything:
 * the native operations it calls (`fs.write` writes, `fs.read` does not; `cmd.exec` starts a
 * process whatever its arguments say), the agents, memories and extensions it reaches, and,
 * transitively, everything the tools, prompts and agents it mentions do, across imports.
 *
 * Strings and comments are never read as code, so `cmd.exec(["grep", "--exclude-dir", …])` is a
 * process and not a write. It errs towards risk where the tree cannot tell: a native namespace
 * used as a value (`var f = fs`) counts every effect that namespace has, an unknown operation of
 * a known namespace counts as its riskiest, and a name bound to a declaration counts that
 * declaration even where a local variable shadows it.
 */
import type { Decl, Expr, NamedDecl } from '../lang/index.js';
import { type Binding, type Module, moduleScope, type Namespace } from '../lang/index.js';
import type { Workflow } from './types.js';

/** What a call can do to the world outside the server, in a fixed order. */
export const RISK_EFFECTS = ['agent', 'filesystem_write', 'network', 'process'] as const;
export type RiskEffect = (typeof RISK_EFFECTS)[number];

interface NamespaceEffects {
  /** Operations that read only. */
  readonly safe: readonly string[];
  /** Operations with effects other than `otherwise`. */
  readonly ops?: Readonly<Record<string, readonly RiskEffect[]>>;
  /** Every other operation, and the namespace used as a value. */
  readonly otherwise: readonly RiskEffect[];
}

/** The effects of every native namespace's operations (src/runtime/natives/). */
export const NATIVE_EFFECTS: Readonly<Record<string, NamespaceEffects>> = {
  cmd: { safe: [], otherwise: ['process'] },
  dir: { safe: ['exists', 'list'], otherwise: ['filesystem_write'] },
  fs: { safe: ['read', 'exists', 'join', 'list'], otherwise: ['filesystem_write'] },
  // Fixed git commands: the read-only ones change nothing; `add` and `commit` write the repo
  // and may run its hooks (any program).
  git: { safe: ['status', 'diff', 'rev_parse', 'log'], otherwise: ['filesystem_write', 'process'] },
  html: { safe: [], otherwise: [] },
  http: { safe: [], ops: { download: ['network', 'filesystem_write'] }, otherwise: ['network'] },
  json: { safe: [], otherwise: [] },
  log: { safe: [], otherwise: [] },
  time: { safe: [], otherwise: [] },
  uuid: { safe: [], otherwise: [] },
};

/** An agent runs an engine CLI (a process) that reaches its model provider (the network). */
const AGENT_EFFECTS: readonly RiskEffect[] = ['agent', 'network', 'process'];
/** An extension (`extension mcp|a2a|…`, legacy `mcp_server`) reaches a server or spawns one. */
const EXTENSION_EFFECTS: readonly RiskEffect[] = ['network', 'process'];

/** Which effects the workflow, or anything it reaches, can have. */
export function workflowEffects(workflow: Workflow): RiskEffect[] {
  const walk = new EffectWalk(workflow.program.namespace);
  walk.code(workflow.decl, workflow.program.root);
  walk.drain();
  return RISK_EFFECTS.filter((e) => walk.found.has(e));
}

/** A credential slot: a `vault("name")` name and the kinds its calls accept (empty: any). */
export interface CredentialSlot {
  readonly name: string;
  readonly kinds: readonly string[];
}

/**
 * The credential slots of a workflow: the literal names of every `vault("name")` call it, or
 * anything it reaches, makes (sorted by name), each with the literal `kind:` its calls ask for
 * (a call without one accepts any kind). A call passes a vault record id for a slot under
 * `credentials.<slot>`; `vault()` with a computed name has no slot a client could fill.
 */
export function workflowSlots(workflow: Pick<Workflow, 'decl' | 'program'>): CredentialSlot[] {
  const walk = new EffectWalk(workflow.program.namespace);
  walk.code(workflow.decl, workflow.program.root);
  walk.drain();
  return [...walk.slots]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, kinds]) => ({ name, kinds: kinds === 'any' ? [] : [...kinds].sort() }));
}

class EffectWalk {
  readonly found = new Set<RiskEffect>();
  /** Slot name → the kinds its calls name, or `any` once a call names none. */
  readonly slots = new Map<string, Set<string> | 'any'>();
  readonly #seen = new Set<Decl>();
  readonly #queue: (readonly [NamedDecl, Module])[] = [];
  readonly #namespace: Namespace;

  constructor(namespace: Namespace) {
    this.#namespace = namespace;
  }

  /** Walks the declarations reached so far, and those they reach. */
  drain(): void {
    for (let next = this.#queue.pop(); next !== undefined; next = this.#queue.pop()) {
      this.#decl(...next);
    }
  }

  /** Every expression under `node` (a declaration, statement or expression) in `module`. */
  code(node: unknown, module: Module): void {
    if (Array.isArray(node)) {
      for (const item of node) this.code(item, module);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const kind = (node as { kind?: unknown }).kind;
    if (kind === 'Member' && this.#member(node as Extract<Expr, { kind: 'Member' }>, module)) {
      return;
    }
    if (kind === 'Ident') this.#name((node as { name: string }).name, module);
    if (kind === 'Call') this.#slot(node as Extract<Expr, { kind: 'Call' }>, module);
    if (kind === 'InlineAgent') this.#add(AGENT_EFFECTS);
    const fields = node as Record<string, unknown>;
    for (const key in fields) {
      // Spans (`span`, `nameSpan`, …) hold positions, never code.
      if (key.endsWith('pan')) continue;
      const value = fields[key];
      if (typeof value === 'object' && value !== null) this.code(value, module);
    }
  }

  /** `ns.op` on a native namespace or an imported namespace; true when fully handled. */
  #member(member: Extract<Expr, { kind: 'Member' }>, module: Module): boolean {
    if (member.object.kind !== 'Ident') return false;
    const name = member.object.name;
    const binding = this.#binding(name, module);
    if (binding?.kind === 'namespace') {
      const target = moduleScope(binding.module).bindings.get(member.name);
      if (target?.kind === 'decl') this.#reach(target.decl, target.module);
      return true;
    }
    const native = binding === undefined ? NATIVE_EFFECTS[name] : undefined;
    if (native === undefined) return false;
    if (!native.safe.includes(member.name)) {
      this.#add(native.ops?.[member.name] ?? native.otherwise);
    }
    return true;
  }

  /** `vault("name")` (or `vault("name", kind: "…")`) with literals, `vault` the built-in. */
  #slot(call: Extract<Expr, { kind: 'Call' }>, module: Module): void {
    if (call.callee.kind !== 'Ident' || call.callee.name !== 'vault') return;
    if (this.#binding('vault', module) !== undefined) return;
    const name = literalText(call.args.find((a) => a.name === undefined)?.value);
    if (name === undefined) return;
    const kind = literalText(call.args.find((a) => a.name === 'kind')?.value);
    const known = this.slots.get(name);
    if (kind === undefined || known === 'any') this.slots.set(name, 'any');
    else this.slots.set(name, new Set([...(known ?? []), kind]));
  }

  #name(name: string, module: Module): void {
    const binding = this.#binding(name, module);
    if (binding === undefined) {
      // A native namespace used as a value may be called with anything later.
      const native = NATIVE_EFFECTS[name];
      if (native !== undefined)
        this.#add([...native.otherwise, ...Object.values(native.ops ?? {}).flat()]);
      return;
    }
    if (binding.kind === 'decl') this.#reach(binding.decl, binding.module);
    if (binding.kind === 'namespace') {
      for (const decl of binding.module.program.decls) {
        if (decl.kind !== 'Import') this.#reach(decl, binding.module);
      }
    }
  }

  #reach(decl: NamedDecl, module: Module): void {
    if (this.#seen.has(decl)) return;
    this.#seen.add(decl);
    this.#queue.push([decl, module]);
  }

  #decl(decl: NamedDecl, module: Module): void {
    switch (decl.kind) {
      case 'Agent':
        this.#add(AGENT_EFFECTS);
        break;
      case 'Extension':
      case 'Extensible':
        this.#add(EXTENSION_EFFECTS);
        break;
      case 'Memory':
        // `kv` lives in the process; every other type is a file.
        if (!isKv(decl)) this.#add(['filesystem_write']);
        break;
      case 'Test':
        return;
      default:
        break;
    }
    this.code(decl, module);
  }

  /** What `name` means in `module`, as the interpreter resolves it (undefined: not declared). */
  #binding(name: string, module: Module): Binding | undefined {
    const binding = moduleScope(module).bindings.get(name) ?? this.#namespace.bindings.get(name);
    return binding?.kind === 'unresolved' ? undefined : binding;
  }

  #add(effects: readonly RiskEffect[]): void {
    for (const e of effects) this.found.add(e);
  }
}

/** The text of a string literal without interpolation, else undefined. */
function literalText(e: Expr | undefined): string | undefined {
  const text = e?.kind === 'String' && e.segments.length === 1 ? e.segments[0] : undefined;
  return typeof text === 'string' ? text : undefined;
}

function isKv(decl: Extract<Decl, { kind: 'Memory' }>): boolean {
  const type = decl.props.find((p) => p.name === 'type')?.value;
  return type?.kind === 'String' && type.segments.length === 1 && type.segments[0] === 'kv';
}

/**
 * What every tool's `inputSchema` advertises is exactly what the server accepts, over stdio and
 * HTTP, with and without `--require-cwd`. For each tool in `tools/list` the test builds, from
 * the schema alone, the minimal arguments it requires (checked with Ajv against the advertised
 * schema) and calls it: never refused as INVALID_ARGUMENT, nor with any property at the edge of
 * what its schema allows (minimum, maximum, lengths, each enum value). Then it drops each required property,
 * adds an undeclared one wherever `additionalProperties` is false, and breaks each declared
 * constraint (type, enum, bounds, pattern), each time expecting an INVALID_ARGUMENT result naming
 * that field. A tool forwarding `arguments` to a target it names (`job.start`, `mhl_run_start`)
 * is walked into, with the target's own schema from the same list.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { MODERN_META, modern, serverStarter } from '../helpers/http-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/schemas');
const UNDECLARED = 'mhl_undeclared';

type Schema = {
  type?: string;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean;
  /** Set by `inlined` where a declared type recurs: not walked into (the level above was). */
  recurs?: string;
};
type Json = Record<string, unknown>;

/**
 * `schema` with each `$ref` into `root`'s `$defs` replaced by what it names (where a type
 * recurs, a `recurs` marker instead), so walking it sees every declared type's keywords.
 * Ajv checks the advertised schema itself; this copy is only walked.
 */
function inlined(schema: unknown, root: Json, seen: ReadonlySet<string> = new Set()): Schema {
  if (Array.isArray(schema) || typeof schema !== 'object' || schema === null) return {};
  const { $ref, $defs: _defs, $schema: _dialect, ...rest } = schema as Json;
  if (typeof $ref === 'string') {
    const name = $ref.replace(/^#\/\$defs\//, '');
    const target = (root['$defs'] as Json | undefined)?.[name];
    assert.ok(target !== undefined, `dangling ${$ref}`);
    if (seen.has(name)) return { recurs: name };
    return { ...inlined(target, root, new Set([...seen, name])), ...inlined(rest, root, seen) };
  }
  const out: Json = { ...rest };
  if (isJson(rest['properties']))
    out['properties'] = Object.fromEntries(
      Object.entries(rest['properties']).map(([k, v]) => [k, inlined(v, root, seen)]),
    );
  if (isJson(rest['items'])) out['items'] = inlined(rest['items'], root, seen);
  return out as Schema;
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
interface Tool {
  readonly name: string;
  readonly inputSchema: Schema;
}

/** One server, spoken to with stateless (2026-07-28) requests. */
interface Wire {
  request(method: string, params: Json): Promise<Json>;
  close(): Promise<unknown>;
}

/** `mhl serve mcp` on stdio, line by line. */
function stdioWire(args: readonly string[], cwd: string): Wire {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [CLI, 'serve', 'mcp', FOLDER, ...args],
    { cwd, stdio: 'pipe' },
  );
  const waiting = new Map<number, (msg: Json) => void>();
  let buffer = '';
  let id = 0;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const msg = JSON.parse(buffer.slice(0, nl)) as Json;
      buffer = buffer.slice(nl + 1);
      waiting.get(msg['id'] as number)?.(msg);
    }
  });
  const exited = new Promise((done) => child.on('close', done));
  return {
    request: (method, params) => {
      id += 1;
      const answered = new Promise<Json>((done) => waiting.set(id, done));
      const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: MODERN_META } };
      child.stdin.write(`${JSON.stringify(body)}\n`);
      return answered;
    },
    close: () => {
      child.stdin.end();
      return exited;
    },
  };
}

const startHttp = serverStarter(FOLDER);

/** `mhl serve mcp --http`, one stateless POST per request. */
async function httpWire(args: readonly string[]): Promise<Wire> {
  const server = startHttp(args, { MHL_LOG_LEVEL: 'warn' });
  const port = await server.ready;
  return {
    request: async (method, params) => (await modern(port, method, params)).json(),
    close: () => server.stop(),
  };
}

const ajv = new Ajv2020({ strict: true, allErrors: true });

/** The minimal value `schema` accepts: only required properties, each the simplest of its type. */
function minimal(schema: Schema, cwd: string): unknown {
  if (schema.enum !== undefined) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      if (schema.pattern !== undefined) {
        // The only pattern served today is the absolute cwd's; a new one needs a generator here.
        assert.ok(new RegExp(schema.pattern, 'u').test(cwd), `no value for ${schema.pattern}`);
        return cwd;
      }
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((key) => [key, minimal(schema.properties?.[key] ?? {}, cwd)]),
      );
    default:
      return null;
  }
}

/** Values `schema` accepts, each at one edge of a constraint: the server must take them too. */
function edges(schema: Schema, cwd: string): unknown[] {
  const good: unknown[] = [minimal(schema, cwd)];
  if (schema.enum !== undefined) good.push(...schema.enum.slice(1, 5));
  if (schema.minimum !== undefined) good.push(schema.minimum);
  if (schema.maximum !== undefined) good.push(schema.maximum);
  if (schema.minLength !== undefined) good.push('x'.repeat(schema.minLength));
  if (schema.maxLength !== undefined) good.push('x'.repeat(schema.maxLength));
  return [...new Set(good)];
}

/** Values that break one constraint of `schema` each. */
function violations(schema: Schema): unknown[] {
  const bad: unknown[] = [];
  const wrongType: Record<string, unknown> = {
    string: 12345,
    integer: 1.5,
    number: 'not a number',
    boolean: 'no',
    array: { not: 'an array' },
    object: 'not an object',
  };
  if (schema.type !== undefined) bad.push(wrongType[schema.type]);
  if (schema.type === 'integer') bad.push('7');
  if (schema.enum !== undefined) bad.push('~not one of them~');
  if (schema.minimum !== undefined) bad.push(schema.minimum - 1);
  if (schema.maximum !== undefined) bad.push(schema.maximum + 1);
  if (schema.minLength !== undefined && schema.minLength > 0) bad.push('');
  if (schema.maxLength !== undefined) bad.push('x'.repeat(schema.maxLength + 1));
  if (schema.pattern !== undefined) bad.push('relative/dir');
  return bad;
}

/** The minimal arguments of the `Typed` fixture's schema, `$ref`s followed. */
function minimalTyped(schema: Json, cwd: string): Json {
  return minimal(inlined(schema, schema), cwd) as Json;
}

/** A tool and what it is called with: the target it forwards `arguments` to, if any. */
interface Case {
  readonly tool: Tool;
  /** The schema walked: the advertised one, `arguments` replaced by the target's schema. */
  readonly schema: Schema;
  readonly args: Json;
  readonly label: string;
  /** The property naming the target (`tool`, `workflow`); each of its values is a case. */
  readonly selector?: string;
  /** True when `arguments` was replaced by the target's schema (so it is walked into). */
  readonly forwards: boolean;
  /** Checks a value against the advertised schema(s); returns Ajv's verdict. */
  valid(args: Json): boolean;
}

/** The cases of one tool: one, or one per target when it forwards `arguments` to a named one. */
function casesOf(tool: Tool, tools: readonly Tool[], cwd: string): Case[] {
  const schema = inlined(tool.inputSchema, tool.inputSchema as Json);
  const check = ajv.compile(tool.inputSchema);
  const props = schema.properties ?? {};
  const selector = Object.keys(props).find(
    (key) => key !== 'arguments' && props[key]?.enum !== undefined && 'arguments' in props,
  );
  if (selector === undefined) {
    const args = minimal(schema, cwd) as Json;
    return [{ tool, schema, args, label: tool.name, forwards: false, valid: (a) => check(a) }];
  }
  return ((props[selector]?.enum ?? []) as string[]).map((name) => {
    const target = tools.find((t) => t.name === name);
    assert.ok(target, `${tool.name} names ${name}, which tools/list does not list`);
    const checkTarget = ajv.compile(target.inputSchema);
    const targetSchema = inlined(target.inputSchema, target.inputSchema as Json);
    const walked = { ...schema, properties: { ...props, arguments: targetSchema } };
    const args = minimal(schema, cwd) as Json;
    args[selector] = name;
    const inner = minimal(targetSchema, cwd) as Json;
    if (Object.keys(inner).length > 0 || 'arguments' in args) args['arguments'] = inner;
    return {
      tool,
      schema: walked,
      args,
      label: `${tool.name} → ${name}`,
      selector,
      forwards: true,
      valid: (a) => check(a) && (a['arguments'] === undefined || checkTarget(a['arguments'])),
    };
  });
}

/** Every property path under `schema` (objects walked into, arrays not), with its schema. */
function paths(schema: Schema, prefix: string[] = []): [string[], Schema][] {
  const out: [string[], Schema][] = [];
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    if (prop.recurs !== undefined) continue;
    out.push([[...prefix, key], prop]);
    if (prop.type === 'object') out.push(...paths(prop, [...prefix, key]));
  }
  return out;
}

/** The schema of the object at `path` (the root for `[]`). */
function schemaAt(schema: Schema, path: readonly string[]): Schema {
  return path.reduce((s, key) => s.properties?.[key] ?? {}, schema);
}

/** A copy of `args` with `path` set to `value`, parents made as their minimal objects. */
function withValue(c: Case, path: readonly string[], value: unknown, cwd: string): Json {
  const copy = structuredClone(c.args);
  let at: Json = copy;
  path.slice(0, -1).forEach((key, i) => {
    if (typeof at[key] !== 'object' || at[key] === null)
      at[key] = minimal(schemaAt(c.schema, path.slice(0, i + 1)), cwd);
    at = at[key] as Json;
  });
  at[path.at(-1) as string] = value;
  return copy;
}

function without(args: Json, path: readonly string[]): Json {
  const copy = structuredClone(args);
  const parent = path.slice(0, -1).reduce((o, key) => o[key] as Json, copy);
  delete parent[path.at(-1) as string];
  return copy;
}

/** Calls the tool; fails the test on a JSON-RPC error. Resolves to the diagnostic, if any. */
async function callTool(wire: Wire, name: string, args: Json, what: string) {
  const reply = await wire.request('tools/call', { name, arguments: args });
  assert.equal(reply['error'], undefined, `${what}: ${JSON.stringify(reply['error'])}`);
  const result = reply['result'] as Json;
  const meta = (result['_meta'] ?? {}) as Json;
  return { result, diagnostic: meta['mhl/diagnostic'] as Json | undefined };
}

async function expectRefused(wire: Wire, c: Case, args: Json, field: string, what: string) {
  const label = `${c.label}: ${what}`;
  assert.equal(c.valid(args), false, `the schema accepts what should be refused (${label})`);
  const { result, diagnostic } = await callTool(wire, c.tool.name, args, label);
  assert.equal(result['isError'], true, label);
  assert.equal(diagnostic?.['code'], 'INVALID_ARGUMENT', `${label}: ${JSON.stringify(result)}`);
  assert.equal(diagnostic?.['field'], field, label);
  assert.equal(diagnostic?.['retryable'], false, label);
}

/** The whole check of one case against one server. */
async function checkCase(wire: Wire, c: Case, cwd: string): Promise<void> {
  assert.ok(c.valid(c.args), `${c.label}: the minimal arguments fail the schema`);
  const accepted = await callTool(wire, c.tool.name, c.args, `${c.label} minimal`);
  assert.notEqual(
    accepted.diagnostic?.['code'],
    'INVALID_ARGUMENT',
    `${c.label}: refused minimal arguments ${JSON.stringify(c.args)}: ${JSON.stringify(accepted.result)}`,
  );
  // Forwarded arguments are walked only when the tool names its target.
  const { forwards } = c;
  const walked = paths(c.schema).filter(
    ([path]) => path.length === 1 || path[0] !== 'arguments' || forwards,
  );
  for (const [path] of walked.filter(([p]) => isRequired(c.schema, p, c.args))) {
    await expectRefused(
      wire,
      c,
      without(c.args, path),
      path.join('.'),
      `without ${path.join('.')}`,
    );
  }
  for (const path of [[], ...walked.map(([p]) => p)]) {
    if (path.length > 0 && schemaAt(c.schema, path).type !== 'object') continue;
    if (schemaAt(c.schema, path).additionalProperties !== false) continue;
    const field = [...path, UNDECLARED].join('.');
    await expectRefused(wire, c, withValue(c, [...path, UNDECLARED], 1, cwd), field, `+${field}`);
  }
  for (const [path, schema] of walked) {
    // Another target is another case, with its own arguments.
    const values = path.join('.') === c.selector ? [] : edges(schema, cwd);
    for (const value of values) {
      const args = withValue(c, path, value, cwd);
      const what = `${c.label}: ${path.join('.')} = ${JSON.stringify(value).slice(0, 30)}`;
      assert.ok(c.valid(args), `the schema refuses its own edge value (${what})`);
      const { result, diagnostic } = await callTool(wire, c.tool.name, args, what);
      assert.notEqual(
        diagnostic?.['code'],
        'INVALID_ARGUMENT',
        `${what}: ${JSON.stringify(result)}`,
      );
    }
    for (const value of violations(schema)) {
      const what = `${path.join('.')} = ${JSON.stringify(value).slice(0, 30)}`;
      await expectRefused(wire, c, withValue(c, path, value, cwd), path.join('.'), what);
    }
  }
}

/** True when `path` is required and its parent is present in the minimal arguments. */
function isRequired(schema: Schema, path: readonly string[], args: Json): boolean {
  const parent = path
    .slice(0, -1)
    .reduce<unknown>((o, key) => (o as Json | undefined)?.[key], args);
  if (typeof parent !== 'object' || parent === null) return false;
  return (schemaAt(schema, path.slice(0, -1)).required ?? []).includes(path.at(-1) as string);
}

const SETUPS = [
  { transport: 'stdio', requireCwd: false },
  { transport: 'stdio', requireCwd: true },
  { transport: 'http', requireCwd: false },
  { transport: 'http', requireCwd: true },
] as const;

describe('every tool schema agrees with the server', { timeout: 120_000 }, () => {
  for (const { transport, requireCwd } of SETUPS) {
    const mode = requireCwd ? '--require-cwd' : 'no --require-cwd';
    it(`over ${transport}, ${mode}`, async () => {
      const cwd = realpathSync(tempDir('mhl-schemas-cwd-'));
      const serverCwd = realpathSync(tempDir('mhl-schemas-server-'));
      const flags = requireCwd ? ['--require-cwd'] : [];
      // Over stdio the server's directory comes from --cwd; over HTTP from where it started.
      const wire =
        transport === 'stdio'
          ? stdioWire([...flags, '--cwd', serverCwd], REPO_ROOT)
          : await httpWire(flags);
      const defaultCwd = transport === 'stdio' ? serverCwd : realpathSync(process.cwd());
      let exit: unknown;
      try {
        const listed = await wire.request('tools/list', {});
        const tools = (listed['result'] as { tools: Tool[] }).tools;
        assert.ok(
          tools.some((t) => t.name === 'job.start'),
          'job.start is listed',
        );
        if (transport === 'http') assert.ok(tools.some((t) => t.name === 'mhl_run_start'));
        for (const tool of tools) {
          // Ajv compiles each as a 2020-12 schema (strict: unknown keywords fail).
          assert.doesNotThrow(() => ajv.compile(tool.inputSchema), tool.name);
          const context = tool.inputSchema.properties?.['context'];
          if (context !== undefined) {
            // A workflow tool: a 2020-12 schema of its own, declared types under $defs.
            const declared = tool.inputSchema as Json;
            assert.equal(declared['$schema'], 'https://json-schema.org/draft/2020-12/schema');
            assert.equal(context.properties?.['limit'], undefined, `${tool.name} offers limit`);
            assert.equal(tool.inputSchema.required?.includes('context') ?? false, requireCwd);
            assert.deepEqual(context.required ?? [], requireCwd ? ['cwd'] : []);
          }
          for (const c of casesOf(tool, tools, cwd)) await checkCase(wire, c, cwd);
        }
        // Declared types sit under $defs by name; a recursive one refers to itself there.
        const typed = tools.find((t) => t.name === 'Typed')?.inputSchema as Json;
        const defs = typed['$defs'] as Record<string, { properties: Json }>;
        assert.deepEqual(Object.keys(defs), ['Color', 'Item', 'Shade', 'Tree']);
        assert.deepEqual((typed['properties'] as Json)['tree'], { $ref: '#/$defs/Tree' });
        assert.deepEqual(defs['Tree']?.properties['next'], { $ref: '#/$defs/Tree' });
        // Deep inside the recursion a wrong value is still refused, by its path.
        const typedArgs = minimalTyped(typed, cwd);
        const deep = { name: 'a', kids: [{ name: 'b', next: { name: 7 } }] };
        const refused = await callTool(wire, 'Typed', { ...typedArgs, tree: deep }, 'deep');
        assert.equal(refused.diagnostic?.['field'], 'tree.kids[0].next.name');
        const fine = { name: 'a', kids: [{ name: 'b', next: { name: 'c' } }] };
        const taken = await callTool(wire, 'Typed', { ...typedArgs, tree: fine }, 'tree');
        assert.equal(taken.result['isError'], undefined, JSON.stringify(taken.result));
        const here = async (args: Json) =>
          (await callTool(wire, 'Where', args, 'Where')).result['structuredContent'];
        assert.deepEqual(await here({ context: { cwd } }), { here: cwd });
        if (!requireCwd) assert.deepEqual(await here({}), { here: defaultCwd });
        // context.limit is not offered (nothing caps by it), so it is refused like any other.
        const limited = await callTool(wire, 'Where', { context: { cwd, limit: 10 } }, 'limit');
        assert.equal(limited.diagnostic?.['field'], 'context.limit');
      } finally {
        exit = await wire.close();
      }
      assert.equal(exit, 0, 'the server shut down cleanly');
    });
  }
});

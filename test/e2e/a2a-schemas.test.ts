/**
 * What each Agent Card skill's `metadata.inputSchema` advertises is exactly what SendMessage
 * accepts as `message.metadata.input`, with and without `--require-cwd`: the card's schema is
 * the one `tools/list` shows for that workflow, Ajv (2020-12, strict) compiles it, the minimal
 * input it describes is never refused as -32602, and each input it refuses (a required property
 * dropped, an undeclared one added, a declared one of the wrong type, a bad `context`) the
 * server refuses too, with -32602 naming that field (`input.<field>`).
 */
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { a2a, messageV1 } from '../helpers/a2a.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { modern, resultOf, send, serverStarter } from '../helpers/http-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/schemas');
const start = serverStarter(FOLDER);
const ajv = new Ajv2020({ strict: true, allErrors: true });

type Json = Record<string, unknown>;
interface Schema {
  type?: string;
  enum?: unknown[];
  $ref?: string;
  pattern?: string;
  properties?: Record<string, Schema>;
  required?: string[];
}

/** `schema` with a top-level `$ref` into `root`'s `$defs` followed. */
function deref(schema: Schema, root: Json): Schema {
  if (schema.$ref === undefined) return schema;
  const name = schema.$ref.replace(/^#\/\$defs\//, '');
  return deref((root['$defs'] as Record<string, Schema>)[name] as Schema, root);
}

/** The simplest value `schema` accepts (required properties only). */
function minimal(schema: Schema, root: Json, cwd: string): unknown {
  const s = deref(schema, root);
  if (s.enum !== undefined) return s.enum[0];
  switch (s.type) {
    case 'string':
      return s.pattern === undefined ? 'x' : cwd;
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return Object.fromEntries(
        (s.required ?? []).map((key) => [key, minimal(s.properties?.[key] ?? {}, root, cwd)]),
      );
    default:
      return null;
  }
}

/** A value of the wrong JSON type for `schema`, or undefined when it takes any. */
function wrongType(schema: Schema, root: Json): unknown {
  const s = deref(schema, root);
  if (s.enum !== undefined) return '~not one of them~';
  const wrong: Record<string, unknown> = {
    string: 12345,
    integer: 1.5,
    number: 'NaN',
    boolean: 'no',
    array: { not: 'an array' },
    object: 'not an object',
  };
  return s.type === undefined ? undefined : wrong[s.type];
}

/** The -32602 field of a SendMessage with `input`, or undefined when it was not refused so. */
async function refusedField(port: number, skill: string, input: Json): Promise<unknown> {
  const reply = await a2a(
    port,
    'SendMessage',
    { message: messageV1([], { skill, input }), configuration: { returnImmediately: true } },
    { version: '1.0' },
  );
  const error = reply.json()['error'] as { code: number; data?: Json } | undefined;
  return error?.code === -32602 ? (error.data?.['field'] ?? null) : undefined;
}

/** The cases of one skill: each an input, and the field a refusal names (undefined: accepted). */
function casesOf(schema: Json, cwd: string): [string, Json, string | undefined][] {
  const root = schema as Schema;
  const base = minimal(root, schema, cwd) as Json;
  const cases: [string, Json, string | undefined][] = [['minimal', base, undefined]];
  const context = deref(root.properties?.['context'] ?? {}, schema);
  const withContext = (value: Json) => ({
    ...base,
    context: { ...(minimal(context, schema, cwd) as Json), ...value },
  });
  cases.push(['a cwd and a timeout', withContext({ cwd, timeout_ms: 1000 }), undefined]);
  for (const key of root.required ?? []) {
    const { [key]: _dropped, ...rest } = base;
    cases.push([`without ${key}`, rest, key]);
  }
  cases.push(['an undeclared input', { ...base, mhl_undeclared: 1 }, 'mhl_undeclared']);
  for (const [key, prop] of Object.entries(root.properties ?? {})) {
    if (key === 'context') continue;
    const bad = wrongType(prop, schema);
    if (bad !== undefined) cases.push([`${key} of the wrong type`, { ...base, [key]: bad }, key]);
  }
  cases.push(['a context that is not an object', { ...base, context: 'x' }, 'context']);
  cases.push(['a relative context.cwd', withContext({ cwd: 'relative/dir' }), 'context.cwd']);
  cases.push(['a zero timeout', withContext({ timeout_ms: 0 }), 'context.timeout_ms']);
  cases.push(['an undeclared context key', withContext({ x: 1 }), 'context.x']);
  return cases;
}

describe('every Agent Card skill schema agrees with SendMessage', { timeout: 120_000 }, () => {
  for (const requireCwd of [false, true]) {
    it(requireCwd ? 'with --require-cwd' : 'without --require-cwd', async () => {
      const cwd = realpathSync(tempDir('mhl-a2a-schemas-'));
      const server = start(requireCwd ? ['--require-cwd'] : [], { MHL_LOG_LEVEL: 'warn' });
      const port = await server.ready;
      const card = (
        await send(port, { method: 'GET', path: '/.well-known/agent-card.json' })
      ).json();
      const tools = (resultOf(await modern(port, 'tools/list'), 'tools/list') as { tools: Json[] })
        .tools;
      const skills = card['skills'] as { id: string; metadata: { inputSchema: Json } }[];
      assert.ok(skills.length >= 3, 'the fixture skills are on the card');
      for (const skill of skills) {
        const schema = skill.metadata.inputSchema;
        const listed = tools.find((tool) => tool['name'] === skill.id);
        assert.deepEqual(schema, listed?.['inputSchema'], `${skill.id}: the tools/list schema`);
        const check = ajv.compile(schema);
        const required = (schema['required'] as string[] | undefined) ?? [];
        assert.equal(required.includes('context'), requireCwd, `${skill.id} requires context`);
        const cases = casesOf(schema, cwd);
        if (requireCwd) cases.push(['no context', casesOf(schema, cwd)[0]?.[1] ?? {}, 'context']);
        for (const [what, input, field] of cases) {
          const sent = what === 'no context' ? withoutContext(input) : input;
          const label = `${skill.id}, ${what}: ${JSON.stringify(sent).slice(0, 120)}`;
          assert.equal(check(sent), field === undefined, `the card's schema verdict (${label})`);
          const named = field === undefined ? undefined : `input.${field}`;
          assert.equal(await refusedField(port, skill.id, sent), named, `the server (${label})`);
        }
      }
    });
  }
});

function withoutContext(input: Json): Json {
  const { context: _context, ...rest } = input;
  return rest;
}

describe("each skill's inputModes agree with what a text part does", () => {
  for (const folder of ['examples', 'test/fixtures/schemas']) {
    it(`for ${folder}`, async () => {
      const server = start([], { MHL_LOG_LEVEL: 'warn' }, resolve(REPO_ROOT, folder));
      const port = await server.ready;
      const card = (
        await send(port, { method: 'GET', path: '/.well-known/agent-card.json' })
      ).json();
      const skills = card['skills'] as { id: string; inputModes: string[] }[];
      for (const skill of skills) {
        assert.ok(skill.inputModes.includes('application/json'), skill.id);
        const reply = await a2a(
          port,
          'SendMessage',
          {
            message: messageV1([{ text: '.' }], { skill: skill.id }),
            configuration: { returnImmediately: true },
          },
          { version: '1.0' },
        );
        const error = reply.json()['error'] as { code: number; data?: Json } | undefined;
        const refused = error?.code === -32602 && error.data?.['field'] === 'message.parts';
        assert.equal(
          skill.inputModes.includes('text/plain'),
          !refused,
          `${skill.id}: ${reply.text}`,
        );
      }
      const everyText = skills.every((skill) => skill.inputModes.includes('text/plain'));
      assert.equal((card['defaultInputModes'] as string[]).includes('text/plain'), everyText);
    });
  }
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  buildCatalog,
  type Catalog,
  goDuration,
  type JsonObject,
  loadCatalog,
  resolveSchemaRef,
  toolEntry,
  type Workflow,
  workflowManifest,
} from '../../../src/catalog/index.js';
import { memoryHost } from '../../../src/lang/index.js';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

function load(): Catalog {
  const result = loadCatalog('test/fixtures/catalog/basic');
  assert.ok(result.ok);
  return result.catalog;
}

/** The one workflow declared by `source` (in-memory `/pack/main.mh`). */
function workflowOf(source: string): Workflow {
  const host = memoryHost(new Map([['/pack/main.mh', source]]));
  const result = buildCatalog({ root: '/pack', files: ['/pack/main.mh'], host, source: 'pack' });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  const [workflow] = result.catalog.workflows.values();
  assert.ok(workflow);
  return workflow;
}

const catalog = load();
const get = (name: string): Workflow => {
  const w = catalog.workflows.get(name);
  assert.ok(w, name);
  return w;
};

describe('inputSchema', () => {
  it('projects every type form, declared types under $defs and literal defaults kept', () => {
    assert.deepEqual(get('Types').inputSchema, {
      $schema: DIALECT,
      type: 'object',
      properties: {
        text: { type: 'string' },
        count: { type: 'number' },
        whole: { type: 'integer' },
        flag: { type: 'boolean' },
        anything: {},
        list: { type: 'array' },
        record: { type: 'object' },
        names: { type: 'array', items: { type: 'string' } },
        grid: { type: 'array', items: { type: 'array', items: { type: 'number' } } },
        point: {
          type: 'object',
          properties: { x: { type: 'number' }, y: { type: 'number' } },
          required: ['x', 'y'],
          additionalProperties: true,
        },
        item: { $ref: '#/$defs/Item' },
        color: { $ref: '#/$defs/Color' },
        mode: { type: 'string', default: 'fast' },
        retries: { type: 'number', default: -2 },
        strict: { type: 'boolean', default: false },
        extra: { default: null },
        labels: { type: 'array', items: { type: 'string' }, default: ['a', 'b'] },
        opts: { type: 'object', default: { depth: 1 } },
        greeting: { type: 'string' },
      },
      additionalProperties: false,
      required: [
        'anything',
        'color',
        'count',
        'flag',
        'grid',
        'item',
        'list',
        'names',
        'point',
        'record',
        'text',
        'whole',
      ],
      $defs: {
        Color: { type: 'string', enum: ['Red', 'Green', 'Blue'] },
        Item: {
          type: 'object',
          properties: {
            id: { type: 'number' },
            label: { type: 'string' },
            tags: { type: 'array', items: { $ref: '#/$defs/Tag' } },
          },
          required: ['id', 'tags'],
          additionalProperties: true,
        },
        Tag: { type: 'string' },
      },
    });
  });

  it('keeps the JSON key order of the wire form', () => {
    assert.equal(
      JSON.stringify(get('Build').inputSchema),
      `{"$schema":"${DIALECT}","type":"object","properties":{"target":{"type":"string"},"verbose":{"type":"boolean","default":false}},"additionalProperties":false,"required":["target"]}`,
    );
  });

  it('omits required when every input has a default, and when there are none', () => {
    const defaults = workflowOf('pipeline P {\n  input a: string = "x"\n  step S { log(a) }\n}\n');
    assert.deepEqual(defaults.inputSchema, {
      $schema: DIALECT,
      type: 'object',
      properties: { a: { type: 'string', default: 'x' } },
      additionalProperties: false,
    });
    assert.deepEqual(get('Cycle').inputSchema, {
      $schema: DIALECT,
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
  });

  it('names an alias of an alias and an enum behind an alias, each under $defs', () => {
    const w = workflowOf(
      'enum Level { Low, High }\ntype L = Level\ntype Ids = Id[]\ntype Id = number\npipeline P {\n  input level: L = "Low"\n  input ids: Ids\n  step S { log(level) }\n}\n',
    );
    assert.deepEqual(w.inputSchema['properties'], {
      level: { $ref: '#/$defs/L', default: 'Low' },
      ids: { $ref: '#/$defs/Ids' },
    });
    assert.deepEqual(w.inputSchema['$defs'], {
      Id: { type: 'number' },
      Ids: { type: 'array', items: { $ref: '#/$defs/Id' } },
      L: { $ref: '#/$defs/Level' },
      Level: { type: 'string', enum: ['Low', 'High'] },
    });
    // What a form that cannot follow $ref reads: the enum, its default kept.
    const level = (w.inputSchema['properties'] as JsonObject)['level'];
    assert.deepEqual(resolveSchemaRef(w.inputSchema, level), {
      type: 'string',
      enum: ['Low', 'High'],
      default: 'Low',
    });
    assert.deepEqual(resolveSchemaRef(w.inputSchema, { $ref: '#/$defs/Nope' }), {
      $ref: '#/$defs/Nope',
    });
  });

  it('projects a recursive type as a $ref to itself, never as {}', () => {
    const w = workflowOf(
      'type Tree = { name: string, kids?: Tree[], next?: Tree }\npipeline P {\n  input tree: Tree\n  step S { log(tree.name) }\n}\n',
    );
    assert.deepEqual(w.inputSchema['$defs'], {
      Tree: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          kids: { type: 'array', items: { $ref: '#/$defs/Tree' } },
          next: { $ref: '#/$defs/Tree' },
        },
        required: ['name'],
        additionalProperties: true,
      },
    });
    const deep = { name: 'a', kids: [{ name: 'b', next: { name: 'c', kids: [{ name: 1 }] } }] };
    const refused = w.validate({ tree: deep });
    assert.ok(!refused.ok);
    assert.deepEqual(refused.error.invalid, [
      { field: 'tree.kids[0].next.kids[0].name', problem: 'must be string' },
    ]);
    assert.ok(w.validate({ tree: { name: 'a', kids: [{ name: 'b', next: { name: 'c' } }] } }).ok);
  });

  it('refuses 1.5 for an int and takes 2', () => {
    const w = workflowOf(
      'pipeline P {\n  input n: int\n  input x: number\n  step S { log(n) }\n}\n',
    );
    const refused = w.validate({ n: 1.5, x: 1.5 });
    assert.ok(!refused.ok);
    assert.deepEqual(refused.error.invalid, [{ field: 'n', problem: 'must be integer' }]);
    assert.ok(w.validate({ n: 2, x: 2 }).ok);
  });

  it('compiles every projected schema with Ajv 2020 (strict)', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    for (const w of catalog.workflows.values())
      assert.doesNotThrow(() => ajv.compile(w.inputSchema), w.name);
  });
});

describe('description', () => {
  it('uses the description property', () => {
    assert.equal(get('Build').description, 'Build the project');
  });

  it('defaults to a sentence naming the kind', () => {
    assert.equal(get('Types').description, 'Runs the mhl pipeline "Types".');
    assert.equal(get('Shared').description, 'Runs the mhl workflow "Shared".');
    assert.equal(get('Cycle').description, 'Runs the mhl loop workflow "Cycle".');
    const loopPipeline = workflowOf('loop pipeline L max 2 {\n  step S { log("x") }\n}\n');
    assert.equal(loopPipeline.description, 'Runs the mhl loop pipeline "L".');
  });
});

describe('toolEntry', () => {
  it('publishes name, description, schema and the nested async hint', () => {
    const build = get('Build');
    assert.deepEqual(toolEntry(build), {
      name: 'Build',
      description: 'Build the project',
      inputSchema: build.inputSchema,
      _meta: { mhl: { run: { tool: 'mhl_run_start' } } },
    });
  });

  it('includes annotations only when the workflow has them', () => {
    const annotated = { ...get('Quiet'), annotations: { readOnlyHint: true } };
    assert.deepEqual(toolEntry(annotated).annotations, { readOnlyHint: true });
    assert.equal('annotations' in toolEntry(get('Quiet')), false);
  });
});

describe('workflowManifest', () => {
  it('projects a pipeline with inputs, timeouts, checkpointing and declared names', () => {
    const build = get('Build');
    assert.deepEqual(workflowManifest(build, catalog.root), {
      name: 'Build',
      kind: 'pipeline',
      description: 'Build the project',
      file: 'build.mh',
      source: 'mhl://workflow/Build/source',
      async: { via: 'run/start', tool: 'mhl_run_start' },
      inputSchema: build.inputSchema,
      inputs: [
        { name: 'target', type: 'string', required: true },
        { name: 'verbose', type: 'bool', required: false },
      ],
      steps: ['Compile', 'Package'],
      stepTimeouts: { Compile: '1m30s' },
      checkpoint: { strategy: 'per_step' },
      resumable: true,
      declared: {
        agents: [],
        tools: ['Helper'],
        memory: [],
        prompts: [],
        schemas: [],
        extensions: [],
      },
    });
  });

  it('projects a loop workflow with a parallel group and checkpoint settings', () => {
    const manifest = workflowManifest(get('Cycle'), catalog.root);
    assert.equal(manifest['kind'], 'loop workflow');
    assert.equal(manifest['file'], 'ops/cycle.mh');
    assert.deepEqual(manifest['steps'], ['Plan', 'Checks']);
    assert.deepEqual(manifest['parallelGroups'], [{ name: 'Checks', steps: ['Lint', 'Test'] }]);
    assert.deepEqual(manifest['stepTimeouts'], { Plan: '500ms', Checks: '2m0s', Lint: '1m30s' });
    assert.deepEqual(manifest['checkpoint'], {
      strategy: 'per_step',
      ttl: '1h0m0s',
      storage: 'file',
    });
    assert.deepEqual(manifest['loop'], { stopWhen: true, maxIterations: 3 });
  });

  it('leaves out checkpointing when it is disabled', () => {
    const manifest = workflowManifest(get('Quiet'), catalog.root);
    assert.equal('checkpoint' in manifest, false);
    assert.equal('resumable' in manifest, false);
    assert.equal('loop' in manifest, false);
  });

  it('describes a typed signature', () => {
    const w = workflowOf(
      'pipeline T(req: {id: number}, n: number = 1): {ids: number[]} {\n  step S { log("x") }\n}\n',
    );
    const manifest = workflowManifest(w, '/pack');
    assert.deepEqual(manifest['parameters'], [
      { name: 'req', type: '{id: number}' },
      { name: 'n', type: 'number' },
    ]);
    assert.deepEqual(manifest['inputs'], [
      { name: 'req', type: '{id: number}', required: true },
      { name: 'n', type: 'number', required: false },
    ]);
    assert.equal(manifest['output'], '{ids: number[]}');
    assert.deepEqual(manifest['outputSchema'], {
      $schema: DIALECT,
      type: 'object',
      properties: { ids: { type: 'array', items: { type: 'number' } } },
      required: ['ids'],
      additionalProperties: true,
    });
  });

  it('puts the declared types of an output under $defs', () => {
    const w = workflowOf(
      'type Node = { id: int, next?: Node }\npipeline T(req: {id: number}): Node {\n  step S { log("x") }\n}\n',
    );
    const manifest = workflowManifest(w, '/pack');
    assert.deepEqual(manifest['outputSchema'], {
      $schema: DIALECT,
      $ref: '#/$defs/Node',
      $defs: {
        Node: {
          type: 'object',
          properties: { id: { type: 'integer' }, next: { $ref: '#/$defs/Node' } },
          required: ['id'],
          additionalProperties: true,
        },
      },
    });
  });
});

describe('goDuration', () => {
  it('formats durations as Go does', () => {
    const cases: [number, string][] = [
      [0, '0s'],
      [500, '500ms'],
      [1500, '1.5s'],
      [90_000, '1m30s'],
      [180_000, '3m0s'],
      [3_600_000, '1h0m0s'],
      [3_723_250, '1h2m3.25s'],
    ];
    for (const [ms, text] of cases) assert.equal(goDuration(ms), text, String(ms));
  });
});

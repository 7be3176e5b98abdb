/**
 * The JSON Schema 2020-12 contracts of the four tools (docs/engine.md, "Contracts"): the shared
 * parts (confirmed-state projection, host, artifact, validator report, step payload, validation
 * bundle) and each tool's arguments and result. Closed at every level (`additionalProperties:
 * false`) but for two maps in each confirmed-state argument: `state` (field name → any JSON,
 * checked per call against the workflow's own `confirmed_state_schema`: one fixed contract
 * serves every workflow of every release, so it cannot embed theirs) and `confirmations`
 * (field name → a closed confirmation). Both keep field names to `FIELD_NAME`. A pure table:
 * the same objects are embedded in the tools' schemas and served as immutable resources.
 */

type Schema = Record<string, unknown>;

const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });

/** A closed object: every property listed, `required` as given. */
function object(properties: Record<string, Schema>, required: string[] = []): Schema {
  return { type: 'object', additionalProperties: false, required, properties };
}

function input(properties: Record<string, Schema>, required: string[]): Schema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...object(properties, required),
  };
}

/**
 * Sized to the HTTP body cap (1 MiB, transport/body.ts): a 64 KiB file still fits in base64
 * (87,384 characters), and eight of them at the limit are 768 Ki characters, which leaves a
 * quarter of the body for the checkpoint, the state and the attestation. docs/engine.md, "Limits".
 */
export const MAX_CONTENT_CHARS = 98_304;
export const MAX_ARTIFACTS = 8;

/**
 * The contracts, built on first use rather than at import: a server on another profile (the
 * default `--profile pipelines`) never serves them, so it never pays for building the tables
 * (about 0.25 ms of start-up, measured with initprof).
 */
function buildContractSchemas() {
  /** What a host sends: bounded, so a call cannot carry megabytes of capability names. */
  const inputStrings: Schema = {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 200 },
    maxItems: 200,
  };
  /** What the server answers from its release, as the release says it. */
  const strings: Schema = { type: 'array', items: { type: 'string' } };
  const DIGEST = str({ pattern: '^[0-9a-f]{64}$' });
  const FIELD_NAME = { pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 100 };

  const IDENTITY = object({ id: str(), version: str(), digest: DIGEST }, [
    'id',
    'version',
    'digest',
  ]);
  const WORKFLOW_REF = object({ id: str(), version: str() }, ['id', 'version']);

  const CONFIRMED_STATE = object(
    {
      state: {
        type: 'object',
        propertyNames: FIELD_NAME,
        description: "top-level fields; their values are checked by the workflow's schema",
      },
      confirmations: {
        type: 'object',
        propertyNames: FIELD_NAME,
        additionalProperties: object(
          {
            confirmed_at: str({ description: 'RFC 3339 date-time', maxLength: 64 }),
            confirmed_by: str({ minLength: 1, maxLength: 200 }),
            source: { enum: ['user', 'host'] },
          },
          ['confirmed_at', 'confirmed_by', 'source'],
        ),
      },
    },
    ['state', 'confirmations'],
  );

  const REPOSITORY_POLICY = object(
    {
      writable_paths: inputStrings,
      forbidden_paths: inputStrings,
      allow_symlinks: { type: 'boolean' },
    },
    ['writable_paths', 'forbidden_paths', 'allow_symlinks'],
  );

  const HOST = object(
    {
      harness: str({ minLength: 1, maxLength: 100 }),
      adapter: object({ id: str({ minLength: 1 }), version: str({ minLength: 1 }) }, [
        'id',
        'version',
      ]),
      capabilities: inputStrings,
      validator_capabilities: inputStrings,
      repository_policy: REPOSITORY_POLICY,
    },
    ['harness', 'adapter', 'capabilities', 'validator_capabilities', 'repository_policy'],
  );

  const ARTIFACT = object(
    {
      id: str({ minLength: 1, maxLength: 200 }),
      path: str({ minLength: 1, maxLength: 1024 }),
      media_type: { enum: ['application/json', 'text/markdown'] },
      content: str({
        maxLength: MAX_CONTENT_CHARS,
        description: 'the exact bytes, as utf8 text or base64',
      }),
      encoding: { enum: ['utf8', 'base64'] },
    },
    ['id', 'path', 'media_type', 'content', 'encoding'],
  );

  const ATTESTATION = object(
    {
      project_root: str({ minLength: 1, maxLength: 4096, description: 'absolute, on this host' }),
      repository_policy: REPOSITORY_POLICY,
      validator_capabilities: inputStrings,
    },
    ['project_root', 'repository_policy'],
  );

  const FINDING = object(
    {
      message: str({ maxLength: 4000 }),
      severity: { enum: ['error', 'warning', 'info'] },
      path: str({ maxLength: 1024 }),
      artifact: str({ maxLength: 200 }),
    },
    ['message'],
  );

  const REPORT = object(
    {
      validator_id: str(),
      version: str(),
      outcome: { enum: ['pass', 'fail'] },
      findings: { type: 'array', items: FINDING, maxItems: 200 },
      instruction_digest: DIGEST,
      input_digest: DIGEST,
      validated_by: object({ harness: str(), adapter_version: str() }, [
        'harness',
        'adapter_version',
      ]),
    },
    [
      'validator_id',
      'version',
      'outcome',
      'findings',
      'instruction_digest',
      'input_digest',
      'validated_by',
    ],
  );

  const RECEIPT = object(
    {
      id: str(),
      path: str(),
      sha256: DIGEST,
      bytes: { type: 'integer', minimum: 0 },
      media_type: { enum: ['application/json', 'text/markdown'] },
    },
    ['id', 'path', 'sha256', 'bytes', 'media_type'],
  );

  const BUNDLE_VALIDATOR = object(
    {
      id: str(),
      version: str(),
      instruction_digest: DIGEST,
      input_digest: DIGEST,
      report_required: { type: 'boolean' },
      reused: { type: 'boolean' },
    },
    ['id', 'version', 'instruction_digest', 'input_digest', 'report_required', 'reused'],
  );

  const VALIDATION_BUNDLE = object(
    {
      typ: { const: 'validation_bundle' },
      kid: str(),
      release: IDENTITY,
      workflow: WORKFLOW_REF,
      manifest_digest: DIGEST,
      step: str(),
      checkpoint_digest: DIGEST,
      artifacts: { type: 'array', items: RECEIPT },
      validators: { type: 'array', items: BUNDLE_VALIDATOR },
      issued_at: str(),
      // Unbounded here on purpose: an empty or over-long token is `invalid_validation_bundle`
      // (spec §4), which tokens.ts answers; the transport bounds the bytes.
      validation_token: str(),
    },
    [
      'typ',
      'kid',
      'release',
      'workflow',
      'manifest_digest',
      'step',
      'checkpoint_digest',
      'artifacts',
      'validators',
      'issued_at',
      'validation_token',
    ],
  );

  const TEXT_ASSET = object({ path: str(), sha256: DIGEST, text: str() }, [
    'path',
    'sha256',
    'text',
  ]);
  const HOST_ASSET = object(
    { name: str(), path: str(), sha256: DIGEST, text: str(), install_path: str() },
    ['name', 'path', 'sha256', 'text', 'install_path'],
  );
  const HOST_ASSETS = object(
    {
      prompts: { type: 'array', items: HOST_ASSET },
      skills: { type: 'array', items: HOST_ASSET },
      subagents: { type: 'array', items: HOST_ASSET },
    },
    ['prompts', 'skills', 'subagents'],
  );

  const VALIDATOR_PAYLOAD = object(
    {
      id: str(),
      version: str(),
      instruction: TEXT_ASSET,
      instruction_digest: DIGEST,
      input_digest: DIGEST,
      report_required: { type: 'boolean' },
      requires_capabilities: strings,
      inputs: strings,
    },
    [
      'id',
      'version',
      'instruction',
      'instruction_digest',
      'report_required',
      'requires_capabilities',
      'inputs',
    ],
  );

  const PREDICATE: Schema = {
    oneOf: [
      object({ field: str(), equals: {} }, ['field', 'equals']),
      object({ field: str(), in: { type: 'array', minItems: 1 } }, ['field', 'in']),
      object({ field: str(), exists: { type: 'boolean' } }, ['field', 'exists']),
      object({ all: { type: 'array', items: { $ref: '#/$defs/predicate' } } }, ['all']),
      object({ any: { type: 'array', items: { $ref: '#/$defs/predicate' } } }, ['any']),
      object({ not: { $ref: '#/$defs/predicate' } }, ['not']),
    ],
  };

  const QUESTION = object(
    { field: str(), prompt: str(), options: { type: 'array', items: str() } },
    ['field', 'prompt'],
  );

  const STEP_DEFINITION = object(
    {
      id: str(),
      instruction: str(),
      host_assets: object({ prompts: strings, skills: strings, subagents: strings }, [
        'prompts',
        'skills',
        'subagents',
      ]),
      inputs: strings,
      outputs: {
        type: 'array',
        items: object(
          {
            id: str(),
            path: str(),
            media_type: { enum: ['application/json', 'text/markdown'] },
            schema: str(),
            max_bytes: { type: 'integer' },
            write_policy: { enum: ['create', 'replace'] },
          },
          ['id', 'path', 'media_type', 'max_bytes', 'write_policy'],
        ),
      },
      max_total_bytes: { type: 'integer' },
      max_artifacts: { type: 'integer' },
      validators: {
        type: 'array',
        items: object(
          {
            id: str(),
            version: str(),
            instruction: str(),
            report_required: { type: 'boolean' },
            requires_capabilities: strings,
            inputs: strings,
          },
          ['id', 'version', 'instruction', 'report_required', 'requires_capabilities', 'inputs'],
        ),
      },
      next: str(),
      branches: {
        type: 'array',
        items: object({ when: { $ref: '#/$defs/predicate' }, to: str() }, ['when', 'to']),
      },
      questions: { type: 'array', items: QUESTION },
    },
    ['id', 'instruction', 'host_assets', 'inputs', 'outputs', 'validators', 'questions'],
  );

  const STEP_PAYLOAD = object(
    {
      id: str(),
      definition: STEP_DEFINITION,
      instruction: TEXT_ASSET,
      host_assets: HOST_ASSETS,
      host_adapter: object(
        {
          id: str(),
          version: str(),
          harness: str(),
          capabilities: strings,
          delivery: object({ prompts: str(), skills: str(), subagents: str() }, [
            'prompts',
            'skills',
            'subagents',
          ]),
        },
        ['id', 'version', 'harness', 'capabilities', 'delivery'],
      ),
      validators: { type: 'array', items: VALIDATOR_PAYLOAD },
      resources: strings,
    },
    ['id', 'definition', 'instruction', 'host_assets', 'host_adapter', 'validators', 'resources'],
  );

  const FAILURE = object({ code: str(), message: str(), path: str() }, ['code', 'message']);

  const MIGRATION_PREVIEW = object(
    {
      source: object({ release: IDENTITY, workflow: WORKFLOW_REF }, ['release', 'workflow']),
      target: object({ release: IDENTITY, workflow: WORKFLOW_REF }, ['release', 'workflow']),
      restart_step: str(),
      invalidated_artifacts: strings,
      invalidated_validators: strings,
      compatible: { type: 'boolean' },
      blockers: { type: 'array', items: FAILURE },
    },
    [
      'source',
      'target',
      'restart_step',
      'invalidated_artifacts',
      'invalidated_validators',
      'compatible',
      'blockers',
    ],
  );

  /** A result of one of the tools, `status` restricted to `statuses`. */
  function result(statuses: string[]): Schema {
    return object(
      {
        status: { enum: statuses },
        checkpoint: str(),
        step: STEP_PAYLOAD,
        question: QUESTION,
        failures: { type: 'array', items: FAILURE },
        findings: {
          type: 'array',
          items: object(
            {
              validator_id: str(),
              version: str(),
              message: str(),
              severity: { enum: ['error', 'warning', 'info'] },
              path: str(),
              artifact: str(),
            },
            ['validator_id', 'version', 'message'],
          ),
        },
        validation_bundle: { anyOf: [VALIDATION_BUNDLE, { type: 'null' }] },
        validation_token: str(),
        validators: { type: 'array', items: VALIDATOR_PAYLOAD },
        migration_preview: MIGRATION_PREVIEW,
      },
      ['status'],
    );
  }

  /** The `{code, message}` of a domain error. */
  const DOMAIN_ERROR = object({ code: str(), message: str() }, ['code', 'message']);

  /** The output schema of a tool: its result, or a domain error (answered with `isError`). */
  function output(statuses: string[]): Schema {
    return {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { predicate: PREDICATE },
      oneOf: [result(statuses), DOMAIN_ERROR],
    };
  }

  /**
   * No length bounds in the schema: an empty or over-long (65,536+) token is
   * `invalid_checkpoint` (spec §4), a domain answer from tokens.ts, not INVALID_ARGUMENT; the
   * transport bounds the bytes.
   */
  const CHECKPOINT = str({ description: 'the checkpoint token' });

  const TOOL_SCHEMAS = {
    'rimthan.start_workflow': {
      input: input(
        {
          workflow: str({ minLength: 1, maxLength: 200, description: 'workflow id or alias' }),
          workflow_version: str({ minLength: 1, maxLength: 100 }),
          confirmed_state: CONFIRMED_STATE,
          host: HOST,
        },
        ['workflow', 'confirmed_state', 'host'],
      ),
      output: output(['active', 'blocked']),
    },
    'rimthan.continue_workflow': {
      input: input(
        {
          checkpoint: CHECKPOINT,
          prior_confirmed_state: CONFIRMED_STATE,
          confirmed_state: CONFIRMED_STATE,
          migration: object(
            { target_release: str({ minLength: 1, maxLength: 300 }), confirm: { type: 'boolean' } },
            ['target_release', 'confirm'],
          ),
        },
        ['checkpoint', 'prior_confirmed_state', 'confirmed_state'],
      ),
      output: output(['active', 'blocked', 'input_required', 'completed']),
    },
    'rimthan.prepare_step_validation': {
      input: input(
        {
          checkpoint: CHECKPOINT,
          confirmed_state: CONFIRMED_STATE,
          artifacts: { type: 'array', items: ARTIFACT, maxItems: MAX_ARTIFACTS },
          attestation: ATTESTATION,
        },
        ['checkpoint', 'confirmed_state', 'artifacts'],
      ),
      output: output(['deterministic_validation_failed', 'ready_for_semantic_validation']),
    },
    'rimthan.submit_step_validation': {
      input: input(
        {
          checkpoint: CHECKPOINT,
          confirmed_state: CONFIRMED_STATE,
          validation_bundle: VALIDATION_BUNDLE,
          reports: { type: 'array', items: REPORT, maxItems: 64 },
        },
        ['checkpoint', 'confirmed_state', 'validation_bundle', 'reports'],
      ),
      output: output(['validation_failed', 'input_required', 'advanced', 'completed']),
    },
  } as const satisfies Record<string, { input: Schema; output: Schema }>;

  /** The shared contracts served beside the tools' own, by resource name. */
  const SHARED_CONTRACTS: Readonly<Record<string, Schema>> = {
    'confirmed-state-projection': CONFIRMED_STATE,
    host: HOST,
    artifact: ARTIFACT,
    attestation: ATTESTATION,
    'validator-report': REPORT,
    'validation-bundle': VALIDATION_BUNDLE,
    'step-payload': { $defs: { predicate: PREDICATE }, ...STEP_PAYLOAD },
  };

  return { tools: TOOL_SCHEMAS, shared: SHARED_CONTRACTS };
}

let built: ReturnType<typeof buildContractSchemas> | undefined;

/** `tools` (input and output by tool name, in listing order) and `shared`, built once. */
export function contractSchemas(): ReturnType<typeof buildContractSchemas> {
  built ??= buildContractSchemas();
  return built;
}

export type ToolName = keyof ReturnType<typeof contractSchemas>['tools'];

/**
 * The four tool contracts, compiled once: every schema checked as a valid JSON Schema 2020-12
 * (`validateSchema`, the same check as Draft202012Validator.check_schema) and compiled for
 * argument and result validation, plus the `tools/list` entries with the seed's mutability
 * annotations. Start-up fails on a contract that is not a valid schema.
 */
import type { ValidateFunction } from 'ajv';
import { ajv2020Class } from '../../lang/index.js';
import { contractSchemas, type ToolName } from './contract-schemas.js';

export interface Contract {
  readonly name: ToolName;
  readonly entry: Readonly<Record<string, unknown>> & { readonly name: string };
  readonly validateInput: ValidateFunction;
  readonly validateOutput: ValidateFunction;
}

const DESCRIPTIONS: Readonly<Record<ToolName, string>> = {
  'rimthan.start_workflow':
    'Select a workflow by id or alias, check the initial confirmed state and host, and return the setup-workspace step with a signed checkpoint.',
  'rimthan.continue_workflow':
    'Verify a checkpoint and the confirmed state, then return one question or one active step, complete an ungated step, or migrate to the migration target release.',
  'rimthan.prepare_step_validation':
    'Deterministic checks of the current step’s artifacts (bytes, paths, sizes, schemas, attestation, policy, capabilities); returns a signed validation bundle and the validators to run.',
  'rimthan.submit_step_validation':
    'Verify the validator reports against the signed validation bundle; return the failures on the same step, or the next step, question or completion.',
};

/** Start issues a fresh checkpoint each time, so it alone is not idempotent; none writes. */
const ANNOTATIONS: Readonly<Record<ToolName, Record<string, boolean>>> = {
  'rimthan.start_workflow': {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  'rimthan.continue_workflow': { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  'rimthan.prepare_step_validation': {
    readOnlyHint: true,
    destructiveHint: false,
    openWorldHint: false,
  },
  'rimthan.submit_step_validation': {
    readOnlyHint: true,
    destructiveHint: false,
    openWorldHint: false,
  },
};

/**
 * The four tool names, in the order they are listed: `DESCRIPTIONS` names each exactly once, in
 * the contracts' order, so the names need not build the contracts.
 */
export const TOOL_NAMES = Object.keys(DESCRIPTIONS) as ToolName[];

/** Every contract checked and compiled; throws naming the contract that is not a valid schema. */
export function compileContracts(): Contract[] {
  const { tools, shared } = contractSchemas();
  const ajv = new (ajv2020Class())({ allErrors: true, strict: false });
  for (const [name, schema] of Object.entries(shared)) {
    if (!ajv.validateSchema(schema))
      throw new Error(`contract ${name} is not a valid JSON Schema 2020-12`);
  }
  return TOOL_NAMES.map((name) => {
    const { input, output } = tools[name];
    for (const [part, schema] of [
      ['input', input],
      ['output', output],
    ] as const) {
      if (!ajv.validateSchema(schema))
        throw new Error(`contract ${name} ${part} is not a valid JSON Schema 2020-12`);
    }
    return {
      name,
      entry: {
        name,
        title: name,
        description: DESCRIPTIONS[name],
        inputSchema: input,
        outputSchema: output,
        annotations: ANNOTATIONS[name],
        // What tools/list adds to every tool (surfaces/tools.ts), so the resource is the entry.
        execution: { taskSupport: 'forbidden' },
      },
      validateInput: ajv.compile(input),
      validateOutput: ajv.compile(output),
    };
  });
}

/** The immutable contract resources: each tool's contract and each shared part. */
export function contractDocuments(contracts: readonly Contract[]): Map<string, string> {
  const docs = new Map<string, string>();
  for (const c of contracts) {
    docs.set(`mhl://engine/contracts/${c.name}.json`, JSON.stringify(c.entry, null, 2));
  }
  for (const [name, schema] of Object.entries(contractSchemas().shared)) {
    docs.set(`mhl://engine/contracts/${name}.json`, JSON.stringify(schema, null, 2));
  }
  return docs;
}

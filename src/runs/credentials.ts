/**
 * Credential slots (seed 002, "credentials by slot id"): a workflow that calls `vault("name")`
 * has a slot `name`, and a call may pass a vault record id for it under `credentials.<name>`
 * instead of relying on the secret named `name`. Only ids travel: a value is never an argument.
 * `tools/list` shows each slot with guidance (how to find an id with `secrets.list`), never an
 * id. Shared by synchronous calls, jobs and async runs, like `context`.
 */
import type { CredentialSlot, Workflow } from '../catalog/index.js';
import { ArgumentError, shortKey } from './argument-error.js';

/** The vault's record id shape (src/secrets/records.ts `RECORD_ID`). */
export const CREDENTIAL_ID_PATTERN = '^sec_[0-9a-f]{32}$';
const CREDENTIAL_ID = new RegExp(CREDENTIAL_ID_PATTERN);

/** Record ids by slot name. */
export type CallCredentials = Readonly<Record<string, string>>;

/**
 * True when `credentials` is this workflow's reserved argument rather than an input. Its slots
 * first: most workflows have none, and their declaration (a cached catalog loads it on first
 * use) is then never read.
 */
export function takesCredentials(workflow: Workflow): boolean {
  return (
    workflow.credentialSlots.length > 0 &&
    !workflow.decl.inputs.some((i) => i.name === 'credentials')
  );
}

/** Parses `credentials` (absent means none); throws `ArgumentError` naming the field. */
export function parseCredentials(
  value: unknown,
  slots: readonly CredentialSlot[],
): CallCredentials {
  const names = slots.map((s) => s.name);
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ArgumentError(
      'credentials',
      'credentials must be an object of vault record ids by slot',
    );
  }
  const out: Record<string, string> = {};
  for (const [slot, id] of Object.entries(value)) {
    if (!names.includes(slot)) {
      const key = shortKey(slot);
      throw new ArgumentError(
        `credentials.${key}`,
        `credentials takes only ${names.join(', ')}; got ${JSON.stringify(key)}`,
      );
    }
    if (typeof id !== 'string' || !CREDENTIAL_ID.test(id)) {
      throw new ArgumentError(
        `credentials.${slot}`,
        `credentials.${slot} must be a vault record id (sec_ and 32 hex digits; find one with secrets.list), never a secret value`,
      );
    }
    out[slot] = id;
  }
  return out;
}

/** The `credentials` property of a tool's inputSchema: one optional id per slot. */
export function credentialsSchema(slots: readonly CredentialSlot[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const { name, kinds } of slots) {
    properties[name] = {
      type: 'string',
      pattern: CREDENTIAL_ID_PATTERN,
      description: `vault record id for vault("${name}") (${kindsText(kinds)}); without it the secret named "${name}" is used. Find ids with secrets.list${kinds.length === 1 ? ` {kind: "${kinds[0]}"}` : ''}.`,
    };
  }
  return {
    type: 'object',
    description:
      'Vault record ids by credential slot (never secret values); see secrets.list. The server resolves each id itself.',
    properties,
    additionalProperties: false,
  };
}

/** The sentence a tool's description gains for its slots. */
export function slotGuidance(slots: readonly CredentialSlot[]): string {
  const listed = slots.map((s) => `credentials.${s.name} (${kindsText(s.kinds)})`).join(', ');
  return `Credential slots: ${listed}. Pass a vault record id from secrets.list (filter by kind), or leave a slot out to use the secret of the same name.`;
}

function kindsText(kinds: readonly string[]): string {
  return kinds.length === 0 ? 'any kind' : `kind ${kinds.join(' or ')}`;
}

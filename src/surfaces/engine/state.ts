/**
 * Confirmed state: its digest (SHA-256 of the RFC 8785 JSON of `state`), its check against the
 * workflow's schema, and the confirmation rules: at start every present field is confirmed; on
 * continue every changed top-level field carries a confirmation not older than the checkpoint.
 */
import type { ValidateFunction } from 'ajv';
import { canonicalDigest, canonicalJson } from './canonical-json.js';
import { type Failure, failure } from './errors.js';

export interface Confirmation {
  readonly confirmed_at: string;
  readonly confirmed_by: string;
  readonly source: 'user' | 'host';
}

export interface ConfirmedState {
  readonly state: Readonly<Record<string, unknown>>;
  readonly confirmations: Readonly<Record<string, Confirmation>>;
}

/**
 * How far ahead of the server's clock a confirmation may be dated: host and server clocks
 * drift a little; a confirmation further in the future would otherwise stay "newer than the
 * checkpoint" for every later checkpoint too, confirming changes nobody confirmed.
 */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The digest a checkpoint binds. */
export function stateDigest(cs: ConfirmedState): string {
  return canonicalDigest(cs.state);
}

/** `json_schema_failed` failures of `state` against the workflow's schema (none when valid). */
export function schemaFailures(validate: ValidateFunction, cs: ConfirmedState): Failure[] {
  if (validate(cs.state)) return [];
  return (validate.errors ?? [])
    .slice(0, 20)
    .map((e) =>
      failure(
        'json_schema_failed',
        `confirmed_state.state${e.instancePath} ${e.message ?? 'is invalid'}`,
        `confirmed_state.state${e.instancePath}`,
      ),
    );
}

/**
 * The fields among `fields` without a valid confirmation at or after `since` (ms) and not
 * after `now` + `CLOCK_SKEW_MS`, as one `confirmation_required` failure listing them; none
 * when all are confirmed.
 */
export function unconfirmed(
  cs: ConfirmedState,
  fields: readonly string[],
  now: number,
  since = 0,
): Failure[] {
  const missing = fields.filter((field) => {
    const c = cs.confirmations[field];
    if (c === undefined || !RFC3339.test(c.confirmed_at)) return true;
    const at = Date.parse(c.confirmed_at);
    return !Number.isFinite(at) || at < since || at > now + CLOCK_SKEW_MS;
  });
  if (missing.length === 0) return [];
  return [
    failure(
      'confirmation_required',
      `confirm ${missing.join(', ')}${since > 0 ? ' (a confirmation newer than the checkpoint)' : ''}`,
      `confirmed_state.confirmations.${missing[0]}`,
    ),
  ];
}

/** Top-level fields added, removed or changed between `prior` and `next`, sorted. */
export function changedFields(prior: ConfirmedState, next: ConfirmedState): string[] {
  const keys = new Set([...Object.keys(prior.state), ...Object.keys(next.state)]);
  return [...keys]
    .filter((k) => {
      const a = prior.state[k];
      const b = next.state[k];
      if (a === undefined || b === undefined) return a !== b;
      return canonicalJson(a) !== canonicalJson(b);
    })
    .sort();
}

/**
 * The engine's domain errors: a stable snake_case `code` (docs/engine.md lists them) and a
 * message that names the offending field but never a server path, a key or a token's contents.
 * The surface turns one into a tool result with `isError: true` and `{code, message}`; nothing
 * else in the engine throws for a caller's mistake.
 */

/** The codes a call can fail with as a whole (as opposed to accumulated `failures`). */
export const ENGINE_ERROR_CODES = [
  'invalid_checkpoint',
  'invalid_validation_bundle',
  'release_unavailable',
  'workflow_not_found',
  'workflow_version_not_found',
  'state_digest_mismatch',
  'validator_report_missing',
  'validator_report_extra',
  'validator_report_duplicate',
  'validator_report_stale',
  'validator_report_host_mismatch',
  'branch_ambiguous',
  'migration_unavailable',
  'migration_target_mismatch',
  'migration_not_newer',
  'migration_same_release',
  'migration_workflow_missing',
] as const;

export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number];

/** A caller's call that cannot proceed at all. */
export class EngineError extends Error {
  readonly code: EngineErrorCode;

  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }
}

/** One accumulated, closed failure object of a blocked or failed result. */
export interface Failure {
  readonly code: string;
  readonly message: string;
  readonly path?: string;
}

/** A failure, with `path` only when there is one (the result schemas are closed). */
export function failure(code: string, message: string, path?: string): Failure {
  return path === undefined ? { code, message } : { code, message, path };
}

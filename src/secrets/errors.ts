/**
 * The one error type of the secrets module: a stable `code` callers match on (the CLI's exit
 * status and `--json`, the setup page, `vault()` in a run), and a message for a person. A message
 * may name the vault's files (the CLI prints it to their owner); the setup page and MCP results
 * show only the code and a fixed text, never a path.
 */

export const SECRETS_ERROR_CODES = {
  /** The vault file exists but its key file does not: nothing is created, nothing is lost. */
  KEY_MISSING: 'VAULT_KEY_MISSING',
  /** The key file is not one key in its canonical form. */
  KEY_INVALID: 'VAULT_KEY_INVALID',
  /** The key file can be read by others than its owner. */
  KEY_PERMISSIONS: 'VAULT_KEY_PERMISSIONS',
  /** The vault was sealed with another key. */
  WRONG_KEY: 'VAULT_WRONG_KEY',
  /** The vault file is not a vault, or its bytes were changed. */
  CORRUPT: 'VAULT_CORRUPT',
  /** Another command holds the vault's lock. */
  BUSY: 'VAULT_BUSY',
  /** A read or write of the vault's folder failed. */
  IO: 'VAULT_IO',
  NOT_FOUND: 'SECRET_NOT_FOUND',
  EXISTS: 'SECRET_EXISTS',
  NAME_INVALID: 'SECRET_NAME_INVALID',
  KIND_INVALID: 'SECRET_KIND_INVALID',
  VALUE_INVALID: 'SECRET_VALUE_INVALID',
  LABEL_INVALID: 'SECRET_LABEL_INVALID',
  /** The vault holds as many records as it may. */
  FULL: 'VAULT_FULL',
} as const;

export type SecretsErrorCode = (typeof SECRETS_ERROR_CODES)[keyof typeof SECRETS_ERROR_CODES];

export class SecretsError extends Error {
  readonly code: SecretsErrorCode;

  constructor(code: SecretsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SecretsError';
    this.code = code;
  }
}

/** The node error code of a system error (`ENOENT`, …), if it is one. */
export function systemCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

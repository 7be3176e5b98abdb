/**
 * The one error a pack operation throws: a stable `code` naming the check that failed, and a
 * message that says what to do. No message ever contains key bytes or decrypted content, so a
 * `PackError` can be printed as is.
 */

/** The stable codes of `PackError`, one per check. */
export const PACK_ERROR_CODES = {
  /** `MHL_SERVE_WORKFLOWS_KEY` is not set (or empty). */
  KEY_MISSING: 'PACK_KEY_MISSING',
  /** The key is not exactly 64 hex digits. */
  KEY_MALFORMED: 'PACK_KEY_MALFORMED',
  /** The pack file (or folder) could not be read, or the pack could not be written. */
  UNREADABLE: 'PACK_UNREADABLE',
  /** The pack is larger than `MAX_PACK_BYTES`. */
  TOO_LARGE: 'PACK_TOO_LARGE',
  /** The first four bytes are not `DMPK`. */
  BAD_MAGIC: 'PACK_BAD_MAGIC',
  /** The version byte is not 2. */
  UNSUPPORTED_VERSION: 'PACK_UNSUPPORTED_VERSION',
  /** The three reserved header bytes are not zero. */
  BAD_HEADER: 'PACK_BAD_HEADER',
  /** The pack ends before the header, an entry, or the declared number of entries does. */
  TRUNCATED: 'PACK_TRUNCATED',
  /** Bytes follow the last entry the header's count declares. */
  COUNT_MISMATCH: 'PACK_COUNT_MISMATCH',
  /** An entry's length cannot hold a tag and a path length. */
  BAD_ENTRY: 'PACK_BAD_ENTRY',
  /** AES-GCM authentication failed: a wrong key, or a modified nonce, ciphertext or tag. */
  AUTH_FAILED: 'PACK_AUTH_FAILED',
  /** A decrypted path is not a plain relative path (empty, absolute, `..`, NUL, not UTF-8). */
  BAD_PATH: 'PACK_BAD_PATH',
  /** Two entries carry the same path. */
  DUPLICATE_PATH: 'PACK_DUPLICATE_PATH',
} as const;
/** One of `PACK_ERROR_CODES`. */
export type PackErrorCode = (typeof PACK_ERROR_CODES)[keyof typeof PACK_ERROR_CODES];

/** A failed pack check; `entry` is the index of the entry involved, when there is one. */
export class PackError extends Error {
  readonly code: PackErrorCode;
  readonly entry: number | undefined;
  constructor(
    code: PackErrorCode,
    message: string,
    options: { entry?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'PackError';
    this.code = code;
    this.entry = options.entry;
  }
}

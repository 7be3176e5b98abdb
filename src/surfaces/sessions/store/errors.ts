/**
 * `SessionStoreError`: why a session could not be used, with the stable codes of the public
 * server (spec session-profile §3.0) and a fixed message that says how to recover. Messages
 * never carry absolute server paths.
 */

export const SESSION_CODES = {
  INVALID_INDEX: 'INVALID_INDEX',
  NOT_FOUND: 'NOT_FOUND',
  COLLISION: 'COLLISION',
  SEAL_MISMATCH: 'SEAL_MISMATCH',
  WORKSPACE_INVALID: 'WORKSPACE_INVALID',
  KEY_INVALID: 'KEY_INVALID',
} as const;

export type SessionCode = (typeof SESSION_CODES)[keyof typeof SESSION_CODES];

const MESSAGES: Record<SessionCode, string> = {
  INVALID_INDEX: 'session_index must be six characters of A-Z and 2-7.',
  NOT_FOUND:
    'No session with this session_index was found; call start_session to begin or resume one.',
  COLLISION:
    'More than one session matches this session_index or planning slug; remove the duplicate folder.',
  SEAL_MISMATCH:
    'The session file does not match its seal (.session-token): it was edited or damaged outside the server. Restore the folder from a copy; the server will not act on it.',
  WORKSPACE_INVALID: 'The planning root cannot be used; check the workspace folder.',
  KEY_INVALID:
    'The session key file is unusable; it must be exactly 32 bytes, readable only by its owner.',
};

export class SessionStoreError extends Error {
  readonly code: SessionCode;
  constructor(code: SessionCode, detail?: string, options?: { cause?: unknown }) {
    super(detail === undefined ? MESSAGES[code] : `${MESSAGES[code]} (${detail})`, options);
    this.name = 'SessionStoreError';
    this.code = code;
  }
}

/**
 * The diagnostics of `mhl service` (seed 002, "Managed service"): one stable `MCP_SERVICE_*`
 * code per way a lifecycle command can refuse or fail. Callers match on `code`, never on the
 * message. Knows nothing of systemd or the file system.
 */

/** Every code a `ServiceError` carries. */
export const SERVICE_CODES = {
  NOT_INSTALLED: 'MCP_SERVICE_NOT_INSTALLED',
  BUSY: 'MCP_SERVICE_BUSY',
  TASK_CONFLICT: 'MCP_SERVICE_TASK_CONFLICT',
  INSTALLATION_CONFLICT: 'MCP_SERVICE_INSTALLATION_CONFLICT',
  CONFIGURATION_DRIFT: 'MCP_SERVICE_CONFIGURATION_DRIFT',
  STATE_INVALID: 'MCP_SERVICE_STATE_INVALID',
  START_TIMEOUT: 'MCP_SERVICE_START_TIMEOUT',
  WORKER_MISSING: 'MCP_SERVICE_WORKER_MISSING',
  IDENTITY_MISMATCH: 'MCP_SERVICE_IDENTITY_MISMATCH',
  SCHEDULER_FAILED: 'MCP_SERVICE_SCHEDULER_FAILED',
  RESTART_REQUIRED: 'MCP_SERVICE_RESTART_REQUIRED',
  STOP_UNSAFE: 'MCP_SERVICE_STOP_UNSAFE',
  STOP_TIMEOUT: 'MCP_SERVICE_STOP_TIMEOUT',
  TASK_CHANGED: 'MCP_SERVICE_TASK_CHANGED',
  RESTART_FAILED: 'MCP_SERVICE_RESTART_FAILED',
  UNINSTALL_INCOMPLETE: 'MCP_SERVICE_UNINSTALL_INCOMPLETE',
  UNSUPPORTED_PLATFORM: 'MCP_SERVICE_UNSUPPORTED_PLATFORM',
} as const;

export type ServiceCode = (typeof SERVICE_CODES)[keyof typeof SERVICE_CODES];

/** A refusal or failure of a lifecycle command: exit status 1, the code on stderr. */
export class ServiceError extends Error {
  readonly code: ServiceCode;

  constructor(code: ServiceCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceError';
    this.code = code;
  }
}

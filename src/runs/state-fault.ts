/**
 * What a run's caller is told when the state store fails under it (a full disk, a device
 * error): a stable code and a message that says what happened and what to do, without the
 * key, file or errno detail the server log keeps. Only `StoreError`s are state faults; a run's
 * own failures (a step, bad inputs) are not.
 */
import { STORE_ERROR_CODES, StoreError } from '../store/index.js';
import { RunError } from './types.js';

/** The codes a state fault is reported under (run view `errorCode`, error `data.code`). */
export const STATE_FAULT_CODES = {
  /** The state storage is full: freeing space makes the run resumable, a start retryable. */
  STORAGE_FULL: 'STATE_STORAGE_FULL',
  /** Any other failure of the state storage (an I/O error, a device gone read-only). */
  STORE_FAILED: 'STATE_STORE_FAILED',
} as const;

export type StateFaultCode = (typeof STATE_FAULT_CODES)[keyof typeof STATE_FAULT_CODES];

/** The code of a state fault, or undefined when `error` is not one. */
export function stateFaultOf(error: unknown): StateFaultCode | undefined {
  if (!(error instanceof StoreError)) return undefined;
  return error.code === STORE_ERROR_CODES.FULL
    ? STATE_FAULT_CODES.STORAGE_FULL
    : STATE_FAULT_CODES.STORE_FAILED;
}

/** Why a run that was going stopped: its work up to its last checkpoint is kept. */
export function stoppedMessage(code: StateFaultCode): string {
  return code === STATE_FAULT_CODES.STORAGE_FULL
    ? "the run's state could not be saved because the server's state storage is full; it stopped at its last checkpoint: resume it (run/resume) once space is freed"
    : "the run's state could not be saved (a storage error on the server); it stopped at its last checkpoint: resume it (run/resume) once the storage works again";
}

/** Why a start, resume or cancel was refused before it changed anything. */
export function refusedMessage(code: StateFaultCode): string {
  return code === STATE_FAULT_CODES.STORAGE_FULL
    ? "the run could not be saved because the server's state storage is full; retry once space is freed"
    : 'the run could not be saved (a storage error on the server); retry later';
}

/**
 * A refused request's error: a state fault becomes the `RunError` the surfaces answer
 * (retryable, `data.code` the fault's code, the store's error as `cause` for the log); any
 * other error is returned as is.
 */
export function refusalOf(error: unknown): unknown {
  const code = stateFaultOf(error);
  if (code === undefined) return error;
  return new RunError(code, refusedMessage(code), { code }, { cause: error });
}

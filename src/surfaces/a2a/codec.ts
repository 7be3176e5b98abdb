/**
 * The wire spelling of one A2A version, chosen per request by the `A2A-Version` header: method
 * names, task states (`TASK_STATE_WORKING` in 1.0, `working` in 0.3), parts (`{text}` in 1.0,
 * `{kind: "text", text}` in 0.3), the send and stream result shapes and whether a send waits.
 * A codec only spells: what happens is `service.ts`'s, the same for every version.
 *
 * @see https://a2a-protocol.org/latest/specification/ ("Versioning", "JSON-RPC binding")
 */
import { A2A_ERROR_CODES, A2aError } from './errors.js';
import type { TaskSnapshot, TaskState } from './task.js';

/** What a request asks, whatever its version calls it. */
export type Operation =
  | 'send'
  | 'stream'
  | 'get'
  | 'cancel'
  | 'list'
  | 'subscribe'
  | 'push'
  | 'extendedCard';

export type A2aVersion = '1.0' | '0.3';

export interface Codec {
  /** The version answered in the response's `A2A-Version` header. */
  readonly version: A2aVersion;
  /** What a method name means in this version; undefined for one it does not have. */
  operation(method: string): Operation | undefined;
  /** Whether a send holds its answer until the task settles (bounded). */
  waits(params: Record<string, unknown>): boolean;
  /** A state filter's value (ListTasks `status`) as a task state; undefined when not one. */
  state(value: unknown): TaskState | undefined;
  /** A task; artifacts only when asked (a list leaves them out unless told otherwise). */
  task(task: TaskSnapshot, artifacts: boolean): Record<string, unknown>;
  /** The result of a send. */
  sent(task: TaskSnapshot): Record<string, unknown>;
  /** Stream results: the task first, then its status changes and its result artifact. */
  streamTask(task: TaskSnapshot): Record<string, unknown>;
  statusUpdate(task: TaskSnapshot, final: boolean): Record<string, unknown>;
  artifactUpdate(task: TaskSnapshot): Record<string, unknown>;
}

/** Versions this server speaks, newest first (a VersionNotSupported error lists them). */
export const SUPPORTED_VERSIONS = ['1.0', '0.3'] as const;

/**
 * The codec for an `A2A-Version` header value: absent or empty means 0.3 (A2A 1.0 says so);
 * `1.0` (any patch) is 1.0; `0.3` and `0.2` are the 0.3 wire (0.2 clients send the same
 * methods and shapes). Any other value, or several, is VersionNotSupportedError (-32009).
 */
export function codecFor(
  header: string | undefined,
  codecs: { readonly v1: Codec; readonly v03: Codec },
): Codec {
  const value = header?.trim() ?? '';
  if (value === '') return codecs.v03;
  const match = /^(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?$/.exec(value);
  const version = match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
  if (version === '1.0') return codecs.v1;
  if (version === '0.3' || version === '0.2') return codecs.v03;
  throw new A2aError(
    A2A_ERROR_CODES.VERSION_NOT_SUPPORTED,
    `A2A-Version ${JSON.stringify(value.slice(0, 20))} is not supported; send one of ${SUPPORTED_VERSIONS.join(', ')}`,
    { supported: [...SUPPORTED_VERSIONS], requested: value.slice(0, 20) },
  );
}

/** The JSON text of a result, pretty, as its text part carries it. */
export function resultText(result: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(result, null, 2);
}

/** A status message's id: stable for one status, so polling twice reads the same message. */
export function statusMessageId(task: TaskSnapshot): string {
  return `${task.id}-${task.state}-${task.timestamp}`;
}

/** A codec's `operation`: the method's entry in its version's table, own members only. */
export function operationIn(
  table: Readonly<Record<string, Operation>>,
): (method: string) => Operation | undefined {
  return (method) => (Object.hasOwn(table, method) ? table[method] : undefined);
}

/**
 * The task members every version shares, in wire order: the id doubles as the context id (one
 * task per context), the status and result artifact in the version's own spelling, the
 * artifact only when asked and there is a result, the skill in metadata.
 */
export function taskMembers(
  snapshot: TaskSnapshot,
  artifacts: boolean,
  spell: {
    readonly status: (task: TaskSnapshot) => Record<string, unknown>;
    readonly artifact: (result: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  },
): Record<string, unknown> {
  return {
    id: snapshot.id,
    contextId: snapshot.id,
    status: spell.status(snapshot),
    ...(artifacts && snapshot.result !== undefined
      ? { artifacts: [spell.artifact(snapshot.result)] }
      : {}),
    metadata: { skill: snapshot.skill },
  };
}

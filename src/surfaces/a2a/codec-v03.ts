/**
 * A2A 0.3 (and 0.2) on the wire: `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
 * `tasks/resubscribe`, plus `tasks/list` (1.0's ListTasks under its 0.3-style name); lowercase
 * states, `kind` on every object and part, `role: "agent"`; a send answers the task itself and
 * waits only with `configuration.blocking: true`, as the Go server's 0.2 surface did.
 *
 * @see https://a2a-protocol.org/v0.3.0/specification/
 */
import { isRecord } from '../../protocol/index.js';
import {
  type Codec,
  type Operation,
  operationIn,
  resultText,
  statusMessageId,
  taskMembers,
} from './codec.js';
import type { TaskSnapshot, TaskState } from './task.js';

const OPERATIONS: Readonly<Record<string, Operation>> = {
  'message/send': 'send',
  'message/stream': 'stream',
  'tasks/get': 'get',
  'tasks/cancel': 'cancel',
  'tasks/list': 'list',
  'tasks/resubscribe': 'subscribe',
  'tasks/pushNotificationConfig/set': 'push',
  'tasks/pushNotificationConfig/get': 'push',
  'tasks/pushNotificationConfig/list': 'push',
  'tasks/pushNotificationConfig/delete': 'push',
  'agent/getAuthenticatedExtendedCard': 'extendedCard',
};

const STATES: ReadonlySet<string> = new Set([
  'submitted',
  'working',
  'completed',
  'failed',
  'canceled',
  'input-required',
]);

function status(task: TaskSnapshot): Record<string, unknown> {
  return {
    state: task.state,
    timestamp: task.timestamp,
    ...(task.text !== undefined
      ? {
          message: {
            kind: 'message',
            messageId: statusMessageId(task),
            role: 'agent',
            parts: [{ kind: 'text', text: task.text }],
            taskId: task.id,
            contextId: task.id,
          },
        }
      : {}),
  };
}

/** The result artifact: text first, since 0.2-era clients read only `parts[0].text`. */
function artifact(result: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    artifactId: 'result',
    name: 'result',
    parts: [
      { kind: 'text', text: resultText(result) },
      { kind: 'data', data: result },
    ],
  };
}

function task(snapshot: TaskSnapshot, artifacts: boolean): Record<string, unknown> {
  return { kind: 'task', ...taskMembers(snapshot, artifacts, { status, artifact }) };
}

/** The 0.3 codec, for 0.2 clients too. */
export const CODEC_V03: Codec = {
  version: '0.3',
  operation: operationIn(OPERATIONS),
  waits: (params) => {
    const configuration = params['configuration'];
    return isRecord(configuration) && configuration['blocking'] === true;
  },
  state: (value) =>
    typeof value === 'string' && STATES.has(value) ? (value as TaskState) : undefined,
  task,
  sent: (snapshot) => task(snapshot, true),
  streamTask: (snapshot) => task(snapshot, true),
  statusUpdate: (snapshot, final) => ({
    kind: 'status-update',
    taskId: snapshot.id,
    contextId: snapshot.id,
    status: status(snapshot),
    final,
  }),
  artifactUpdate: (snapshot) => ({
    kind: 'artifact-update',
    taskId: snapshot.id,
    contextId: snapshot.id,
    artifact: artifact(snapshot.result ?? {}),
    lastChunk: true,
  }),
};

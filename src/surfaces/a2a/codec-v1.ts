/**
 * A2A 1.0 on the wire (ProtoJSON, camelCase): `SendMessage`, `SendStreamingMessage`, `GetTask`,
 * `CancelTask`, `ListTasks`, `SubscribeToTask`; states `TASK_STATE_*`, roles `ROLE_*`; parts by
 * content member (`{text}`, `{data}`) with no `kind`; a send answers `{task}` and each stream
 * event one `StreamResponse` member (`task`, `statusUpdate`, `artifactUpdate`). A send waits
 * unless `configuration.returnImmediately`.
 *
 * @see https://a2a-protocol.org/latest/specification/
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
  SendMessage: 'send',
  SendStreamingMessage: 'stream',
  GetTask: 'get',
  CancelTask: 'cancel',
  ListTasks: 'list',
  SubscribeToTask: 'subscribe',
  CreateTaskPushNotificationConfig: 'push',
  GetTaskPushNotificationConfig: 'push',
  ListTaskPushNotificationConfigs: 'push',
  DeleteTaskPushNotificationConfig: 'push',
  GetExtendedAgentCard: 'extendedCard',
};

const WIRE_STATE: Readonly<Record<TaskState, string>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
};

const STATE_OF_WIRE = new Map<string, TaskState>(
  Object.entries(WIRE_STATE).map(([state, wire]) => [wire, state as TaskState]),
);

function status(task: TaskSnapshot): Record<string, unknown> {
  return {
    state: WIRE_STATE[task.state],
    timestamp: task.timestamp,
    ...(task.text !== undefined
      ? {
          message: {
            messageId: statusMessageId(task),
            role: 'ROLE_AGENT',
            parts: [{ text: task.text }],
            taskId: task.id,
            contextId: task.id,
          },
        }
      : {}),
  };
}

function artifact(result: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    artifactId: 'result',
    name: 'result',
    parts: [
      { data: result, mediaType: 'application/json' },
      { text: resultText(result), mediaType: 'application/json' },
    ],
  };
}

function task(snapshot: TaskSnapshot, artifacts: boolean): Record<string, unknown> {
  return taskMembers(snapshot, artifacts, { status, artifact });
}

/** The 1.0 codec. */
export const CODEC_V1: Codec = {
  version: '1.0',
  operation: operationIn(OPERATIONS),
  waits: (params) => {
    const configuration = params['configuration'];
    return !(isRecord(configuration) && configuration['returnImmediately'] === true);
  },
  state: (value) => (typeof value === 'string' ? STATE_OF_WIRE.get(value) : undefined),
  task,
  sent: (snapshot) => ({ task: task(snapshot, true) }),
  streamTask: (snapshot) => ({ task: task(snapshot, true) }),
  statusUpdate: (snapshot) => ({
    statusUpdate: { taskId: snapshot.id, contextId: snapshot.id, status: status(snapshot) },
  }),
  artifactUpdate: (snapshot) => ({
    artifactUpdate: {
      taskId: snapshot.id,
      contextId: snapshot.id,
      artifact: artifact(snapshot.result ?? {}),
      lastChunk: true,
    },
  }),
};

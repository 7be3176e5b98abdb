/**
 * The methods of an `extension a2a` value (language §5.6): `send(message, context?)`, which
 * polls the task until it ends (or stops for input) and returns it normalized with its text
 * concatenated; `agent_card()`; `get_task(id)`; `cancel(id)`. A task that fails, is rejected or
 * is canceled under `send` raises `EXTENSION` with the agent's own status message.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SendMessageResult } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  type CallArgs,
  fromJson,
  isJsonValue,
  isObject,
  type MhlObject,
  toPlain,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import { formatDuration } from '../natives/args.js';
import { deadline } from '../services/deadline.js';
import { withA2aClient } from './a2a-client.js';
import type { A2aConfig } from './a2a-config.js';
import { type Normalized, normalizeResult } from './a2a-result.js';
import { extensionError } from './extension-settings.js';
import { a2aTypes } from './sdk-modules.js';

/** The names `extension a2a` answers to. */
export const A2A_METHODS = ['send', 'agent_card', 'get_task', 'cancel'] as const;

type Impl = (config: A2aConfig, args: CallArgs, signal: AbortSignal) => Promise<Value>;

/** Runs `Name.<method>(args)`; undefined for a name that is not a method. */
export function a2aMethod(method: string): Impl | undefined {
  switch (method) {
    case 'send':
      return send;
    case 'agent_card':
      return (config, args, signal) => {
        const what = `${config.what}.agent_card`;
        if (args.ordered.length > 0) throw extensionError(what, 'takes no arguments');
        return withA2aClient(config, what, signal, async (client) =>
          fromJson(a2aTypes().AgentCard.toJSON(await client.getAgentCard({ signal }))),
        );
      };
    case 'get_task':
      return (config, args, signal) => {
        const what = `${config.what}.get_task`;
        const id = taskId(what, args);
        return withA2aClient(
          config,
          what,
          signal,
          async (client) => taskValue(await client.getTask({ tenant: '', id }, { signal })).value,
        );
      };
    case 'cancel':
      return (config, args, signal) => {
        const what = `${config.what}.cancel`;
        const id = taskId(what, args);
        return withA2aClient(
          config,
          what,
          signal,
          async (client) =>
            taskValue(await client.cancelTask({ tenant: '', id, metadata: undefined }, { signal }))
              .value,
        );
      };
    default:
      return undefined;
  }
}

/** States a task does not leave by itself: polling stops at them. */
const SETTLED = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
  'input-required',
  'auth-required',
]);
/** Settled states that mean `send` did not get what it asked for. */
const FAILED = new Set(['failed', 'canceled', 'rejected']);

const send: Impl = (config, args, signal) => {
  const what = `${config.what}.send`;
  const request = sendRequest(what, args);
  return withA2aClient(config, what, signal, async (client) => {
    let result = resultValue(await client.sendMessage(request, { signal }));
    try {
      result = await pollToEnd(client, result, config, what, signal);
    } catch (e) {
      // A step that timed out or was cancelled does not leave its task running remotely.
      if (signal.aborted) await cancelQuietly(config, result.id);
      throw e;
    }
    if (result.kind === 'task' && FAILED.has(result.state ?? ''))
      throw extensionError(
        what,
        `task ${result.id} ${result.state}${result.statusText ? `: ${result.statusText}` : ''}`,
      );
    return result.value;
  });
};

/** Reads a task every poll_interval until it settles; raises `EXTENSION` past poll_timeout. */
async function pollToEnd(
  client: Client,
  first: Normalized,
  config: A2aConfig,
  what: string,
  signal: AbortSignal,
): Promise<Normalized> {
  let result = first;
  const until = Date.now() + config.pollTimeoutMs;
  while (result.kind === 'task' && !SETTLED.has(result.state ?? '')) {
    if (Date.now() >= until)
      throw extensionError(
        what,
        `task ${result.id} is still ${result.state} after ${formatDuration(config.pollTimeoutMs)} (poll_timeout)`,
      );
    await sleep(config.pollIntervalMs, undefined, { signal });
    result = taskValue(await client.getTask({ tenant: '', id: result.id }, { signal }));
  }
  return result;
}

/** How long a best-effort cancel of an abandoned task may take. */
const CANCEL_GRACE_MS = 2000;

/** Asks the agent to cancel task `id`, within a short grace; any failure is ignored. */
async function cancelQuietly(config: A2aConfig, id: string): Promise<void> {
  const grace = deadline(new AbortController().signal, CANCEL_GRACE_MS, 'cancel');
  try {
    await withA2aClient(config, `${config.what}.cancel`, grace.signal, (client) =>
      client.cancelTask({ tenant: '', id, metadata: undefined }, { signal: grace.signal }),
    );
  } catch {
    // Best effort: the step has already failed for its own reason, which is what it reports.
  } finally {
    grace.dispose();
  }
}

function resultValue(r: SendMessageResult): Normalized {
  const types = a2aTypes();
  return 'status' in r || 'artifacts' in r
    ? normalizeResult('task', types.Task.toJSON(r as never))
    : normalizeResult('message', types.Message.toJSON(r as never));
}

function taskValue(task: unknown): Normalized {
  return normalizeResult('task', a2aTypes().Task.toJSON(task as never));
}

/**
 * The request for `send(message, context?)`. `message`: a string (one text part), an object with
 * `parts` (A2A 1.0 parts, `{text}` / `{data}`, and optional `metadata`), or any other object (one
 * data part). `context`: a context id, or `{context_id?, task_id?, skill?, metadata?}`.
 */
function sendRequest(what: string, args: CallArgs) {
  for (const name of args.named.keys())
    if (name !== 'message' && name !== 'context')
      throw extensionError(what, `has no parameter '${name}' (it takes message, context)`);
  const message = args.named.get('message') ?? args.positional[0];
  const context = args.named.get('context') ?? args.positional[1] ?? null;
  if (message === undefined || message === null)
    throw extensionError(what, 'needs a message (a string or an object)');
  const json = (v: Value, name: string) => {
    if (!isJsonValue(v)) throw extensionError(what, `${name} must be JSON data, got ${typeOf(v)}`);
    return toPlain(v);
  };
  let parts: unknown;
  let metadata: Record<string, unknown> = {};
  if (typeof message === 'string') parts = [{ text: message }];
  else if (isObject(message) && Array.isArray(message['parts'])) {
    parts = json(message['parts'], 'message.parts');
    if (isObject(message['metadata'] ?? null))
      metadata = json(message['metadata'] as MhlObject, 'message.metadata') as Record<
        string,
        unknown
      >;
  } else if (isObject(message)) parts = [{ data: json(message, 'message') }];
  else throw extensionError(what, `message must be a string or an object, got ${typeOf(message)}`);
  const ids: Record<string, string> = {};
  if (typeof context === 'string') ids['contextId'] = context;
  else if (isObject(context)) {
    const text = (k: string) =>
      typeof context[k] === 'string' ? (context[k] as string) : undefined;
    const contextId = text('context_id');
    const task = text('task_id');
    if (contextId) ids['contextId'] = contextId;
    if (task) ids['taskId'] = task;
    if (isObject(context['metadata'] ?? null))
      metadata = {
        ...metadata,
        ...(json(context['metadata'] as MhlObject, 'context.metadata') as object),
      };
    if (text('skill')) metadata['skill'] = text('skill');
  } else if (context !== null)
    throw extensionError(what, `context must be a context id or an object, got ${typeOf(context)}`);
  try {
    return a2aTypes().SendMessageRequest.fromJSON({
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts, metadata, ...ids },
      // Polled, not held open: poll_interval, poll_timeout and the step's deadline apply between polls.
      configuration: { returnImmediately: true },
    } as never);
  } catch (e) {
    throw extensionError(
      what,
      `message is not a valid A2A message: ${e instanceof Error ? e.message : String(e)}`,
      e,
    );
  }
}

function taskId(what: string, args: CallArgs): string {
  const id = args.named.get('id') ?? args.positional[0];
  if (typeof id !== 'string' || id === '')
    throw extensionError(what, `needs a task id, got ${typeOf(id ?? null)}`);
  return id;
}

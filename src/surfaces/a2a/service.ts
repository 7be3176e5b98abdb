/**
 * What A2A requests do, whatever their version: a send starts a run of the skill's workflow
 * (or resumes the paused run its `taskId` names) through the one run registry `run/*` uses, so
 * tasks share its admission slots (`--max-active`), quotas, ownership and store, and a task is
 * the run of the same id; get, cancel and list read and act on the caller's runs only; a
 * blocking send waits for the task to settle (terminal, or input-required) for at most the wait
 * bound, and a stream follows it to there. Codecs spell the answers; routes move the bytes.
 */
import type { Catalog } from '../../catalog/index.js';
import { isRecord } from '../../protocol/index.js';
import type { Caller, RunRegistry, RunView } from '../../runs/index.js';
import { A2A_ERROR_CODES, A2aError, a2aErrorOf, invalidParams, taskNotFound } from './errors.js';
import { inputsOf, skillOf } from './inputs.js';
import { readMessage } from './message.js';
import { isSettled, isTerminal, type TaskSnapshot, type TaskState, taskOf } from './task.js';
import type { RunWatch } from './watch.js';

/** How long a blocking send waits for its task to settle before answering it still working. */
export const DEFAULT_WAIT_MS = 30_000;
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;
const RUN_ID = /^[0-9a-f]{32}$/;

export interface A2aServiceOptions {
  readonly catalog: Catalog;
  readonly registry: RunRegistry;
  readonly watch: RunWatch;
  readonly waitMs?: number;
}

/** One page of the caller's tasks. */
export interface TaskPage {
  readonly tasks: readonly TaskSnapshot[];
  readonly nextPageToken: string;
  readonly pageSize: number;
  readonly totalSize: number;
}

/** A ListTasks query, read by the route with the request's codec. */
export interface TaskQuery {
  readonly state?: TaskState;
  readonly contextId?: string;
  readonly pageSize?: number;
  readonly pageToken?: string;
}

export class A2aService {
  readonly #options: A2aServiceOptions;
  readonly #waitMs: number;

  constructor(options: A2aServiceOptions) {
    this.#options = options;
    this.#waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  }

  /**
   * Starts (or resumes) the task a send's params describe and answers it; with `wait`, once it
   * settled or the wait bound passed (or `signal` aborted: the client left; the run goes on).
   */
  async send(
    params: Record<string, unknown>,
    caller: Caller,
    wait: boolean,
    signal: AbortSignal,
  ): Promise<TaskSnapshot> {
    const view = await this.#begin(params, caller);
    if (!wait) return taskOf(view);
    return this.#settle(view.runId, caller, signal);
  }

  /** Starts or resumes a task, and yields it then each change of its state until it settles. */
  async *stream(
    params: Record<string, unknown>,
    caller: Caller,
    signal: AbortSignal,
  ): AsyncGenerator<TaskSnapshot> {
    const view = await this.#begin(params, caller);
    yield* this.#follow(view.runId, caller, signal);
  }

  /** Yields an unsettled task, then each change of its state until it settles. */
  async *subscribe(
    params: Record<string, unknown>,
    caller: Caller,
    signal: AbortSignal,
  ): AsyncGenerator<TaskSnapshot> {
    const task = await this.get(params, caller);
    if (isTerminal(task.state)) {
      throw new A2aError(
        A2A_ERROR_CODES.UNSUPPORTED_OPERATION,
        `task ${task.id} is ${task.state}: there is nothing to subscribe to; read it with GetTask`,
      );
    }
    yield* this.#follow(task.id, caller, signal);
  }

  async get(params: Record<string, unknown>, caller: Caller): Promise<TaskSnapshot> {
    return taskOf(await this.#status(idOf(params), caller));
  }

  /** Cancels a submitted, working or input-required task; a terminal one is TaskNotCancelable. */
  async cancel(params: Record<string, unknown>, caller: Caller): Promise<TaskSnapshot> {
    const id = idOf(params);
    const before = taskOf(await this.#status(id, caller));
    if (isTerminal(before.state)) {
      throw new A2aError(
        A2A_ERROR_CODES.TASK_NOT_CANCELABLE,
        `task ${id} is ${before.state} and cannot be canceled`,
        { state: before.state },
      );
    }
    let after: TaskSnapshot;
    try {
      after = taskOf(await this.#options.registry.cancel(id, caller));
    } catch (error) {
      throw a2aErrorOf(error);
    }
    // It finished between the read and the cancel: too late, as if it had been terminal.
    if (after.state !== 'canceled') {
      throw new A2aError(
        A2A_ERROR_CODES.TASK_NOT_CANCELABLE,
        `task ${id} is ${after.state} and cannot be canceled`,
        { state: after.state },
      );
    }
    return after;
  }

  /** The caller's tasks, by id, a page at a time (the token is the last id of the page before). */
  list(query: TaskQuery, caller: Caller): TaskPage {
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
      throw invalidParams('pageSize', `pageSize must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
    const after = query.pageToken ? afterOf(query.pageToken) : undefined;
    const matching = this.#options.registry
      .list(caller)
      .map(taskOf)
      .filter(
        (task) =>
          (query.state === undefined || task.state === query.state) &&
          (query.contextId === undefined || task.id === query.contextId),
      );
    const start = after === undefined ? 0 : matching.findIndex((task) => task.id > after);
    const from = start === -1 ? matching.length : start;
    const tasks = matching.slice(from, from + pageSize);
    const more = from + pageSize < matching.length;
    const last = tasks.at(-1);
    return {
      tasks,
      nextPageToken: more && last !== undefined ? Buffer.from(last.id).toString('base64url') : '',
      pageSize,
      totalSize: matching.length,
    };
  }

  /** A new run of the message's skill, or the paused run its `taskId` names, resumed. */
  async #begin(params: Record<string, unknown>, caller: Caller): Promise<RunView> {
    const message = readMessage(params);
    const { registry, catalog } = this.#options;
    try {
      if (message.taskId === undefined) {
        const workflow = skillOf(catalog, message);
        return await registry.start(workflow.name, inputsOf(workflow, message), caller);
      }
      const view = await this.#status(message.taskId, caller);
      const task = taskOf(view);
      if (task.state !== 'input-required') {
        throw new A2aError(
          A2A_ERROR_CODES.UNSUPPORTED_OPERATION,
          `task ${task.id} is ${task.state}: only an input-required task takes a follow-up message` +
            (isTerminal(task.state) ? '; send without taskId to start a new task' : ''),
          { state: task.state },
        );
      }
      if (message.skill !== undefined && message.skill !== view.tool)
        throw invalidParams('message.metadata.skill', `task ${task.id} runs ${view.tool}`);
      const workflow = catalog.workflows.get(view.tool);
      if (workflow === undefined) throw taskNotFound();
      return await registry.resume(view.runId, inputsOf(workflow, message), caller);
    } catch (error) {
      throw a2aErrorOf(error);
    }
  }

  async #status(id: string, caller: Caller): Promise<RunView> {
    // Not a run id at all: answered as any unknown one, without asking the store.
    if (!RUN_ID.test(id)) throw taskNotFound();
    try {
      return await this.#options.registry.status(id, caller);
    } catch (error) {
      throw a2aErrorOf(error);
    }
  }

  /** The task once it settled, or as it is when the wait bound passed or `signal` aborted. */
  async #settle(id: string, caller: Caller, signal: AbortSignal): Promise<TaskSnapshot> {
    const bound = AbortSignal.any([signal, AbortSignal.timeout(this.#waitMs)]);
    for (;;) {
      const changed = this.#options.watch.next(id, bound);
      const task = taskOf(await this.#status(id, caller));
      if (isSettled(task.state) || bound.aborted) return task;
      await changed;
    }
  }

  async *#follow(id: string, caller: Caller, signal: AbortSignal): AsyncGenerator<TaskSnapshot> {
    let last: TaskState | undefined;
    for (;;) {
      const changed = this.#options.watch.next(id, signal);
      const task = taskOf(await this.#status(id, caller));
      if (task.state !== last) {
        last = task.state;
        yield task;
      }
      if (isSettled(task.state) || signal.aborted) return;
      await changed;
    }
  }
}

function idOf(params: Record<string, unknown>): string {
  const id = params['id'];
  if (typeof id !== 'string') throw invalidParams('id', 'id must be the task id (a string)');
  return id;
}

function afterOf(token: string): string {
  const id = Buffer.from(token, 'base64url').toString('utf8');
  if (!RUN_ID.test(id))
    throw invalidParams('pageToken', 'pageToken must be a nextPageToken this server gave');
  return id;
}

/** Reads a ListTasks query's common members (the state is the codec's to read). */
export function readQuery(
  params: Record<string, unknown>,
  state: (value: unknown) => TaskState | undefined,
): TaskQuery {
  const query: { -readonly [K in keyof TaskQuery]: TaskQuery[K] } = {};
  const status = params['status'];
  if (status !== undefined && status !== '' && status !== 'TASK_STATE_UNSPECIFIED') {
    const read = state(status);
    if (read === undefined) throw invalidParams('status', 'status is not a task state');
    query.state = read;
  }
  const { contextId, pageSize, pageToken } = params;
  if (contextId !== undefined && contextId !== '') {
    if (typeof contextId !== 'string')
      throw invalidParams('contextId', 'contextId must be a string');
    query.contextId = contextId;
  }
  if (pageSize !== undefined) {
    if (typeof pageSize !== 'number') throw invalidParams('pageSize', 'pageSize must be a number');
    query.pageSize = pageSize;
  }
  if (pageToken !== undefined && pageToken !== '') {
    if (typeof pageToken !== 'string')
      throw invalidParams('pageToken', 'pageToken must be a string');
    query.pageToken = pageToken;
  }
  return query;
}

/** Whether a list shows each task's artifacts (`includeArtifacts`, default false). */
export function includesArtifacts(params: Record<string, unknown>): boolean {
  return isRecord(params) && params['includeArtifacts'] === true;
}

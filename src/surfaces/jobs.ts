/**
 * The `job.*` tools (seed 002): generic asynchronous calls over any published workflow tool,
 * for clients whose own call timeout is shorter than the work. `job.start` validates and
 * admits the target exactly as a direct call would, then answers at once; `job.status`,
 * `job.result` (never waits, repeatable) and `job.cancel` read and steer the job table
 * (`src/runs/jobs.ts`). Jobs belong to their caller (`ownerOf`): anyone else gets exactly the
 * unknown-job answer. The whole `job.` namespace is reserved for these four tools. Bad
 * arguments, the target's included, throw `ArgumentError` (an `INVALID_ARGUMENT` result).
 */
import { type CONTROL_RISK, controlToolRisk } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import type { RequestContext } from '../protocol/index.js';
import {
  ArgumentError,
  type JobOutcome,
  type JobRegistry,
  type JobView,
  ownerOf,
  shortKey,
} from '../runs/index.js';
import { type ControlSchema, checkControlArguments } from './arguments.js';
import { backgroundContext } from './pause.js';
import { forwardedArgumentsSchema } from './pipelines.js';
import {
  type PreparedCall,
  refusedResult,
  type ToolDefinition,
  type ToolResult,
  type ToolTable,
  toolError,
  withExecution,
} from './tools.js';

/** Every name in this namespace belongs to the job tools. */
const JOB_NAMESPACE = 'job.';

/** True for a name only the job tools may use. */
export function isReservedJobName(name: string): boolean {
  return name.startsWith(JOB_NAMESPACE);
}

/**
 * The start-up refusal for tools already in `names` that sit in the reserved namespace, or
 * undefined. (MHL identifiers cannot contain a dot today; this keeps it so for any source.)
 */
export function reservedNameProblem(names: readonly string[]): string | undefined {
  const taken = names.filter(isReservedJobName);
  if (taken.length === 0) return undefined;
  const list = taken.map((n) => JSON.stringify(n)).join(', ');
  return `${list} use the reserved ${JOB_NAMESPACE}* tool namespace; rename them`;
}

export interface JobSurfaceOptions {
  /** The table the targets are looked up in (filled with the workflow tools first). */
  readonly tools: ToolTable;
  readonly jobs: JobRegistry;
}

/** The longest `job_id` looked up; ids this server makes are 36 characters. */
const MAX_JOB_ID_LENGTH = 128;

/** The same answer for a job that never existed, expired, or belongs to someone else. */
const NOT_FOUND_MESSAGE =
  'no such job: it never existed, expired (jobs are kept one hour after they end) or ' +
  'was started by another caller';

const JOB_ID_SCHEMA: ControlSchema = {
  type: 'object',
  properties: {
    job_id: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_JOB_ID_LENGTH,
      description: 'The job_id job.start answered',
    },
  },
  required: ['job_id'],
  additionalProperties: false,
};

/** `job.start`, `job.status`, `job.result`, `job.cancel`, in that order. */
export function jobTools(options: JobSurfaceOptions): ToolDefinition[] {
  return [startTool(options), statusTool(options), resultTool(options), cancelTool(options)];
}

/** Logs a job's start, its terminal state and its handler's exit, as JSON lines. */
export function logJobEvents(logger: Logger): (event: string, view: JobView) => void {
  return (event, view) => {
    const { job_id, tool, status, draining } = view;
    logger.info({ job_id, tool, status, draining }, `job ${event}`);
  };
}

function startTool({ tools, jobs }: JobSurfaceOptions): ToolDefinition {
  const targets = tools.names().filter((name) => tools.get(name)?.execution === true);
  const forwarded = forwardedArgumentsSchema(
    "The target tool's own arguments, as its inputSchema in tools/list says",
    targets[0] === undefined ? undefined : tools.get(targets[0]),
  );
  const inputSchema: ControlSchema = {
    type: 'object',
    properties: {
      tool: {
        type: 'string',
        description: 'The exact name of a workflow tool from tools/list',
        ...(targets.length > 0 ? { enum: targets } : {}),
      },
      arguments: forwarded.schema,
    },
    required: forwarded.required ? ['tool', 'arguments'] : ['tool'],
    additionalProperties: false,
  };
  return {
    name: 'job.start',
    entry: {
      name: 'job.start',
      description:
        'Starts a workflow tool as a background job and answers at once with its job_id, after ' +
        'validating the arguments and taking an execution slot (EXECUTION_CAPACITY_FULL, ' +
        'retryable, when all --max-active slots are busy). Follow it with job.status, ' +
        'job.result and job.cancel. It can run any workflow tool: inspect the target ' +
        '(annotations, _meta["mhl/risk"]) before starting it.',
      inputSchema,
      ...controlToolRisk('dispatch', 'Start a job'),
    },
    execution: false,
    prepare: async (args, ctx) => {
      checkControlArguments('job.start', inputSchema, args);
      const name = args['tool'] as string;
      const target = tools.get(name);
      if (!target?.execution) {
        const shown = JSON.stringify(shortKey(name));
        throw new ArgumentError(
          'tool',
          `${shown} is not a workflow tool; job.start runs only those`,
        );
      }
      const forwardedArgs = (args['arguments'] ?? {}) as Record<string, unknown>;
      let call: PreparedCall;
      try {
        // A job runs after job.start answered: a pause has no one to ask and fails the job.
        call = await target.prepare(forwardedArgs, backgroundContext(ctx));
      } catch (error) {
        // Named from job.start's side: the target's `name` is job.start's `arguments.name`.
        throw error instanceof ArgumentError ? error.within('arguments') : error;
      }
      return { run: async () => startJob(jobs, name, call, ctx) };
    },
  };
}

function startJob(
  jobs: JobRegistry,
  tool: string,
  call: PreparedCall,
  ctx: RequestContext,
): ToolResult {
  const started = jobs.start({
    tool,
    owner: ownerOf(ctx),
    timeoutMs: call.timeoutMs,
    // A job always runs in the background: an answer without a promise is made one here.
    run: async (signal) => call.run(signal),
  });
  if (started === 'jobs_full') {
    return toolError(
      'JOB_CAPACITY_FULL',
      'the job table is full of running and draining jobs; retry once one has ended',
      true,
    );
  }
  if (typeof started === 'string') return refusedResult(started);
  const { job_id, status, draining } = started;
  const result = structured({ job_id, tool, status, draining });
  return { ...result, _meta: { 'mhl/execution': { queue_wait_ms: 0 } } };
}

function statusTool({ jobs }: JobSurfaceOptions): ToolDefinition {
  return jobIdTool('job.status', 'Reports a job: status and whether it is still draining.', {
    title: 'Job status',
    read: (id, owner) => {
      const view = jobs.get(id, owner);
      return view && structured({ ...view });
    },
  });
}

function resultTool({ jobs }: JobSurfaceOptions): ToolDefinition {
  return jobIdTool(
    'job.result',
    'Reads a job result without waiting: ready=false while it runs, else the status and the ' +
      "target's response. Reads are repeatable; nothing is consumed.",
    {
      title: 'Job result',
      read: (id, owner) => {
        const found = jobs.outcome(id, owner);
        if (!found) return undefined;
        const { view, outcome } = found;
        if (!outcome) return structured({ ...view, ready: false });
        return structured({ ...view, ready: true, result: responseOf(outcome, view) });
      },
    },
  );
}

function cancelTool({ jobs }: JobSurfaceOptions): ToolDefinition {
  return jobIdTool(
    'job.cancel',
    'Cancels a running job at once (status cancelled, draining until its handler exits). A job ' +
      'that already ended is left as it is.',
    {
      title: 'Cancel a job',
      risk: 'cancel',
      read: (id, owner) => {
        const view = jobs.cancel(id, owner);
        return view && structured({ ...view });
      },
    },
  );
}

/** A tool taking `{job_id}` that answers from the table, or JOB_NOT_FOUND. */
function jobIdTool(
  name: string,
  description: string,
  spec: {
    title: string;
    /** Its risk preset; `read` (changes nothing) unless said otherwise. */
    risk?: keyof typeof CONTROL_RISK;
    read: (id: string, owner: string) => ToolResult | undefined;
  },
): ToolDefinition {
  return {
    name,
    entry: {
      name,
      description,
      inputSchema: JOB_ID_SCHEMA,
      ...controlToolRisk(spec.risk ?? 'read', spec.title),
    },
    execution: false,
    prepare: (args, ctx) => {
      checkControlArguments(name, JOB_ID_SCHEMA, args);
      const id = args['job_id'] as string;
      const owner = ownerOf(ctx);
      return {
        run: async () =>
          spec.read(id, owner) ?? toolError('JOB_NOT_FOUND', NOT_FOUND_MESSAGE, false),
      };
    },
  };
}

/** The retained response of a terminal job, with its execution metadata. */
function responseOf(outcome: JobOutcome, view: JobView): ToolResult {
  if ('response' in outcome) {
    return withExecution({ ...outcome.response }, outcome.durationMs, view.timeout_ms);
  }
  const { code, message } = outcome.failure;
  if (code === 'TIMEOUT') return toolError(code, message, true, { phase: 'execution' });
  return toolError(code, message, code === 'CANCELLED');
}

/** A result whose `structuredContent` is `value` and whose text is the same JSON. */
function structured(value: Readonly<Record<string, unknown>>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/**
 * `start_session` and `dispatch_child` (spec session-profile §3.2–§3.3): a session is created
 * (or resumed) in a planning folder under the server's own planning root (only the basename of
 * the agent's path counts), its index derived from the folder with the key, its bag seeded with
 * the declared defaults; `meta` sessions without a folder live in a private tmp folder until a
 * child promotes them. Children are embedded in their root's file.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import { type CallNote, type SessionsContext, ToolFailure } from '../context.js';
import { loadWorkflow, type Workflow } from '../definition/loader.js';
import { advanceSession, type Clock, historyEvent } from '../store/advance.js';
import { safeKeySchema, setOwn } from '../store/safe-keys.js';
import type { SessionFile } from '../store/session.schema.js';
import { PLANNING_SLUG, SESSION_FILE } from '../store/session-store.js';
import { inSession, jsonResult, sessionMeta, sessionParams, TOOL_CODES } from './common.js';

/**
 * The argument schemas, built on first use rather than at import: only the sessions surface
 * builds them (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for them (about 0.2 ms of start-up, measured with initprof).
 */
function buildSessionToolSchemas() {
  const params = sessionParams();
  const ContextMode = z.enum(['persistent', 'fresh']);

  const StartInput = z
    .object({
      workflow_id: z
        .string()
        .min(1)
        .optional()
        .describe('Workflow to start (default meta); ignored when resuming.'),
      planning_folder: z
        .string()
        .optional()
        .describe('Absolute path; only its basename (the slug) is used.'),
      repo: z.string().optional().describe('owner/repo, or an https or ssh URL of it.'),
      user_request: z
        .string()
        .optional()
        .describe("The user's request, seeded as the user_request variable."),
      agent_id: safeKeySchema('agent_id')
        .min(1)
        .default('orchestrator')
        .describe('The calling agent.'),
      context_mode: ContextMode.optional().describe(
        'persistent: deliveries collapse to unchanged markers.',
      ),
    })
    .strict();

  const DispatchInput = z
    .object({
      session_index: params.sessionIndex,
      workflow_id: z.string().min(1).describe('The child workflow.'),
      agent_id: safeKeySchema('agent_id').min(1).default('worker').describe('The worker agent.'),
      planning_slug: z
        .string()
        .regex(
          PLANNING_SLUG,
          'planning_slug is a plain folder name: letters, digits, . _ -, no leading dot',
        )
        .optional()
        .describe('Planning folder name when a transient session is promoted.'),
      repo: z.string().optional().describe('owner/repo, or an https or ssh URL of it.'),
      context_mode: ContextMode.optional().describe(
        'persistent: deliveries collapse to unchanged markers.',
      ),
    })
    .strict();

  return {
    startInput: StartInput,
    dispatchInput: DispatchInput,
  };
}

let built: ReturnType<typeof buildSessionToolSchemas> | undefined;

function sessionToolSchemas(): ReturnType<typeof buildSessionToolSchemas> {
  built ??= buildSessionToolSchemas();
  return built;
}

type Schemas = ReturnType<typeof sessionToolSchemas>;

/** `owner/repo` from the forms the tool accepts; undefined when none matches. */
export function normaliseRepo(text: string): string | undefined {
  const m =
    /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?$/.exec(text) ??
    /^https:\/\/[^/]+\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(text) ??
    /^(?:ssh:\/\/)?git@[^:/]+[:/]([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?$/.exec(text);
  return m ? `${m[1]}/${m[2]}` : undefined;
}

/** A private (0700, created exclusively) tmp folder for a transient `meta` session. */
function transientFolder(): string {
  const folder = join(tmpdir(), `workflow-server-transient-${randomUUID()}`);
  mkdirSync(folder, { mode: 0o700 });
  return folder;
}

function seededDefaults(wf: Workflow): Record<string, unknown> {
  const bag: Record<string, unknown> = {};
  for (const v of wf.variables)
    if (v.defaultValue !== undefined) bag[v.name] = structuredClone(v.defaultValue);
  return bag;
}

/** A new session file for `wf`. */
export function newSessionFile(
  wf: Workflow,
  index: string,
  agentId: string,
  clock: Clock,
  extra: {
    userRequest?: string | undefined;
    folder?: string | undefined;
    repo?: string | undefined;
    contextMode?: string | undefined;
  },
): SessionFile {
  const now = clock.now();
  const defaults = seededDefaults(wf);
  const variables = {
    ...defaults,
    ...(extra.userRequest !== undefined ? { user_request: extra.userRequest } : {}),
  };
  const history = [historyEvent(clock, 'workflow_started')];
  if (Object.keys(defaults).length > 0)
    history.push(historyEvent(clock, 'variables_seeded', { data: { variables: defaults } }));
  const state: SessionFile = {
    schemaVersion: 1,
    sessionIndex: index,
    workflowId: wf.id,
    workflowVersion: wf.version,
    agentId,
    seq: 0,
    ts: Math.floor(now.getTime() / 1000),
    startedAt: now.toISOString(),
    currentActivity: '',
    currentTechnique: '',
    condition: '',
    variables,
    completedActivities: [],
    skippedActivities: [],
    checkpointResponses: {},
    history,
    status: 'running',
    triggeredWorkflows: [],
  };
  if (extra.folder !== undefined) state.planningFolderPath = extra.folder;
  if (extra.repo !== undefined) state.repo = extra.repo;
  if (extra.contextMode !== undefined)
    state.contextMode = extra.contextMode as 'persistent' | 'fresh';
  return state;
}

function workflowInfo(wf: Workflow) {
  return { id: wf.id, version: wf.version, title: wf.title, description: wf.description };
}

function checkRepo(repo: string | undefined): string | undefined {
  if (repo === undefined) return undefined;
  const normal = normaliseRepo(repo);
  if (normal === undefined)
    throw new ToolFailure(
      TOOL_CODES.INVALID_PATH,
      `Invalid repo '${repo}': expected owner/repo or a git URL.`,
    );
  return normal;
}

export const startSession: SessionTool<Schemas['startInput']> = {
  name: 'start_session',
  description:
    'Start or resume a workflow session; returns the session_index every other tool takes.',
  input: () => sessionToolSchemas().startInput,
  traced: true,
  run: async (args, ctx, note) => {
    if (args.planning_folder !== undefined && !isAbsolute(args.planning_folder)) {
      throw new ToolFailure(TOOL_CODES.INVALID_PATH, 'planning_folder must be an absolute path.');
    }
    const repo = checkRepo(args.repo);
    const slug = args.planning_folder !== undefined ? basename(args.planning_folder) : undefined;
    if (slug !== undefined && !PLANNING_SLUG.test(slug)) {
      throw new ToolFailure(
        TOOL_CODES.INVALID_PATH,
        'planning_folder must end in a plain folder name.',
      );
    }
    const existing = slug === undefined ? undefined : ctx.store.findSlug(slug);
    if (existing !== undefined)
      return ctx.store.withFolder(existing, () => resume(ctx, existing, args, repo, note));
    const wf = loadWorkflow(ctx.root, args.workflow_id ?? 'meta');
    const transient = wf.id === 'meta' && slug === undefined;
    const name = slug ?? `transition-${randomUUID()}`;
    const folder = transient ? transientFolder() : ctx.store.makeFolder(name);
    // Concurrent starts on one slug all get here: the first under the lock creates the session,
    // the others find its file and resume it instead of writing a second session over it.
    return ctx.store.withFolder(folder, async () => {
      if (existsSync(join(folder, SESSION_FILE))) return resume(ctx, folder, args, repo, note);
      return create(ctx, wf, folder, name, transient, args, repo, note);
    });
  },
};

async function create(
  ctx: SessionsContext,
  wf: Workflow,
  folder: string,
  name: string,
  transient: boolean,
  args: z.infer<Schemas['startInput']>,
  repo: string | undefined,
  note: CallNote,
) {
  const index = ctx.store.indexFor(folder);
  // A transient folder is not a planning folder: the file records none (get_workflow still
  // reports where the session lives), as the public server records none.
  const state = newSessionFile(wf, index, args.agent_id, ctx.clock, {
    userRequest: args.user_request,
    ...(transient ? {} : { folder }),
    repo,
    contextMode: args.context_mode,
  });
  if (transient) ctx.store.registerTransient(index, folder);
  await ctx.store.save(folder, state);
  Object.assign(note, { index, wf: wf.id, act: '', aid: args.agent_id });
  const out: Record<string, unknown> = {
    workflow: workflowInfo(wf),
    session_index: index,
    planning_slug: name,
  };
  if (!transient) out['planning_folder_path'] = folder;
  if (repo !== undefined) out['repo'] = repo;
  else if (transient) out['repo_unbound'] = true;
  if (args.context_mode !== undefined) out['context_mode'] = args.context_mode;
  return jsonResult(out, sessionMeta(index, []));
}

/** Resumes the session in `folder`; the caller holds the folder's lock. */
async function resume(
  ctx: SessionsContext,
  folder: string,
  args: z.infer<Schemas['startInput']>,
  repo: string | undefined,
  note: Parameters<SessionTool<Schemas['startInput']>['run']>[2],
) {
  const state = ctx.store.readFolder(folder);
  const before = JSON.stringify(state);
  const wf = loadWorkflow(ctx.root, state.workflowId);
  if (repo !== undefined && state.repo !== undefined && state.repo !== repo) {
    throw new ToolFailure(
      TOOL_CODES.REPO_CONFLICT,
      `This session is bound to ${state.repo}; it cannot move to ${repo}.`,
    );
  }
  if (repo !== undefined) state.repo = repo;
  state.agentId = args.agent_id;
  state.planningFolderPath = folder;
  if (args.user_request !== undefined) state.variables['user_request'] = args.user_request;
  if (args.context_mode !== undefined) {
    if (args.context_mode === 'fresh' && state.deliveredContent)
      delete state.deliveredContent[args.agent_id];
    state.contextMode = args.context_mode;
  }
  if (state.workflowVersion !== wf.version) {
    state.workflowVersion = wf.version;
    for (const [k, v] of Object.entries(seededDefaults(wf)))
      if (!Object.hasOwn(state.variables, k)) setOwn(state.variables, k, v);
  }
  if (JSON.stringify(state) !== before) await ctx.store.save(folder, state);
  Object.assign(note, {
    index: state.sessionIndex,
    wf: wf.id,
    act: state.currentActivity,
    aid: args.agent_id,
  });
  const out: Record<string, unknown> = {
    workflow: workflowInfo(wf),
    session_index: state.sessionIndex,
    planning_slug: basename(folder),
    planning_folder_path: folder,
  };
  if (state.repo !== undefined) out['repo'] = state.repo;
  if (state.contextMode !== undefined) out['context_mode'] = state.contextMode;
  return jsonResult(out, sessionMeta(state.sessionIndex, []));
}

export const dispatchChild: SessionTool<Schemas['dispatchInput']> = {
  name: 'dispatch_child',
  description:
    "Create a child session of another workflow under this session; returns the child's session_index.",
  input: () => sessionToolSchemas().dispatchInput,
  traced: true,
  run: async (args, ctx, note) => {
    // Traced under the child's agent, as the public server traces it.
    return inSession(ctx, args.session_index, note, args.agent_id, async (handle) => {
      const parent = handle.state;
      const wf = loadWorkflow(ctx.root, args.workflow_id);
      const repo = checkRepo(args.repo);
      if (repo !== undefined && parent.repo === undefined) parent.repo = repo;
      let target = handle.folder;
      let promotedSlug: string | undefined;
      if (handle.transient) {
        promotedSlug =
          args.planning_slug ?? `${ctx.clock.now().toISOString().slice(0, 10)}-${args.workflow_id}`;
        target = ctx.store.makeFolder(promotedSlug);
        parent.planningFolderPath = target;
        parent.triggeredWorkflows = [];
      }
      const n = parent.triggeredWorkflows.length;
      const path = [...handle.path, 'triggeredWorkflows', n, 'state'].join('.');
      const childIndex = ctx.store.indexFor(target, path);
      const userRequest = parent.variables['user_request'];
      // The child lives in the parent's file, so it records no planning folder of its own.
      const child = newSessionFile(wf, childIndex, args.agent_id, ctx.clock, {
        userRequest: typeof userRequest === 'string' ? userRequest : undefined,
        repo: parent.repo,
        contextMode: args.context_mode,
      });
      const now = ctx.clock.now().toISOString();
      // A promotion writes into a durable folder another call may be writing too: lock it.
      const write = (fn: () => Promise<void>) =>
        target === handle.folder ? fn() : ctx.store.withFolder(target, fn);
      await write(() =>
        advanceSession(ctx.store, { ...handle, folder: target }, ctx.clock, (s) => {
          s.triggeredWorkflows.push({
            workflowId: wf.id,
            sessionIndex: childIndex,
            triggeredAt: now,
            triggeredFrom: { activityId: s.currentActivity },
            status: 'running',
            state: child,
          });
          s.history.push(
            historyEvent(ctx.clock, 'workflow_triggered', {
              ...(s.currentActivity ? { activity: s.currentActivity } : {}),
              data: { workflowId: wf.id, sessionIndex: childIndex },
            }),
          );
        }),
      );
      if (handle.transient) ctx.store.promote(parent.sessionIndex, target);
      const out: Record<string, unknown> = {
        session_index: childIndex,
        workflow: { id: wf.id, version: wf.version, initialActivity: wf.initialActivity },
        planning_folder_path: target,
      };
      if (promotedSlug !== undefined) out['planning_slug'] = promotedSlug;
      return jsonResult(out, sessionMeta(childIndex, []));
    });
  },
};

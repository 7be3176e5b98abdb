/** What the sessions-profile tests share: the fixture corpus and the full tool set it serves. */
import { join } from 'node:path';

export const SESSIONS_CORPUS = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'corpus');

/** Every tool the sessions profile lists, in catalogue order. */
export const SESSIONS_TOOLS = [
  'discover',
  'list_workflows',
  'health_check',
  'start_session',
  'dispatch_child',
  'get_workflow',
  'next_activity',
  'get_activity',
  'get_technique',
  'get_resource',
  'yield_checkpoint',
  'present_checkpoint',
  'respond_checkpoint',
  'resume_checkpoint',
  'get_trace',
  'get_workflow_status',
  'inspect_session',
  'record_usage',
];

/**
 * The errors of loading workflow definitions. A `WorkflowError` fails the whole workflow
 * (manifest schema, unresolved rule fragment, unresolvable borrowed activity); per-activity
 * problems are collected as `ActivityLoadError`s and never thrown.
 */

/** Codes a definition load fails with. */
export const DEFINITION_CODES = {
  WORKFLOW_NOT_FOUND: 'WORKFLOW_NOT_FOUND',
  WORKFLOW_INVALID: 'WORKFLOW_INVALID',
  ACTIVITY_NOT_FOUND: 'ACTIVITY_NOT_FOUND',
} as const;

/** The whole workflow cannot be served. `message` names the file, never an absolute path. */
export class WorkflowError extends Error {
  readonly code: (typeof DEFINITION_CODES)[keyof typeof DEFINITION_CODES];
  constructor(code: WorkflowError['code'], message: string) {
    super(message);
    this.name = 'WorkflowError';
    this.code = code;
  }
}

/** One activity excluded from its workflow, as `get_workflow.activity_load_errors` lists it. */
export interface ActivityLoadError {
  readonly file: string;
  readonly activity_id: string;
  readonly error: string;
}

/**
 * The variable-name rule of the workflow-server folder format (spec session-profile §1.3): a
 * snake_case name of at least two words, or one of a fixed list of single words. A manifest
 * whose variable breaks it fails to load, as the public server's does. Pure data, no I/O.
 */

/** At least two lower-case snake_case words. */
export const QUALIFIED_NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/;

/** Single words the format accepts as variable names (the public server's exempt list). */
export const EXEMPT_NAMES: ReadonlySet<string> = new Set([
  'requirements',
  'features',
  'exclusions',
  'dimensions',
  'tasks',
  'results',
  'submodules',
  'paths',
  'fields',
  'filters',
  'stats',
  'effects',
  'substitutions',
  'findings',
  'assumptions',
  'subsystems',
  'transitions',
  'options',
  'branches',
  'agents',
  'changes',
  'failures',
  'items',
  'files',
  'gaps',
  'outcomes',
  'body',
  'query',
  'repo',
  'owner',
  'number',
  'title',
  'branch',
  'diff',
  'limit',
  'name',
  'sha',
  'url',
  'head',
  'base',
  'ref',
  'labels',
  'path',
  'cursor',
  'cql',
  'jql',
  'description',
  'assignee',
  'depth',
  'direction',
  'summary',
  'state',
  'target',
  'adr',
  'type',
  'mode',
  'kind',
]);

/** True when `name` may name a workflow variable. */
export function isVariableName(name: string): boolean {
  return QUALIFIED_NAME.test(name) || EXEMPT_NAMES.has(name);
}

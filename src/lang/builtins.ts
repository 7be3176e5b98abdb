/**
 * Names the language provides without a declaration, and the vocabularies the checker validates
 * declarations against. One table each, shared by the checker and, later, the interpreter.
 */

/** Native namespaces: `cmd.exec(…)`, `fs.read(…)`, … */
export const NATIVE_NAMESPACES: ReadonlySet<string> = new Set([
  'cmd',
  'fs',
  'dir',
  'git',
  'http',
  'json',
  'log',
  'time',
  'uuid',
  'html',
]);

/** Built-in functions callable by bare name. */
export const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set([
  'log',
  'fail',
  'pause',
  'env',
  'vault',
  'type_of',
  'is_string',
  'is_number',
  'is_bool',
  'is_array',
  'is_object',
  'is_null',
  'is_enum',
  'nameof',
  'complete',
]);

/** Assertions available inside `test … { describe … { } }`. */
export const TEST_ASSERTIONS: ReadonlySet<string> = new Set([
  'are_equal',
  'are_not_equal',
  'not_equal',
  'is_true',
  'is_false',
  'is_null',
  'not_null',
  'greater_than',
  'less_than',
  'greater_than_or_equal',
  'less_than_or_equal',
  'includes',
  'incomplete',
]);

/** Type names every program knows; synonyms map to the canonical kind. */
export const BUILTIN_TYPES: Readonly<Record<string, string>> = {
  string: 'string',
  number: 'number',
  int: 'number',
  integer: 'number',
  float: 'number',
  bool: 'bool',
  boolean: 'bool',
  any: 'any',
  array: 'array',
  object: 'object',
};

export const AGENT_PROPERTIES: ReadonlySet<string> = new Set([
  'engine',
  'command',
  'args',
  'timeout',
  'log',
  'trace',
  'retry',
  'cache',
  'rate_limit',
  'fallback',
  'before',
  'after',
  'description',
  'skills',
  'system_prompt',
  'endpoint',
  'model',
  'temperature',
]);

/** What a `router` declares (language digest §5.8). */
export const ROUTER_PROPERTIES: ReadonlySet<string> = new Set([
  'agents',
  'select',
  'decider',
  'description',
]);

export const PIPELINE_PROPERTIES: ReadonlySet<string> = new Set([
  'description',
  'checkpoint',
  'spawn',
  'context',
  'output',
  'repeat',
  'session_start',
  'session_end',
  'step_start',
  'step_end',
  'stop_failure',
]);

export const MEMORY_TYPES: ReadonlySet<string> = new Set([
  'kv',
  'json',
  'append_log',
  'jsonl',
  'vector',
]);
export const MEMORY_PROPERTIES: ReadonlySet<string> = new Set([
  'type',
  'path',
  'store',
  'path_guard',
  'description',
]);

/**
 * What editors show for names the language provides: each native method's signature and one
 * line on what it does, the built-in functions, and the language's keywords. Kept beside the
 * checker's tables (builtins.ts) and checked against them and against the runtime's natives by
 * test/unit/lang/vocabulary.test.ts, so completion never offers what the runtime lacks.
 */
import { DECLARATION_KEYWORDS } from './parser.js';

export interface NativeMethod {
  readonly name: string;
  /** As written in a call, without the namespace: `exec(command, timeout: dur?)`. */
  readonly signature: string;
  readonly description: string;
}

const m = (name: string, params: string, returns: string, description: string): NativeMethod => ({
  name,
  signature: `${name}(${params}) → ${returns}`,
  description,
});

const PROCESS = '{stdout, stderr, exit_code}';
const RESPONSE = '{status, body, headers, ok, json}';
const HTTP_OPTIONS =
  'url, headers:?, query:?, body:?, text:?, form:?, timeout:?, follow_redirects:?, raise_for_status:?, auth:?, tls:?, proxy:?';
const httpVerb = (verb: string) =>
  m(
    verb,
    HTTP_OPTIONS,
    RESPONSE,
    `Sends an HTTP ${verb.toUpperCase()}; a non-2xx status is a value, a transport failure raises.`,
  );

/** Every native namespace's methods, in the order the digest (§8) lists them. */
export const NATIVE_METHODS: Readonly<Record<string, readonly NativeMethod[]>> = {
  cmd: [
    m(
      'exec',
      'command, timeout: dur?',
      PROCESS,
      'Runs a program without a shell; a string command is split on whitespace.',
    ),
    m(
      'exec_all',
      'commands, timeout: dur?',
      `${PROCESS}[]`,
      'Runs commands concurrently; results in input order.',
    ),
  ],
  fs: [
    m('read', 'path', 'string', 'Reads a file as UTF-8 text.'),
    m('exists', 'path', 'bool', 'Whether the path exists (false only when not found).'),
    m('write', 'path, content', 'true', 'Writes a file, creating parent folders and truncating.'),
    m('append', 'path, content', 'true', 'Appends to a file.'),
    m('delete', 'path', 'true', 'Deletes a file or an empty folder; a missing path raises.'),
    m('join', 'segment, …', 'string', 'Joins path segments.'),
    m('list', 'dir', 'string[]', 'Immediate entries of a folder, as joined paths.'),
  ],
  dir: [
    m('create', 'path', 'true', 'Creates a folder and its parents (idempotent).'),
    m('exists', 'path', 'bool', 'Whether the path is a folder.'),
    m('list', 'path', 'string[]', 'Sorted entries of a folder, as joined paths.'),
    m('delete', 'path', 'true', 'Deletes an empty folder.'),
  ],
  git: [
    m('status', 'paths?, dir?', PROCESS, 'git status --porcelain; a non-zero exit is a value.'),
    m('add', 'paths, dir?', PROCESS, 'git add -A -- paths.'),
    m('commit', 'message, paths?, dir?', PROCESS, 'git commit; a non-zero exit is a value.'),
    m('diff', 'target?, dir?', 'string', 'git diff; a non-zero exit raises.'),
    m('rev_parse', 'ref, dir?', 'string', 'The short hash of a ref.'),
    m('log', 'n, dir?', 'string', 'git log --oneline -n n.'),
  ],
  http: [
    ...['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].map(httpVerb),
    m(
      'download',
      'url, path, …',
      '{status, path, bytes, ok, headers}',
      'Streams a response body to a file.',
    ),
  ],
  json: [
    m('parse', 'text', 'any', 'Parses JSON text; invalid JSON raises.'),
    m('parse_lines', 'text', 'any[]', 'Parses one JSON value per non-empty line.'),
    m('stringify', 'value', 'string', 'JSON text with keys in a stable order.'),
  ],
  log: [
    m('info', '…values', 'null', 'Writes an [INFO] line.'),
    m('warn', '…values', 'null', 'Writes a [WARN] line.'),
    m('error', '…values', 'null', 'Writes an [ERROR] line (does not raise).'),
  ],
  time: [
    m('now', '', 'string', 'The current time, RFC 3339 UTC.'),
    m('parse', 'text, layout?', 'string', 'Parses a time.'),
    m(
      'format',
      'value, layout?',
      'string',
      'Formats a time (Go layouts or yyyy MM dd HH hh mm ss).',
    ),
    m('add', 'value, duration', 'string', 'Adds a duration such as 5m to a time.'),
    m('diff', 'a, b', 'number', 'Seconds from b to a.'),
    m('compare', 'a, b', '-1 | 0 | 1', 'Orders two times.'),
    m('sleep', 'duration', 'null', 'Waits, cancellably.'),
  ],
  uuid: [m('v4', '', 'string', 'A random UUID.'), m('v7', '', 'string', 'A time-ordered UUID.')],
  html: [
    m(
      'parse',
      'text',
      '{tag, attrs, text, children}',
      'Parses an HTML document into plain objects.',
    ),
    m('get_element', 'node, selector', 'object | null', 'The first element matching a selector.'),
    m('get_elements', 'node, selector', 'object[]', 'Every element matching a selector.'),
    m('get_attribute', 'node, name', 'string | null', "An element's attribute."),
    m('get_text', 'node', 'string', "An element's text content."),
    m('to_html', 'node', 'string', 'Serialises a node back to HTML.'),
  ],
};

/** One line on each built-in function (builtins.ts `BUILTIN_FUNCTIONS`). */
export const BUILTIN_DESCRIPTIONS: Readonly<Record<string, string>> = {
  log: 'log(…values) → null: writes one line of program output.',
  fail: 'fail(…values): raises a catchable error with the values joined by spaces.',
  pause: 'pause(reason?): suspends the run at this step; --resume continues it.',
  env: 'env("NAME") → string: an environment variable ("" when unset, fail-closed in agent and extension settings).',
  vault:
    'vault("NAME", kind?: "token") → string: the secret NAME from the local vault (mhl secrets add NAME), resolved by the host and redacted everywhere; fails SECRET_NOT_FOUND when missing.',
  type_of: 'type_of(value) → string: the type name of a value.',
  is_string: 'is_string(value) → bool',
  is_number: 'is_number(value) → bool',
  is_bool: 'is_bool(value) → bool',
  is_array: 'is_array(value) → bool',
  is_object: 'is_object(value) → bool',
  is_null: 'is_null(value) → bool',
  is_enum: 'is_enum(value) → bool',
  nameof: 'nameof(Declaration) → string: the declared name, checked at lint time.',
  complete: 'complete(): finishes the run normally (used by lifecycle hooks).',
};

/**
 * Every word the grammar gives a meaning to somewhere (keywords are contextual: most still work
 * as member names). Editors highlight and complete these; the parser matches them in place.
 */
export const KEYWORDS: readonly string[] = [
  ...DECLARATION_KEYWORDS,
  'from',
  'as',
  'describe',
  // Pipeline members.
  'input',
  'var',
  'const',
  'mem',
  'step',
  'entry',
  'parallel',
  'timeout',
  'max',
  // Statements.
  'return',
  'break',
  'goto',
  'spawn',
  'wait',
  'any',
  'of',
  'on_error',
  'if',
  'else',
  'while',
  'for',
  'in',
  'try',
  'catch',
  'finally',
  // Expressions.
  'match',
  'with',
  'ref',
  'self',
  'true',
  'false',
  'null',
];

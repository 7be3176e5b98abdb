/**
 * The native namespaces a program can call (`cmd.exec(…)`, `fs.read(…)`, …), keyed by name.
 *
 * `mem` belongs to the interpreter, so it is not here. The shared
 * process runner is exported too, for other runtime parts that start processes (agent CLIs).
 */
import { CMD_NAMESPACE } from './cmd.js';
import { DIR_NAMESPACE } from './dir.js';
import { FS_NAMESPACE } from './fs.js';
import { GIT_NAMESPACE } from './git.js';
import { HTML_NAMESPACE } from './html.js';
import { HTTP_NAMESPACE } from './http.js';
import { JSON_NAMESPACE } from './json.js';
import { LOG_NAMESPACE } from './log.js';
import type { NativeNamespace } from './native.js';
import { TIME_NAMESPACE } from './time.js';
import { UUID_NAMESPACE } from './uuid.js';

export type { ArgShape } from './args.js';
export { ArgReader, formatDuration, NATIVE_ERROR, nativeError, readArgs } from './args.js';
export type { NativeContext, NativeNamespace, NativeOp } from './native.js';
export type { ProcessResult, RunProcessOptions } from './process-group.js';
export { runProcess } from './process-group.js';
export { createTimeNamespace } from './time.js';

/**
 * Every native namespace by the name programs use. Null-prototype and frozen, so only real
 * namespaces and operations resolve (`NATIVES.toString` is undefined).
 */
export const NATIVES: Readonly<Record<string, NativeNamespace>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, NativeNamespace>, {
    cmd: CMD_NAMESPACE,
    dir: DIR_NAMESPACE,
    fs: FS_NAMESPACE,
    git: GIT_NAMESPACE,
    html: HTML_NAMESPACE,
    http: HTTP_NAMESPACE,
    json: JSON_NAMESPACE,
    log: LOG_NAMESPACE,
    time: TIME_NAMESPACE,
    uuid: UUID_NAMESPACE,
  }),
);

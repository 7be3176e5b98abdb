/**
 * The `log` native namespace: `log.info`, `log.warn` and `log.error` write one prefixed line of
 * program output each (`[WARN] disk almost full`). The bare `log(…)` call is the interpreter's.
 *
 * Lines go to `ctx.output`, which redacts them; `log.error` never raises. See the digest, §8 "log".
 */
import { type CallArgs, formatValue, type Value } from '../interpreter/values.js';
import { defineNamespace, readArgs } from './args.js';
import type { NativeContext, NativeOp } from './native.js';

function level(name: string, prefix: string): NativeOp {
  return async (args: CallArgs, ctx: NativeContext): Promise<Value> => {
    const values = readArgs(`log.${name}`, args, { positional: [], rest: true }).rest();
    ctx.output(`${prefix} ${values.map(formatValue).join(' ')}`);
    return null;
  };
}

/** The `log` namespace: `info`, `warn`, `error` → null. Raises `NATIVE` only for named arguments. */
export const LOG_NAMESPACE = defineNamespace({
  info: level('info', '[INFO]'),
  warn: level('warn', '[WARN]'),
  error: level('error', '[ERROR]'),
});

/**
 * The `cmd` native namespace: run programs without a shell and capture their output.
 *
 * `cmd.exec(["sh", "-c", "…"])` is the only way to get shell features; a string command is
 * split on whitespace, never interpreted. Every process runs through `runProcess`, so timeouts
 * and cancellation kill its whole process group. See the language digest, §8 "cmd".
 */
import { type CallArgs, newObject, typeOf, type Value } from '../interpreter/values.js';
import { defineNamespace, nativeError, readArgs } from './args.js';
import type { NativeContext } from './native.js';
import { type ProcessResult, runProcess } from './process-group.js';

/** `{stdout, stderr, exit_code}`: how a finished process looks to MHL code. */
export function processResultValue(r: ProcessResult): Value {
  return newObject([
    ['stdout', r.stdout],
    ['stderr', r.stderr],
    ['exit_code', r.exitCode],
  ]);
}

/**
 * Turns a command value into argv: an array is taken element by element, verbatim; a string is
 * split on whitespace (no quoting, no expansion). Raises `NATIVE` for anything else or nothing.
 */
export function commandArgv(op: string, command: Value, what = 'command'): string[] {
  let argv: string[];
  if (typeof command === 'string') {
    argv = command.split(/\s+/).filter((s) => s !== '');
  } else if (Array.isArray(command)) {
    argv = command.map((x, i) => {
      if (typeof x !== 'string') {
        throw nativeError(op, `${what}[${i}] must be a string, got ${typeOf(x)}`);
      }
      return x;
    });
  } else {
    throw nativeError(
      op,
      `${what} must be a string or an array of strings, got ${typeOf(command)}`,
    );
  }
  if (argv.length === 0 || argv[0] === '') throw nativeError(op, `${what} is empty`);
  return argv;
}

async function run(
  op: string,
  argv: string[],
  timeoutMs: number | undefined,
  ctx: NativeContext,
  signal: AbortSignal,
): Promise<Value> {
  const result = await runProcess(argv, { op, cwd: ctx.cwd, env: ctx.childEnv, signal, timeoutMs });
  return processResultValue(result);
}

/** `cmd.exec(command, timeout: dur?)` → `{stdout, stderr, exit_code}`. */
async function exec(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('cmd.exec', args, { positional: ['command', 'timeout'] });
  const argv = commandArgv(a.op, a.value('command'));
  return run(a.op, argv, a.optDuration('timeout'), ctx, ctx.signal);
}

/**
 * `cmd.exec_all(commands, timeout: dur?)` → results in input order. Commands run concurrently;
 * the first failure (launch, timeout) stops the others, waits for them, and is raised.
 */
async function execAll(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('cmd.exec_all', args, { positional: ['commands', 'timeout'] });
  const commands = a.optArray('commands');
  if (commands === undefined) throw nativeError(a.op, 'missing argument commands');
  const argvs = commands.map((c, i) => commandArgv(a.op, c, `commands[${i}]`));
  const timeoutMs = a.optDuration('timeout');
  ctx.signal.throwIfAborted();
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const runs = argvs.map((argv) =>
    run(a.op, argv, timeoutMs, ctx, signal).catch((e: unknown) => {
      stop.abort(e);
      throw e;
    }),
  );
  const settled = await Promise.allSettled(runs);
  ctx.signal.throwIfAborted();
  if (stop.signal.aborted) throw stop.signal.reason;
  return settled.map((s) => (s.status === 'fulfilled' ? s.value : null));
}

/**
 * The `cmd` namespace: `exec`, `exec_all`. Raises `NATIVE` for bad arguments, launch failure,
 * timeout and oversized output; honours `ctx.signal` (the process group is killed).
 */
export const CMD_NAMESPACE = defineNamespace({ exec, exec_all: execAll });

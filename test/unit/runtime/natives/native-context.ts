/** Builds `NativeContext`s and call arguments for the natives tests: real directories, no mocks. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LangError } from '../../../../src/lang/diagnostics.js';
import { type CallArgs, callArgs, type Value } from '../../../../src/runtime/interpreter/values.js';
import { NATIVE_ERROR } from '../../../../src/runtime/natives/args.js';
import type { NativeContext, NativeNamespace } from '../../../../src/runtime/natives/native.js';
import { Redactor } from '../../../../src/runtime/services/redact.js';

export interface TestContext extends NativeContext {
  readonly lines: string[];
  readonly controller: AbortController;
}

/** A context rooted at `cwd`, with a fresh redactor, a line collector and its own controller. */
export function testContext(
  cwd: string,
  childEnv: Record<string, string> = { PATH: process.env['PATH'] ?? '' },
): TestContext {
  const controller = new AbortController();
  const lines: string[] = [];
  return {
    signal: controller.signal,
    controller,
    cwd,
    childEnv,
    env: {},
    redactor: new Redactor(),
    output: (line) => lines.push(line),
    lines,
  };
}

/** `positional…` plus named arguments from an object. */
export function args(positional: Value[] = [], named: Record<string, Value> = {}): CallArgs {
  return callArgs(positional, new Map(Object.entries(named)));
}

/** Calls `ns.op` (which must exist) with the given arguments. */
export function call(
  ns: NativeNamespace,
  op: string,
  ctx: NativeContext,
  positional: Value[] = [],
  named: Record<string, Value> = {},
): Promise<Value> {
  const fn = ns[op];
  if (!fn) throw new Error(`no operation ${op}`);
  return fn(args(positional, named), ctx);
}

/** A fresh temporary directory and a function that removes it. */
export function tempDir(prefix = 'mhl-natives-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Asserts (for `assert.rejects`) that the error is a span-less `NATIVE` LangError. */
export function isNativeError(e: unknown): boolean {
  return e instanceof LangError && e.code === NATIVE_ERROR && e.span === undefined;
}

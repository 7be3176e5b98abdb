/**
 * Runs one pipeline of an extension fixture with `mhl run --format json` in a child process and
 * reads back its JSON result, as the `extension a2a` and `extension mcp` end-to-end tests do.
 */
import assert from 'node:assert/strict';
import { runCli } from './cli.js';

/** The `--format json` result of `mhl run`, the members these tests read. */
export interface RunResult {
  ok: boolean;
  code?: string;
  error?: string;
  kind?: string;
  line?: number;
  col?: number;
  vars?: Record<string, unknown>;
  log?: string[];
}

/**
 * `mhl run FILE --pipeline PIPELINE --format json --state-dir STATE --input k=v…` with `env`;
 * fails the test, with both streams, when stdout is not one JSON result.
 */
export async function runPipeline(
  run: { file: string; state: string; pipeline: string },
  env: Record<string, string>,
  inputs: Record<string, string> = {},
): Promise<{ exit: number | null; result: RunResult; stdout: string; stderr: string }> {
  const args = ['run', run.file, '--pipeline', run.pipeline, '--format', 'json'];
  args.push('--state-dir', run.state);
  for (const [k, v] of Object.entries(inputs)) args.push('--input', `${k}=${v}`);
  const r = await runCli(args, { env });
  let result: RunResult;
  try {
    result = JSON.parse(r.stdout) as RunResult;
  } catch {
    assert.fail(`mhl run printed no JSON result: ${r.stdout}\n${r.stderr}`);
  }
  return { exit: r.code, result, stdout: r.stdout, stderr: r.stderr };
}

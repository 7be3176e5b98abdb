/**
 * The `ollama/<model>` engine (spec §5.1 "Engines"): one non-streaming POST to the Ollama
 * `generate` API, whose `response` field is the result. It returns the text untrimmed; empty
 * checks, retries and redaction belong to `agents.ts`.
 */
import { AGENT_FAILURES, AgentError } from './agent-error.js';
import type { AgentSpec } from './agent-spec.js';

/** The error text kept from a failed response body. */
const BODY_KEEP = 2000;

/**
 * POSTs `{model, prompt, stream: false, options: {temperature}}` to `<endpoint>/api/generate`.
 * Honours `signal` (which the caller has already combined with the attempt timeout).
 *
 * @throws AgentError `CONFIG` without an endpoint, `HTTP` on network errors, non-2xx statuses or
 *   a body without a string `response`. An abort surfaces as fetch's own abort error.
 */
export async function callOllama(
  spec: AgentSpec,
  model: string,
  prompt: string,
  signal: AbortSignal,
): Promise<string> {
  const name = spec.name;
  if (spec.endpoint === undefined || spec.endpoint === '') {
    throw new AgentError(name, AGENT_FAILURES.CONFIG, `agent "${name}" has no endpoint`);
  }
  const url = `${spec.endpoint.replace(/\/+$/, '')}/api/generate`;
  const body: Record<string, unknown> = { model, prompt, stream: false };
  if (spec.temperature !== undefined) body['options'] = { temperature: spec.temperature };
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    signal.throwIfAborted();
    const reason =
      e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : '';
    throw new AgentError(name, AGENT_FAILURES.HTTP, `agent "${name}" failed: ${reason}`);
  }
  const text = await response.text();
  if (!response.ok) {
    throw new AgentError(
      name,
      AGENT_FAILURES.HTTP,
      `agent "${name}" failed: HTTP ${response.status}: ${text.trim().slice(0, BODY_KEEP)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const result = (parsed as { response?: unknown } | undefined)?.response;
  if (typeof result !== 'string') {
    throw new AgentError(
      name,
      AGENT_FAILURES.HTTP,
      `agent "${name}" failed: the response has no "response" text`,
    );
  }
  return result;
}

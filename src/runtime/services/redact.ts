/**
 * The secret registry: every secret value the runtime resolves (credentials from `env()`,
 * Authorization headers, …) is registered here, and every text that leaves the interpreter —
 * output, logs, error messages, checkpoints, results — passes through `redact`.
 */
import { isObject, newObject, type Value } from '../interpreter/values.js';

export const REDACTED = '[REDACTED]';

/** Names whose values are secrets: `env("GITHUB_TOKEN")` registers what it returns. */
const SENSITIVE_NAME =
  /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|SESSION|COOKIE)/i;

/** Secrets shorter than this are not registered: redacting "1" everywhere would destroy output. */
const MIN_SECRET_LENGTH = 4;

export class Redactor {
  // Made on the first secret: most runs register none, and a synchronous call makes a run.
  #secrets: Set<string> | undefined;
  #pattern: RegExp | undefined;

  /** Whether an environment variable's name says it holds a secret. */
  static isSensitiveName(name: string): boolean {
    return SENSITIVE_NAME.test(name);
  }

  register(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH || this.#secrets?.has(secret)) return;
    this.#secrets ??= new Set();
    this.#secrets.add(secret);
    this.#pattern = undefined;
  }

  get size(): number {
    return this.#secrets?.size ?? 0;
  }

  /** Longest secrets first, so a secret containing another is replaced whole. */
  redact(text: string): string {
    if (this.#secrets === undefined || text.length === 0) return text;
    this.#pattern ??= new RegExp(
      [...this.#secrets]
        .sort((a, b) => b.length - a.length)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('|'),
      'g',
    );
    return text.replace(this.#pattern, REDACTED);
  }

  /** A copy of a value with every string redacted (keys too). */
  redactValue(v: Value): Value {
    if (this.#secrets === undefined) return v;
    if (typeof v === 'string') return this.redact(v);
    if (Array.isArray(v)) return v.map((x) => this.redactValue(x));
    if (isObject(v)) {
      const out = newObject();
      for (const [k, x] of Object.entries(v)) out[this.redact(k)] = this.redactValue(x);
      return out;
    }
    return v;
  }
}

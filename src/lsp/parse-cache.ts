/**
 * Parses reused across checks: typing in one document re-checks everything it imports, and
 * those files rarely changed. A result is reused only for the same path and the same text.
 */
import { type Limits, type ParseResult, type Parser, parse } from '../lang/index.js';

/** Files remembered; past it the least recently used goes. */
const CAPACITY = 512;

export class ParseCache {
  readonly #entries = new Map<string, { text: string; limits: Limits; result: ParseResult }>();

  readonly parse: Parser = (text, path, limits) => {
    const hit = this.#entries.get(path);
    if (hit && hit.text === text && hit.limits === limits) {
      this.#entries.delete(path);
      this.#entries.set(path, hit);
      return hit.result;
    }
    const result = parse(text, path, limits);
    this.#entries.delete(path);
    this.#entries.set(path, { text, limits, result });
    if (this.#entries.size > CAPACITY)
      this.#entries.delete(this.#entries.keys().next().value as string);
    return result;
  };
}

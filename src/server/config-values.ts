/**
 * How `mhl serve` reads a value from a flag or the environment: durations (`30s`, `500ms`) and
 * blank-as-absent text, whole numbers in a range, and `Refused`, the error a bad value throws.
 * Shared by config.ts, http-limits.ts and replica-config.ts.
 */

/** Milliseconds of `500ms`, `30s`, `2m`, `1h` (or a bare `0`); undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h)?$/.exec(text.trim());
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = match[2];
  if (unit === undefined) return amount === 0 ? 0 : undefined;
  return amount * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
}

/** `value` trimmed, or undefined when it is absent or blank. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A flag or variable `mhl serve` refuses: exit 2 (usage) unless said otherwise. */
export class Refused extends Error {
  readonly exit: 1 | 2;

  constructor(message: string, exit: 1 | 2 = 2) {
    super(message);
    this.exit = exit;
  }
}

/** `text` as a whole number from `min` to `max`, `fallback` when absent; else `refusal`. */
export function wholeNumber(
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
  refusal: string,
): number {
  if (text === undefined) return fallback;
  const value = /^\s*\d{1,16}\s*$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new Refused(refusal);
  return value;
}

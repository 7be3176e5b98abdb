/**
 * Helpers of the configuration's schemas (config.ts, replica-config.ts), which use zod's mini
 * build: every `mhl serve` builds them before it can answer anything, and a mini schema carries
 * no methods of its own, so building them allocates a tenth of what the classic API does
 * (bench/startup-init.mjs: the configuration was 4 ms of a 100-workflow start, most of the
 * young-generation garbage before the first answer). The rest of the code base uses classic zod.
 */
import { z } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

// The mini build loads no locale, and its refusals would read "Invalid input" until something
// loaded classic zod, which configures the same English messages for both.
z.config(en());

/** An optional field with its description. */
export function optional<T extends z.ZodMiniType>(schema: T, description: string) {
  return z.optional(schema).check(z.describe(description));
}

/** A positive whole number, with its description when it has one. */
export function positiveInt(description?: string) {
  const int = z.int().check(z.positive());
  return description === undefined ? int : int.check(z.describe(description));
}

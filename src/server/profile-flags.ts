/**
 * The flags that belong to one profile: which are refused with which profile, and the values
 * they add to the configuration. `config.ts` asks here once, so a profile's flags live beside
 * each other instead of spread through the general configuration.
 */
import { resolve } from 'node:path';

/** The flags a profile's checks read. */
export interface ProfileFlagInput {
  readonly migrationTarget?: string;
  readonly workflowsPack?: string;
}

export type ProfileFlagResult =
  | { readonly ok: true; readonly values: { readonly migrationTarget?: string } }
  | { readonly ok: false; readonly problem: string };

/** Refuses a flag its profile does not take; else the configuration values the flags add. */
export function profileFlags(flags: ProfileFlagInput, profile: string): ProfileFlagResult {
  const engine = profile === 'workflow-engine';
  if (flags.migrationTarget !== undefined && !engine) {
    return {
      ok: false,
      problem: '--migration-target is only valid with --profile workflow-engine',
    };
  }
  if (flags.workflowsPack !== undefined && engine) {
    return { ok: false, problem: '--workflows-pack is not valid with --profile workflow-engine' };
  }
  const target = flags.migrationTarget;
  return { ok: true, values: target === undefined ? {} : { migrationTarget: resolve(target) } };
}

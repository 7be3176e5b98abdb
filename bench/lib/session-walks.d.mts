// Types of session-walks.mjs.
import type { WalkOptions } from './session-walker.mjs';
export const WALKS: { name: string; workflow: string; options: WalkOptions }[];
export const REFERENCE_WALKS: { name: string; workflow: string; options: WalkOptions }[];
export const PROBE_WALKS: { name: string; workflow: string; options: WalkOptions }[];
export function keptOnPurpose(call: { name: string; args: Record<string, unknown> }): string | undefined;

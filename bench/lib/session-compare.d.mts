// Types of session-compare.mjs.
import type { ToolCallResult, Walk, WalkedCall } from './session-walker.mjs';
export function normaliseText(text: string, indexes: string[], folders: string[]): string;
export function resultParts(name: string, result: ToolCallResult, indexes: string[], folders: string[]): Record<string, unknown>;
export function compareWalks(
  a: Walk,
  b: Walk,
  folders: string[],
  kept?: (call: WalkedCall) => string | undefined,
): { tool: string; call: number; part: string; mhl: unknown; public: unknown; kept?: string }[];

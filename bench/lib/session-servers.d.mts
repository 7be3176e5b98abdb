// Types of session-servers.mjs.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallTool } from './session-walker.mjs';
export interface Connected {
  client: Client;
  call: CallTool;
  close(): Promise<void>;
}
export function connect(command: string, args: string[], env: Record<string, string>): Promise<Connected>;
export function startMhl(mhlBin: string, root: string, dir: string, extraEnv?: Record<string, string>): Promise<Connected>;
export function startPublic(entry: string, root: string, dir: string): Promise<Connected>;

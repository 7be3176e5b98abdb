/**
 * Starting the two activity-session servers the comparison and the benchmark drive, each as a
 * child process on stdio with the official MCP SDK client: mhl (`dist/bin/mhl.js serve mcp
 * --profile sessions`) and the public workflow-server built by scripts/build-workflow-server.mjs.
 * Each gets its own workspace and key directory under `dir` (the public server its own HOME too);
 * neither inherits secrets.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const BASE_ENV = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  NODE_ENV: 'production',
};

/** Connects an SDK client to a stdio server; resolves to `{client, call, close}`. */
export async function connect(command, args, env) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...BASE_ENV, ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'session-walker', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    call: (name, args) => client.callTool({ name, arguments: args }),
    close: () => client.close(),
  };
}

/** mhl with the sessions profile over `root`, planning under `dir/mhl/ws`. */
export function startMhl(mhlBin, root, dir, extraEnv = {}) {
  const ws = join(dir, 'mhl', 'ws');
  mkdirSync(ws, { recursive: true });
  return connect(
    process.execPath,
    [mhlBin, 'serve', 'mcp', '--profile', 'sessions', '--cwd', ws, root],
    {
      WORKFLOW_SERVER_KEY_DIR: join(dir, 'mhl', 'key'),
      MHL_SESSIONS_MIN_RESPONSE_SECONDS: '0',
      MHL_LOG_LEVEL: 'warn',
      ...extraEnv,
    },
  );
}

/** The public workflow-server (built entry `entry`) over `root`, planning under `dir/public/ws`. */
export function startPublic(entry, root, dir) {
  const ws = join(dir, 'public', 'ws');
  mkdirSync(ws, { recursive: true });
  // Its own HOME: a promoted transient session with a repo lands under
  // ~/.local/share/workflow-server/projects, which must not be the real one.
  const home = join(dir, 'public', 'home');
  mkdirSync(home, { recursive: true });
  return connect(process.execPath, [entry], {
    HOME: home,
    WORKFLOW_DIR: root,
    WORKFLOW_WORKSPACE: ws,
    WORKFLOW_SERVER_KEY_DIR: join(dir, 'public', 'key'),
    WS_MIN_RESPONSE_SECONDS: '0',
  });
}

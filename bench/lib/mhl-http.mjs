// What the soak and the abuse runs share: `mhl serve mcp --http` as a child process (started as a
// user would, on port 0, its port read from the "listening on" line) and raw JSON-RPC over
// node:http, stateless (2026-07-28) or in a legacy session. Build first: the default CLI is dist/.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/bin/mhl.js', import.meta.url));
export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** Starts `mhl serve mcp FOLDER --http --port 0 ARGS`; resolves once it listens. */
export async function startMhl({ cli = CLI, folder, args = [], env = {} }) {
  const child = spawn(
    process.execPath,
    [cli, 'serve', 'mcp', folder, '--http', '--port', '0', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MHL_LOG_LEVEL: 'warn', ...env } },
  );
  let stderr = '';
  const closed = new Promise((done) => child.once('close', done));
  const port = await new Promise((done, fail) => {
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      const found = /listening on http:\/\/[^\s]+:(\d+)/.exec(stderr);
      if (found) done(Number(found[1]));
    });
    void closed.then(() => fail(new Error(`server exited:\n${stderr}`)));
  });
  // However the caller ends (a thrown error included), the server does not outlive it.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    port,
    pid: child.pid,
    stderr: () => stderr,
    /** SIGTERM, then the exit status. */
    stop: async () => {
      process.off('exit', kill);
      child.kill('SIGTERM');
      return closed;
    },
  };
}

/** The resident set of process `pid`, in bytes, from /proc. */
export function rssBytes(pid) {
  const found = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(found?.[1] ?? Number.NaN) * 1024;
}

export function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A JSON-RPC client of one server: `post` sends a raw body, `modern` a stateless request. */
export function client({ port, token, userHeader = 'x-user', localAddress }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64, localAddress });
  let nextId = 1;

  /** Any request; resolves with status, headers and text. */
  function send({ method = 'POST', path = '/mcp', headers = {}, body, user }) {
    return new Promise((done, fail) => {
      const req = request(
        {
          agent,
          port,
          host: '127.0.0.1',
          method,
          path,
          headers: {
            ...(body !== undefined
              ? {
                  'content-type': 'application/json',
                  accept: 'application/json, text/event-stream',
                }
              : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(user ? { [userHeader]: user } : {}),
            ...headers,
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d) => {
            text += d;
          });
          res.on('end', () => done({ status: res.statusCode, headers: res.headers, text }));
        },
      );
      req.on('error', fail);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  return {
    agent,
    send,
    id: () => nextId++,
    /** A stateless call; resolves with the reply and its parsed body. */
    async modern(method, params, { user } = {}) {
      const id = nextId++;
      const reply = await send({
        body: { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } },
        headers: { 'mcp-protocol-version': MODERN, 'mcp-method': method },
        user,
      });
      return { ...reply, id, json: parse(reply.text) };
    },
    /** Opens a legacy session; resolves with a caller of requests in it, or the refusal. */
    async session({ user } = {}) {
      const init = await send({
        body: {
          jsonrpc: '2.0',
          id: nextId++,
          method: 'initialize',
          params: {
            protocolVersion: LEGACY,
            capabilities: {},
            clientInfo: { name: 'bench', version: '1' },
          },
        },
        user,
      });
      const sessionId = init.headers['mcp-session-id'];
      if (init.status !== 200 || !sessionId) return { refused: init };
      const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY };
      await send({ body: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers, user });
      return {
        id: sessionId,
        async call(method, params = {}) {
          const id = nextId++;
          const reply = await send({ body: { jsonrpc: '2.0', id, method, params }, headers, user });
          return { ...reply, id, json: parse(reply.text) };
        },
        end: () => send({ method: 'DELETE', headers, user }),
      };
    },
    close: () => agent.destroy(),
  };
}

// What the run and A2A benchmarks share: a folder with the 10-step no-op workflow `Noop`, the
// built `mhl serve mcp --http` on it as a child process (port 0, its port read from the
// "listening on" line), and one stateless (2026-07-28) JSON-RPC call on a fresh connection.
// Build first: this runs dist/.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/bin/mhl.js', import.meta.url));
export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** Writes `noop.mh` (pipeline `Noop`: ten steps that each add one) into `folder`. */
export function writeNoop(folder) {
  const steps = Array.from({ length: 10 }, (_, i) => `  step S${i} { n += 1 }`).join('\n');
  writeFileSync(join(folder, 'noop.mh'), `pipeline Noop {\n  var n = 0\n${steps}\n}\n`);
}

/**
 * Starts `mhl serve mcp FOLDER --http --port 0 ARGS` (logs at warn, `env` on top of ours);
 * `spawned` sees the child at once, before it listens. Resolves `{ child, port }`; rejects with
 * its stderr if it exits first.
 */
export function serveHttp(folder, args = [], env = {}, spawned = () => {}) {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', 'mcp', folder, '--http', '--port', '0', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MHL_LOG_LEVEL: 'warn', ...env } },
  );
  spawned(child);
  return new Promise((done, fail) => {
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
      const m = /listening on http:\/\/[^\s]+:(\d+)/.exec(err);
      if (m) done({ child, port: Number(m[1]) });
    });
    child.on('close', () => fail(new Error(err)));
  });
}

/** One stateless MCP request to `/mcp`; resolves its result, rejects with the text of an error. */
export function call(port, method, params) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { ...params, _meta: META },
  });
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        headers: {
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          const reply = JSON.parse(text);
          if (reply.error) fail(new Error(text));
          else done(reply.result);
        });
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

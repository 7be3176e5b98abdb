// A2A tasks over HTTP: how many blocking SendMessage tasks (A2A 1.0) of a 10-step no-op
// workflow complete per second on one `mhl serve mcp --http` server, side by side with the
// same workflow as async runs started with run/start and polled with run/status until done, so
// the cost of A2A's wait-for-change (no polling) shows. One JSON line per figure. Build first:
// this runs dist/.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { META, serveHttp, writeNoop } from './lib/noop-server.mjs';

const TASKS = 300;
const CONCURRENCY = 16;
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

const folder = mkdtempSync(join(tmpdir(), 'mhl-bench-a2a-'));
writeNoop(folder);

function post(port, path, headers, message) {
  const body = JSON.stringify(message);
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => {
          text += d;
        });
        res.on('end', () => done(JSON.parse(text)));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function a2aTask(port) {
  const answer = await post(
    port,
    '/a2a',
    { 'a2a-version': '1.0' },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } },
    },
  );
  if (answer.result?.task?.status?.state !== 'TASK_STATE_COMPLETED')
    throw new Error(JSON.stringify(answer));
}

async function polledRun(port) {
  const call = (method, params) =>
    post(
      port,
      '/mcp',
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method },
      { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } },
    );
  const started = await call('run/start', { name: 'Noop', arguments: {} });
  let view = started.result;
  if (view === undefined) throw new Error(JSON.stringify(started));
  while (view.state !== 'completed') {
    if (view.state === 'failed' || view.state === 'canceled') throw new Error(view.error);
    view = (await call('run/status', { runId: view.runId })).result;
  }
}

async function rate(port, one) {
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < TASKS) await one(port);
    }),
  );
  return TASKS / ((performance.now() - began) / 1000);
}

const { child, port } = await serveHttp(folder);
try {
  await rate(port, a2aTask);
  for (const [name, one] of [
    ['a2a_blocking_send', a2aTask],
    ['mcp_run_start_and_poll', polledRun],
  ]) {
    const perSecond = await rate(port, one);
    console.log(
      JSON.stringify({
        bench: 'a2a',
        figure: `${name}_per_s`,
        value: Math.round(perSecond),
        tasks: TASKS,
        concurrency: CONCURRENCY,
      }),
    );
  }
} finally {
  child.kill('SIGTERM');
  agent.destroy();
  rmSync(folder, { recursive: true, force: true });
}

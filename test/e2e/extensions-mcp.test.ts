/**
 * `extension mcp` end to end: the built CLI runs test/fixtures/extensions/mcp-calls.mh, whose
 * workflows call `mhl serve mcp` itself (over stdio, a fresh server per call, and over
 * Streamable HTTP behind a bearer token) and the MCP SDK v2 reference server, in each protocol
 * setting: the `initialize` handshake (a 2025 pin), 2026-07-28, and `auto`. Real processes, real
 * pipes and sockets; the run's JSON result is the only thing asserted on, plus, for a step
 * timeout, that the server's whole process group is gone.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { type RunResult, runPipeline } from '../helpers/extension-run.js';
import { HttpServer } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FILE = 'test/fixtures/extensions/mcp-calls.mh';
const SERVED = 'test/fixtures/extensions/served';
const TOKEN = 'mcp-extension-test-token-0123456789';
const STATE = tempDir('mhl-ext-mcp-');

function run(
  pipeline: string,
  env: Record<string, string>,
  inputs: Record<string, string> = {},
): ReturnType<typeof runPipeline> {
  return runPipeline({ file: FILE, state: STATE, pipeline }, env, inputs);
}

/** What each `protocol` setting must negotiate with a server that speaks both eras. */
const PROTOCOLS: readonly [string, string][] = [
  ['2025-11-25', '2025-11-25'],
  ['2025-06-18', '2025-06-18'],
  ['2026-07-28', '2026-07-28'],
  ['auto', '2026-07-28'],
];

describe('extension mcp calling mhl serve mcp over stdio', () => {
  for (const [protocol, negotiated] of PROTOCOLS) {
    it(`calls a workflow as a tool with protocol "${protocol}"`, async () => {
      const { exit, result } = await run(
        'CallServed',
        { MCP_PROTOCOL: protocol },
        { via: 'stdio' },
      );
      assert.equal(exit, 0, JSON.stringify(result));
      assert.deepEqual(result.vars?.['greeting'], { greeting: 'hello ann', length: 9 });
      assert.equal(result.vars?.['protocol'], negotiated);
      assert.ok((result.vars?.['tools'] as string[] | undefined)?.includes('Greet'));
    });
  }

  it("surfaces a failing tool as the workflow's EXTENSION error, with the remote message", async () => {
    const { exit, result } = await run('RefuseServed', { MCP_PROTOCOL: 'auto' }, { via: 'stdio' });
    assert.equal(exit, 1);
    assert.equal(result.code, 'EXTENSION');
    assert.equal(result.kind, 'step_failed');
    // The remote workflow's own message (and the mhl server's diagnostic code) come through.
    assert.match(result.error ?? '', /refused: because/);
    assert.match(result.error ?? '', /WORKFLOW_FAILED/);
    assert.equal(result.line, 49);
  });
});

describe('extension mcp calling mhl serve mcp over HTTP', () => {
  const server = new HttpServer(SERVED, ['--token', TOKEN], { MHL_LOG_LEVEL: 'info' });
  after(() => server.stop());
  const env = async (protocol: string): Promise<Record<string, string>> => ({
    MCP_PROTOCOL: protocol,
    MCP_URL: `http://127.0.0.1:${await server.ready}/mcp`,
    MCP_BEARER: TOKEN,
  });

  for (const [protocol, negotiated] of PROTOCOLS) {
    it(`calls a workflow as a tool with protocol "${protocol}", the token redacted`, async () => {
      const { exit, result, stdout, stderr } = await run('CallServed', await env(protocol), {
        via: 'http',
      });
      assert.equal(exit, 0, JSON.stringify(result));
      assert.deepEqual(result.vars?.['greeting'], { greeting: 'hello ann', length: 9 });
      assert.equal(result.vars?.['protocol'], negotiated);
      // MCP_BEARER's name says nothing about secrets; it is redacted because a header read it.
      assert.ok(result.log?.some((line) => line.includes('[REDACTED]')));
      assert.ok(!stdout.includes(TOKEN) && !stderr.includes(TOKEN));
    });
  }

  it('surfaces a failing tool with the remote message', async () => {
    const { result } = await run('RefuseServed', await env('auto'), { via: 'http' });
    assert.equal(result.code, 'EXTENSION');
    assert.match(result.error ?? '', /refused: because/);
  });

  it('fails closed when a header reads an unset variable, naming the declaration', async () => {
    const { exit, result } = await run(
      'CallServed',
      { ...(await env('auto')), MCP_BEARER: '' },
      { via: 'http' },
    );
    assert.equal(exit, 1);
    assert.equal(result.code, 'EXTENSION');
    // The position is the headers property of `extension mcp Http`.
    assert.equal(result.line, 16);
  });

  it('reports a rejected token as an EXTENSION error', async () => {
    const { result } = await run(
      'CallServed',
      { ...(await env('2025-11-25')), MCP_BEARER: 'not-the-token' },
      { via: 'http' },
    );
    assert.equal(result.code, 'EXTENSION');
    assert.ok(!(result.error ?? '').includes('not-the-token'));
  });
});

describe('extension mcp servers that cannot be reached or misbehave', () => {
  for (const [pipeline, what] of [
    ['CallFlood', 'floods stdout past the message cap'],
    ['CallGarbage', 'prints what is not JSON-RPC and exits'],
  ] as const)
    it(`fails the call with EXTENSION when the server ${what}`, async () => {
      const { exit, result } = await run(pipeline, { MCP_PROTOCOL: 'auto' });
      assert.equal(exit, 1);
      assert.equal(result.code, 'EXTENSION');
    });

  it('reports a stdio command that does not exist', async () => {
    const { exit, result } = await run('CallMissing', { MCP_PROTOCOL: 'auto' });
    assert.equal(exit, 1);
    assert.equal(result.code, 'EXTENSION');
    assert.match(result.error ?? '', /command not found/);
  });

  it('reports a refused HTTP connection', async () => {
    const port = await new Promise<number>((done) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => done(port));
      });
    });
    const { result } = await run(
      'CallServed',
      { MCP_PROTOCOL: 'auto', MCP_URL: `http://127.0.0.1:${port}/mcp`, MCP_BEARER: TOKEN },
      { via: 'http' },
    );
    assert.equal(result.code, 'EXTENSION');
    assert.match(result.error ?? '', /ECONNREFUSED/);
  });
});

describe('extension mcp calling the MCP SDK v2 reference server', () => {
  for (const [protocol, era] of [
    ['auto', 'modern'],
    ['2026-07-28', 'modern'],
    ['2025-06-18', 'legacy'],
  ] as const) {
    it(`decodes structured and text results with protocol "${protocol}"`, async () => {
      const { exit, result } = await run('CallReference', {
        MCP_PROTOCOL: protocol,
        MHL_TEST_SECRET_TOKEN: 'never-passed-to-children',
      });
      assert.equal(exit, 0, JSON.stringify(result));
      assert.equal(result.vars?.['sum'], 5);
      assert.equal(result.vars?.['shout'], 'HI');
      assert.equal(result.vars?.['era'], era);
      // The server got the explicit child environment, not the run's.
      const names = result.vars?.['names'] as string[];
      assert.ok(names.includes('PATH'));
      assert.ok(!names.includes('MHL_TEST_SECRET_TOKEN'));
    });
  }

  it('surfaces a thrown tool error with the remote message', async () => {
    const { exit, result } = await run('ExplodeReference', { MCP_PROTOCOL: 'auto' });
    assert.equal(exit, 1);
    assert.equal(result.code, 'EXTENSION');
    assert.match(result.error ?? '', /kaboom from the reference server/);
  });

  it("kills the server's whole process group when the step times out", async () => {
    const pidFile = join(tempDir('mhl-ext-hang-'), 'pids.json');
    const { exit, result } = await run(
      'HangReference',
      { MCP_PROTOCOL: 'auto' },
      { pid_file: pidFile },
    );
    assert.equal(exit, 1);
    assert.equal(result.code, 'STEP_TIMEOUT');
    const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as {
      server: number;
      grandchild: number;
    };
    // By the time the run has reported, the group (server and grandchild) has been killed.
    assert.deepEqual(liveGroupMembers(pids.server), []);
    assert.ok(!isLive(pids.grandchild));
  });

  it("kills the server's whole process group when the run is cancelled", async () => {
    const pidFile = join(tempDir('mhl-ext-cancel-'), 'pids.json');
    const args = [CLI, 'run', FILE, '--pipeline', 'HangUntilCancelled', '--format', 'json'];
    const child = spawn(
      process.execPath,
      [...args, '--state-dir', STATE, '--input', `pid_file=${pidFile}`],
      { cwd: REPO_ROOT, env: { ...process.env, MCP_PROTOCOL: 'auto' } },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const pids = await until(() => readPids(pidFile), {
      what: 'the hang tool to start',
      timeoutMs: 20_000,
    });
    child.kill('SIGINT');
    assert.equal(await exited, 1);
    assert.equal((JSON.parse(stdout) as RunResult).kind, 'canceled');
    assert.deepEqual(liveGroupMembers(pids.server), []);
    assert.ok(!isLive(pids.grandchild));
  });
});

/** The pids the reference server's `hang` tool wrote, once it has. */
function readPids(file: string): { server: number; grandchild: number } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { server: number; grandchild: number };
  } catch {
    return undefined; // not written (or not completely) yet
  }
}

/** `/proc/<pid>/stat`'s state and process group; undefined once the process is gone. */
function procStat(pid: number | string): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, , pgrp] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state ?? '', pgrp: Number(pgrp) };
  } catch {
    return undefined; // gone
  }
}

/**
 * Whether a process still runs. A killed process whose parent is gone may stay a zombie (`Z`)
 * when the machine's init does not reap: it is dead, only not yet reaped.
 */
function isLive(pid: number | string): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** The pids of every live process in process group `pgid`. */
function liveGroupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => procStat(name)?.pgrp === pgid && isLive(name))
    .map(Number);
}

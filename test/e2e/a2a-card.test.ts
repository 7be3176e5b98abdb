/**
 * The Agent Card's URLs: built from the request's `Host` (and then never cached, varying by
 * `Host`), or from `--public-url` / `MHL_SERVE_PUBLIC_URL` when set, which is checked at
 * start-up (http or https, no query, fragment or credentials) and whose host counts as the
 * server's own origin on a wildcard bind.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { a2aStarter } from '../helpers/a2a.js';
import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { modern, send, serverStarter } from '../helpers/http-server.js';

const EXAMPLES = resolve(REPO_ROOT, 'examples');
const start = a2aStarter();
const startMcp = serverStarter(EXAMPLES);

type Card = { url: string; supportedInterfaces: { url: string }[] };
const urlsOf = (card: Card) => [card.url, ...card.supportedInterfaces.map((i) => i.url)];
const cardOf = (port: number, headers: Record<string, string> = {}) =>
  send(port, { method: 'GET', path: '/.well-known/agent-card.json', headers });

describe('the Agent Card URLs', () => {
  it('come from the Host, and the card is then neither cached nor shared across hosts', async () => {
    const server = start(EXAMPLES);
    const port = await server.ready;
    const reply = await cardOf(port, { host: `localhost:${port}` });
    assert.equal(reply.status, 200);
    for (const url of urlsOf(reply.json() as unknown as Card)) {
      assert.equal(url, `http://localhost:${port}/`);
    }
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.equal(reply.headers['vary'], 'Host');
  });

  it('come from --public-url or MHL_SERVE_PUBLIC_URL when set, whatever the Host', async () => {
    const flag = start(EXAMPLES, ['--public-url', 'https://agents.example.org/mhl/']);
    const env = startMcp([], { MHL_SERVE_PUBLIC_URL: 'http://10.9.8.7:8080' });
    const [flagPort, envPort] = await Promise.all([flag.ready, env.ready]);
    const byFlag = (await cardOf(flagPort)).json() as unknown as Card;
    for (const url of urlsOf(byFlag)) assert.equal(url, 'https://agents.example.org/mhl/');
    const byEnv = (await cardOf(envPort)).json() as unknown as Card;
    for (const url of urlsOf(byEnv)) assert.equal(url, 'http://10.9.8.7:8080/a2a');
  });

  for (const bad of [
    'ftp://agents.example.org',
    'https://agents.example.org/?x=1',
    'https://agents.example.org/?',
    'https://agents.example.org/#top',
    'https://user:pw@agents.example.org',
    'agents.example.org',
    '/relative',
  ]) {
    it(`refuse ${JSON.stringify(bad)} at start-up`, async () => {
      const flag = await runCli(['serve', 'a2a', EXAMPLES, '--port', '0', '--public-url', bad]);
      assert.equal(flag.code, 2, flag.stderr);
      assert.match(flag.stderr, /--public-url/);
      const env = await runCli(['serve', 'mcp', '--http', EXAMPLES, '--port', '0'], {
        env: { MHL_SERVE_PUBLIC_URL: bad },
      });
      assert.equal(env.code, 2, env.stderr);
    });
  }

  it('make its host the server’s own origin on a wildcard bind, and only its host', async () => {
    const server = startMcp(['--addr', '0.0.0.0', '--public-url', 'https://mhl.example.org']);
    const port = await server.ready;
    const cancel = (host: string, origin: string) =>
      modern(port, 'run/cancel', { runId: 'f'.repeat(32) }, { host, origin });
    const own = await cancel('mhl.example.org', 'https://mhl.example.org');
    assert.notEqual(own.status, 403, own.text);
    assert.equal((own.json()['error'] as { code?: number } | undefined)?.code, -32602);
    const other = await cancel('evil.example', 'https://evil.example');
    assert.equal(other.status, 403);
  });
});

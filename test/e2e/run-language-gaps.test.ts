/**
 * `mhl run` end to end on the constructs issue 17 added to the runtime: a router in front of
 * fake agent CLIs, the html natives over a saved page, and an https call to a local server whose
 * certificates (a self-signed CA, a server and a client certificate) the test makes with openssl.
 */
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { makeCerts, startTlsServer } from '../helpers/tls.js';

const FIXTURES = resolve(REPO_ROOT, 'test/fixtures/run');
const FAKE = join(REPO_ROOT, 'test/fixtures/bin/fake-agent.mjs');

interface Outcome {
  ok: boolean;
  vars: Record<string, unknown>;
  log: string[];
  error?: string;
}

async function run(args: string[], cwd: string, env?: Record<string, string>): Promise<Outcome> {
  const r = await runCli(['run', '--format', 'json', ...args], { cwd, ...(env ? { env } : {}) });
  const out = JSON.parse(r.stdout) as Outcome;
  assert.equal(r.code, 0, out.error ?? r.stderr);
  return out;
}

describe('mhl run on routers, html and https with a private CA', () => {
  it('routes through select, then through the decider agent', async () => {
    const out = await run(
      [
        join(FIXTURES, 'router/router.mh'),
        '--input',
        'question=[reply-for:judge={"agent": "Writer"}] a poem please',
      ],
      tempDir(),
      { FAKE_AGENT: FAKE },
    );
    assert.equal(out.vars['routed'], 'coder answer: fix this code');
    assert.match(String(out.vars['decided']), /^writer answer: /);
  });

  it('reads a saved page with the html natives', async () => {
    const out = await run(
      [join(FIXTURES, 'html/html.mh'), '--input', `page=${join(FIXTURES, 'html/page.html')}`],
      tempDir(),
    );
    const { doc: _doc, page: _page, ...vars } = out.vars;
    assert.deepEqual(vars, {
      title: 'Release notes & downloads',
      versions: ['2.1.0', '2.0.0'],
      tarballs: [
        'https://example.test/dl/mhl-2.1.0.tar.gz',
        'https://example.test/dl/mhl-2.0.0.tar.gz',
      ],
      first_notes: 'Adds routers and the html natives.',
      nav: '<a href="/docs" class="current nav">Docs</a>',
      logo: 'logo',
    });
    assert.deepEqual(out.log, ['2 releases, 2 tarballs']);
  });

  it('calls an https server signed by a private CA, presenting a client certificate', async () => {
    const certs = makeCerts(tempDir());
    const { server, port } = await startTlsServer(certs);
    try {
      const cwd = tempDir();
      for (const f of ['ca.pem', 'client.pem', 'client.key'])
        copyFileSync(join(certs.dir, f), join(cwd, f));
      const out = await run(
        [join(FIXTURES, 'http-tls.mh'), '--input', `url=https://localhost:${port}/status`],
        cwd,
      );
      assert.deepEqual(out.vars['answer'], {
        path: '/status',
        authorized: true,
        client: 'mhl-client',
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

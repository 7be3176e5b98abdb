/**
 * The runs page's routes on the wire, without a browser: headers (the content security policy,
 * no sniffing, no caching of run data), refusals (verbs, malformed and hostile page numbers,
 * the Host and Origin guards, the token on the stream), the markup (no inline script, style or
 * handler; hostile workflow text escaped), the stream's cap, and a shutdown an open stream
 * does not hold up.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'parse5';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { call, exchange, modern, send, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/ui');
const TOKEN = 'ui-http-token-0b7e';
const start = serverStarter(FOLDER);

const get = (port: number, path: string, headers: Record<string, string> = {}) =>
  send(port, { method: 'GET', path, headers });

/** One live stream from `localAddress`, open once its head arrived; `close` drops it. */
function openStream(
  port: number,
  localAddress: string,
): Promise<{ status: number; retryAfter: unknown; close(): void }> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/ui/events', localAddress, agent: false },
      (res) => {
        res.resume();
        const retryAfter = res.headers['retry-after'];
        done({ status: res.statusCode ?? 0, retryAfter, close: () => req.destroy() });
      },
    );
    req.on('error', fail);
    req.end();
  });
}

/** Every element of a parsed document, depth first. */
interface Node {
  nodeName: string;
  attrs?: { name: string; value: string }[];
  childNodes?: Node[];
}
function elements(node: Node, out: Node[] = []): Node[] {
  if (node.attrs !== undefined) out.push(node);
  for (const child of node.childNodes ?? []) elements(child, out);
  return out;
}

interface Event {
  readonly name: string;
  readonly data: string;
}

/** Reads a stream until `count` events arrived (or it ended); resolves to their names and data. */
function events(
  port: number,
  path: string,
  headers: Record<string, string>,
  count: number | ((event: Event) => boolean),
  onEvent: (event: Event) => void = () => {},
): Promise<{ status: number; list: Event[] }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let buffer = '';
      const list: { name: string; data: string }[] = [];
      const finish = () => {
        req.destroy();
        done({ status: res.statusCode ?? 0, list });
      };
      res.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        for (; end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(block)?.[1] ?? '';
          if (block.startsWith(':')) continue;
          const event = { name, data };
          list.push(event);
          onEvent(event);
          if (typeof count === 'number' ? list.length >= count : count(event)) return finish();
        }
      });
      res.on('end', finish);
    });
    req.on('error', fail);
    req.end();
  });
}

describe('the runs page routes', () => {
  it('answer with the security headers, and markup with no inline script, style or handler', async () => {
    const server = start();
    const port = await server.ready;
    const runId = (await call(port, 'run/start', { name: 'Breaks', arguments: {} }))[
      'runId'
    ] as string;
    const page = await get(port, '/ui');
    assert.equal(page.status, 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.equal(page.headers['access-control-allow-origin'], undefined);
    assert.ok(page.text.includes(runId));
    for (const element of elements(parse(page.text) as unknown as Node)) {
      const attrs = element.attrs ?? [];
      if (element.nodeName === 'script') {
        assert.deepEqual(
          attrs.map((a) => a.name).sort(),
          ['defer', 'src'],
          'scripts are external only',
        );
      }
      assert.notEqual(element.nodeName, 'style');
      for (const attr of attrs) {
        assert.doesNotMatch(attr.name, /^on|^style$/, `${element.nodeName} has ${attr.name}`);
      }
    }
    // The failed run's message holds a script tag: escaped, it is text in a <p>.
    assert.ok(page.text.includes('broke: &lt;script&gt;window.pwned = 4&lt;/script&gt;'));
    const script = await get(port, '/ui/app.js');
    assert.equal(script.status, 200);
    assert.match(script.headers['content-type'] ?? '', /^text\/javascript/);
    const css = await get(port, '/ui/app.css');
    assert.match(css.headers['content-type'] ?? '', /^text\/css/);
    const head = await send(port, { method: 'HEAD', path: '/ui' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  it('refuses other verbs, malformed page numbers, foreign hosts and origins', async () => {
    const server = start();
    const port = await server.ready;
    const post = await send(port, { method: 'POST', path: '/ui', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers['allow'], 'GET, HEAD');
    assert.equal(
      (await send(port, { method: 'POST', path: '/ui/events', body: '{}' })).status,
      405,
    );
    for (const bad of ['abc', '0', '-1', '1e3', '1.5', '%3Cscript%3E', '9'.repeat(40), '']) {
      const reply = await get(port, `/ui?page=${bad}`);
      assert.equal(reply.status, 400, `page=${bad}`);
      assert.equal((await get(port, `/ui/events?page=${bad}`)).status, 400, `events page=${bad}`);
    }
    const far = await get(port, '/ui?page=999999');
    assert.equal(far.status, 200);
    assert.ok(far.text.includes('page 1 of 1'), 'a page past the end shows the last one');
    assert.equal((await get(port, '/ui', { host: 'evil.example' })).status, 403);
    assert.equal((await get(port, '/ui', { origin: 'https://evil.example' })).status, 403);
    assert.equal((await get(port, '/ui/events', { origin: 'null' })).status, 403);
    assert.equal((await get(port, '/ui/nothing')).status, 404);
  });

  it("on a wildcard bind, takes the page's own same-origin POST, never a rebound name's", async () => {
    const server = start(['--addr', '0.0.0.0']);
    const port = await server.ready;
    // What the page's Cancel sends when it was loaded from http://10.1.2.3:PORT/ui.
    const cancel = (host: string, origin: string) =>
      modern(port, 'run/cancel', { runId: 'f'.repeat(32) }, { host, origin });
    const own = await cancel(`10.1.2.3:${port}`, `http://10.1.2.3:${port}`);
    // Past the guards: answered as an unknown run (-32602), not refused (403).
    assert.notEqual(own.status, 403, own.text);
    assert.equal((own.json()['error'] as { code?: number } | undefined)?.code, -32602, own.text);
    const page = await get(port, '/ui', {
      host: `10.1.2.3:${port}`,
      origin: `http://10.1.2.3:${port}`,
    });
    assert.equal(page.status, 200);
    // DNS rebinding: the attacker's name is both the Host and the Origin.
    const rebound = await cancel(`evil.example:${port}`, `http://evil.example:${port}`);
    assert.equal(rebound.status, 403);
    assert.equal((await cancel(`10.1.2.3:${port}`, `http://10.1.2.4:${port}`)).status, 403);
    assert.equal((await cancel(`10.1.2.3:${port}`, 'http://10.1.2.3:1')).status, 403);
  });

  it('with --token, the page holds no run data and the stream needs the token', async () => {
    const server = start(['--token', TOKEN, '--principal-header', 'x-principal']);
    const port = await server.ready;
    const auth = { authorization: `Bearer ${TOKEN}` };
    const runId = (
      await call(
        port,
        'run/start',
        { name: 'Breaks', arguments: {} },
        { ...auth, 'x-principal': 'ann' },
      )
    )['runId'] as string;
    const page = await get(port, '/ui', { 'x-principal': 'ann' });
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('data-auth="token"'));
    assert.ok(!page.text.includes(runId), 'no run data without the token');
    const none = await get(port, '/ui/events');
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    assert.equal((await get(port, '/ui/events', { authorization: 'Bearer nope' })).status, 401);
    const ann = await events(port, '/ui/events', { ...auth, 'x-principal': 'ann' }, 1);
    assert.equal(ann.status, 200);
    assert.equal(ann.list[0]?.name, 'page');
    assert.ok(ann.list[0]?.data.includes(runId));
    const bob = await events(port, '/ui/events', { ...auth, 'x-principal': 'bob' }, 1);
    assert.ok(!bob.list[0]?.data.includes(runId), 'another principal sees none of ann’s runs');
  });

  it('streams every log line exactly once, as it is logged', async () => {
    const server = start();
    const port = await server.ready;
    const dir = tempDir();
    const lines = 5;
    for (let i = 0; i < lines; i++) {
      assert.equal(spawnSync('mkfifo', [join(dir, `gate${i}`)]).status, 0);
    }
    const runId = (
      await call(port, 'run/start', {
        name: 'Chatty',
        arguments: { dir, lines, context: { cwd: REPO_ROOT } },
      })
    )['runId'] as string;
    const fromHtml = (text: string) =>
      text
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&quot;', '"')
        .replaceAll('&#39;', "'")
        .replaceAll('&amp;', '&');
    const logOf = (html: string) =>
      fromHtml(
        /id="run-[0-9a-f]{32}"[\s\S]*?<pre class="log"[^>]*>([\s\S]*?)<\/pre>/.exec(html)?.[1] ??
          '',
      );
    // What the page shows: a row replaces the log, a log event appends to it. The run logs a
    // line only once the test wrote the one before to the gate, on seeing the last one arrive.
    let shown = '';
    let sent = 0;
    // The next line goes once every line sent so far is shown (in a log event or a row).
    const feed = () => {
      const arrived = shown.match(/got line\d/g)?.length ?? 0;
      if (arrived === sent && sent < lines) {
        void writeFile(join(dir, `gate${sent}`), `line${sent}\n`);
        sent++;
      }
    };
    const logEvents: string[] = [];
    await events(
      port,
      '/ui/events',
      {},
      (event) => event.name === 'row' && event.data.includes('data-state=\\"completed\\"'),
      (event) => {
        const value = JSON.parse(event.data) as { html?: string; runId?: string; text?: string };
        if (event.name === 'page') {
          shown = logOf(value.html ?? '');
          feed();
        } else if (event.name === 'row') {
          const next = logOf(value.html ?? '');
          assert.ok(next.startsWith(shown), `a row continues what was shown: ${next} / ${shown}`);
          shown = next;
          feed();
        } else if (event.name === 'log') {
          assert.equal(value.runId, runId);
          shown += value.text;
          logEvents.push(value.text ?? '');
          feed();
        }
      },
    );
    const full = (await call(port, 'run/logs', { runId }))['text'] as string;
    assert.equal(shown, full);
    assert.match(full, /got line4 <&> "q"\ndone\n$/);
    // Between the first line and the last, nothing but the log changes: each of those lines
    // arrives alone, once (the first and the last may share a row with a step change).
    for (let i = 1; i < lines - 1; i++)
      assert.ok(logEvents.includes(`got line${i} <&> "q"\n`), `line${i} in ${logEvents}`);
  });

  it('caps the live streams per client, inside the server-wide cap', async () => {
    const server = start();
    const port = await server.ready;
    const mine = await Promise.all(Array.from({ length: 8 }, () => openStream(port, '127.0.0.1')));
    assert.deepEqual(
      mine.map((o) => o.status),
      Array(8).fill(200),
    );
    const ninth = await openStream(port, '127.0.0.1');
    ninth.close();
    assert.equal(ninth.status, 503);
    assert.equal(ninth.retryAfter, '5');
    // Another client is not locked out by the first.
    const other = await openStream(port, '127.0.0.2');
    assert.equal(other.status, 200);
    // A stream that ends gives its client's place back (once the server saw it close).
    mine[0]?.close();
    const again = await until(
      async () => {
        const o = await openStream(port, '127.0.0.1');
        if (o.status === 200) return o;
        o.close();
        return undefined;
      },
      { what: 'the freed place' },
    );
    for (const o of [...mine, other, again]) o.close();
  });

  it('caps the live streams and ends them at shutdown', async () => {
    const server = start();
    const port = await server.ready;
    // Eight clients of eight streams each: the server-wide cap, not one client's.
    const open = Array.from({ length: 64 }, (_, i) =>
      exchange(port, { method: 'GET', path: '/ui/events', localAddress: `127.0.0.${1 + (i % 8)}` }),
    );
    const heads = await Promise.all(open.map((o) => o.head));
    assert.ok(heads.every((h) => h.status === 200));
    const refused = await send(port, {
      method: 'GET',
      path: '/ui/events',
      localAddress: '127.0.0.9',
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '5');
    // SIGTERM with 64 streams open: the server ends them and exits 0, within its budget.
    const code = await server.stop('SIGTERM');
    assert.equal(code, 0, server.stderr);
    await Promise.all(open.map((o) => o.reply));
  });
});

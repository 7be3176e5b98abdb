/** `http` against a real loopback server (node:http on 127.0.0.1, an ephemeral port). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  DurationValue,
  isObject,
  newObject,
  type Value,
} from '../../../../src/runtime/interpreter/values.js';
import { HTTP_NAMESPACE } from '../../../../src/runtime/natives/http.js';
import { REDACTED } from '../../../../src/runtime/services/redact.js';
import { call, isNativeError, type TestContext, tempDir, testContext } from './native-context.js';

/** What the server saw of the last request to `/echo`, sent back as JSON. */
async function echo(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const seen = {
    method: req.method,
    url: req.url,
    headers: req.headers,
    body: Buffer.concat(chunks).toString(),
  };
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-served-by': 'test' });
  res.end(JSON.stringify(seen));
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/echo') {
    echo(req, res).catch(() => res.destroy());
  } else if (path === '/json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"b": [1, 2], "a": {"nested": true}}');
  } else if (path === '/text') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('plain words');
  } else if (path === '/redirect') {
    res.writeHead(302, { location: '/json' });
    res.end();
  } else if (path.startsWith('/status/')) {
    res.writeHead(Number(path.slice(8)), { 'content-type': 'text/plain' });
    res.end('status body');
  } else if (path === '/slow') {
    // Never answers; the client's timeout or cancellation must end the request.
  } else {
    res.writeHead(404);
    res.end();
  }
}

function get(v: Value, ...keys: string[]): Value {
  let cur = v;
  for (const k of keys) {
    assert.ok(isObject(cur), `expected an object at ${k}`);
    cur = cur[k] as Value;
  }
  return cur;
}

describe('http', () => {
  let server: Server;
  let base: string;
  let ctx: TestContext;
  let dir: string;
  let cleanup: () => void;

  before(async () => {
    server = createServer(route);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ dir, cleanup } = tempDir('mhl-http-'));
    ctx = testContext(dir);
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    cleanup();
  });

  const http = (
    op: string,
    positional: Value[],
    named: Record<string, Value> = {},
    c = ctx,
  ): Promise<Value> => call(HTTP_NAMESPACE, op, c, positional, named);

  it('returns status, body, headers, ok and parsed json', async () => {
    const r = await http('get', [`${base}/json`]);
    assert.equal(get(r, 'status'), 200);
    assert.equal(get(r, 'ok'), true);
    assert.equal(get(r, 'headers', 'content-type'), 'application/json');
    assert.equal(get(r, 'body'), '{"b": [1, 2], "a": {"nested": true}}');
    assert.deepEqual(get(r, 'json', 'b'), [1, 2]);
    assert.equal(Object.getPrototypeOf(get(r, 'json')), null);
  });

  it('leaves json null for a non-JSON content type', async () => {
    const r = await http('get', [], { url: `${base}/text` });
    assert.equal(get(r, 'body'), 'plain words');
    assert.equal(get(r, 'json'), null);
  });

  it('sends query parameters, headers and a JSON body', async () => {
    const r = await http('post', [`${base}/echo?keep=1`], {
      query: newObject([
        ['q', 'a b'],
        ['n', 2],
        ['tag', ['x', 'y']],
      ]),
      headers: newObject([['X-Trace', 'abc']]),
      body: newObject([
        ['z', 1],
        ['a', [true, null]],
      ]),
    });
    assert.equal(get(r, 'json', 'method'), 'POST');
    assert.equal(get(r, 'json', 'url'), '/echo?keep=1&q=a+b&n=2&tag=x&tag=y');
    assert.equal(get(r, 'json', 'headers', 'x-trace'), 'abc');
    assert.equal(get(r, 'json', 'headers', 'content-type'), 'application/json');
    assert.equal(get(r, 'json', 'body'), '{"a":[true,null],"z":1}');
  });

  it('sends text and form bodies with their content types', async () => {
    const text = await http('put', [`${base}/echo`], { text: 'raw' });
    assert.equal(get(text, 'json', 'body'), 'raw');
    assert.match(String(get(text, 'json', 'headers', 'content-type')), /^text\/plain/);
    const form = await http('patch', [`${base}/echo`], { form: newObject([['k', 'v w']]) });
    assert.equal(get(form, 'json', 'body'), 'k=v+w');
    assert.equal(get(form, 'json', 'headers', 'content-type'), 'application/x-www-form-urlencoded');
  });

  it('sends a bearer token and registers it for redaction', async () => {
    const c = testContext(dir);
    const r = await http(
      'get',
      [`${base}/echo`],
      { auth: newObject([['bearer', 'tok-secret-123']]) },
      c,
    );
    assert.equal(get(r, 'json', 'headers', 'authorization'), 'Bearer tok-secret-123');
    assert.equal(c.redactor.redact('token tok-secret-123 sent'), `token ${REDACTED} sent`);
  });

  it('sends basic credentials and registers the password and the encoded header', async () => {
    const c = testContext(dir);
    const basic = newObject([
      ['user', 'ann'],
      ['password', 'pa55word'],
    ]);
    const r = await http('get', [`${base}/echo`], { auth: newObject([['basic', basic]]) }, c);
    const encoded = Buffer.from('ann:pa55word').toString('base64');
    assert.equal(get(r, 'json', 'headers', 'authorization'), `Basic ${encoded}`);
    assert.equal(c.redactor.redact(`pa55word ${encoded}`), `${REDACTED} ${REDACTED}`);
  });

  it('registers an explicit Authorization header value', async () => {
    const c = testContext(dir);
    await http(
      'head',
      [`${base}/echo`],
      { headers: newObject([['Authorization', 'Token abcdef']]) },
      c,
    );
    assert.equal(c.redactor.redact('abcdef'), REDACTED);
  });

  it('returns a non-2xx status as a value unless raise_for_status is set', async () => {
    const r = await http('delete', [`${base}/status/404`]);
    assert.equal(get(r, 'status'), 404);
    assert.equal(get(r, 'ok'), false);
    await assert.rejects(
      http('get', [`${base}/status/500`], { raise_for_status: true }),
      isNativeError,
    );
  });

  it('follows redirects unless told not to', async () => {
    assert.equal(get(await http('get', [`${base}/redirect`]), 'status'), 200);
    const r = await http('get', [`${base}/redirect`], { follow_redirects: false });
    assert.equal(get(r, 'status'), 302);
    assert.equal(get(r, 'headers', 'location'), '/json');
  });

  it('raises NATIVE when the request times out', async () => {
    const started = Date.now();
    await assert.rejects(
      http('get', [`${base}/slow`], { timeout: new DurationValue(150) }),
      isNativeError,
    );
    assert.ok(Date.now() - started < 3000);
  });

  it('rejects with the abort reason when the run is cancelled mid-request', async () => {
    const c = testContext(dir);
    const pending = http('get', [`${base}/slow`], {}, c);
    const reason = new Error('cancelled');
    setImmediate(() => c.controller.abort(reason));
    await assert.rejects(pending, (e) => e === reason);
  });

  it('raises NATIVE when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(http('get', [`http://127.0.0.1:${port}/`]), isNativeError);
  });

  it('downloads a body to a file relative to ctx.cwd', async () => {
    const r = await http('download', [`${base}/json`, 'dl/data.json']);
    assert.equal(get(r, 'bytes'), 36);
    assert.equal(get(r, 'path'), 'dl/data.json');
    assert.equal(
      readFileSync(join(dir, 'dl/data.json'), 'utf8'),
      '{"b": [1, 2], "a": {"nested": true}}',
    );
  });

  const malformed: [string, Value[], Record<string, Value>][] = [
    ['a relative url', ['/json'], {}],
    ['a non-http scheme', ['file:///etc/passwd'], {}],
    ['two bodies', ['http://127.0.0.1:1/'], { text: 'a', body: 1 }],
    ['a body on GET', ['http://127.0.0.1:1/'], { text: 'a' }],
    ['a malformed auth', ['http://127.0.0.1:1/'], { auth: newObject([['token', 'x']]) }],
    [
      'an object header value',
      ['http://127.0.0.1:1/'],
      { headers: newObject([['X', newObject()]]) },
    ],
    ['a number timeout', ['http://127.0.0.1:1/'], { timeout: 5 }],
    ['an unknown tls field', ['http://127.0.0.1:1/'], { tls: newObject([['verify', true]]) }],
    ['an unknown option', ['http://127.0.0.1:1/'], { retries: 3 }],
  ];
  for (const [what, positional, named] of malformed) {
    it(`raises NATIVE for ${what}`, async () => {
      await assert.rejects(http('get', positional, named), isNativeError);
    });
  }
});

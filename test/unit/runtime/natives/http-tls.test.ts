/**
 * `http` with `tls: {cert, key, ca, insecure}` and `proxy` (spec: mhl-language.md §8) against a
 * real HTTPS server whose certificates the test makes with openssl, and a real CONNECT proxy.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LangError } from '../../../../src/lang/diagnostics.js';
import { isObject, newObject, type Value } from '../../../../src/runtime/interpreter/values.js';
import { HTTP_NAMESPACE } from '../../../../src/runtime/natives/http.js';
import { REDACTED } from '../../../../src/runtime/services/redact.js';
import {
  type Certs,
  makeCerts,
  type ProxySeen,
  startConnectProxy,
  startTlsServer,
} from '../../../helpers/tls.js';
import { call, isNativeError, type TestContext, tempDir, testContext } from './native-context.js';

let certs: Certs;
let tls: { server: HttpsServer; port: number };
let proxy: { server: HttpServer; port: number; seen: ProxySeen[] };
let cwd: string;
const dirs: { cleanup: () => void }[] = [];

before(async () => {
  const certDir = tempDir();
  const runDir = tempDir();
  dirs.push(certDir, runDir);
  certs = makeCerts(certDir.dir);
  tls = await startTlsServer(certs);
  proxy = await startConnectProxy();
  // The run's working directory holds the PEM files a workflow names by relative path.
  cwd = runDir.dir;
  for (const f of ['ca.pem', 'other-ca.pem', 'client.pem', 'client.key'])
    copyFileSync(join(certs.dir, f), join(cwd, f));
});

after(() => {
  for (const d of dirs) d.cleanup();
  tls.server.closeAllConnections();
  tls.server.close();
  proxy.server.close();
  proxy.server.closeAllConnections();
});

const url = (path: string, host = 'localhost') => `https://${host}:${tls.port}${path}`;
const obj = (o: Record<string, Value>) => newObject(Object.entries(o));

async function get(ctx: TestContext, path: string, named: Record<string, Value>) {
  const res = await call(HTTP_NAMESPACE, 'get', ctx, [url(path)], named);
  assert.ok(isObject(res));
  assert.equal(res['status'], 200);
  const json = res['json'];
  assert.ok(isObject(json));
  return json;
}

/** The deepest `code` on an error's cause chain (Node's TLS and socket codes live there). */
function rootCode(e: unknown): string | undefined {
  let code: string | undefined;
  for (let c: unknown = e; c instanceof Error; c = c.cause)
    if ('code' in c && typeof c.code === 'string') code = c.code;
  return code;
}

describe('http tls', () => {
  it('trusts a server signed by the CA file it is given', async () => {
    const json = await get(testContext(cwd), '/a', { tls: obj({ ca: 'ca.pem' }) });
    assert.deepEqual({ ...json }, { path: '/a', authorized: false, client: null });
  });

  it('presents a client certificate (mTLS): cert by path, key as PEM text', async () => {
    const ctx = testContext(cwd);
    const json = await get(ctx, '/m', {
      tls: obj({ ca: certs.ca, cert: 'client.pem', key: certs.clientKey }),
    });
    assert.equal(json['authorized'], true);
    assert.equal(json['client'], 'mhl-client');
    assert.equal(ctx.redactor.redact(certs.clientKey), REDACTED);
  });

  it('takes PEM text with a preamble (openssl pkcs12 -nodes output) as text, not a path', async () => {
    const ctx = testContext(cwd);
    const bag = 'Bag Attributes\n    localKeyID: 01 00 00 00 \nKey Attributes: <No Attributes>\n';
    const json = await get(ctx, '/b', {
      tls: obj({ ca: certs.ca, cert: 'client.pem', key: bag + certs.clientKey }),
    });
    assert.equal(json['client'], 'mhl-client');
    assert.equal(ctx.redactor.redact(bag + certs.clientKey), REDACTED);
  });

  const secret = 'Bag Attributes\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg-not-a-key\n';
  const hidden: [string, Record<string, Value>][] = [
    ['a multi-line key with no BEGIN line', { cert: 'client.pem', key: secret }],
    ['a long one-line key value', { cert: 'client.pem', key: 'A'.repeat(300) }],
    ['a long one-line cert value', { cert: 'B'.repeat(300), key: 'client.key' }],
  ];
  for (const [what, fields] of hidden) {
    it(`raises NATIVE for ${what} without echoing it`, async () => {
      const ctx = testContext(cwd);
      const err = await call(HTTP_NAMESPACE, 'get', ctx, [url('/x')], {
        tls: obj(fields),
      }).then(
        () => assert.fail('the request succeeded'),
        (e: unknown) => e,
      );
      assert.ok(isNativeError(err) && err instanceof LangError);
      const bad = Object.values(fields).find((v) => typeof v === 'string' && v.length > 20);
      assert.ok(typeof bad === 'string');
      for (let c: unknown = err; c instanceof Error; c = c.cause) {
        assert.ok(!c.message.includes(bad.slice(0, 40)), c.message);
        assert.ok(!c.message.includes(cwd), c.message);
      }
      if (fields['key'] === bad) assert.equal(ctx.redactor.redact(bad), REDACTED);
    });
  }

  it('downloads over TLS with the same options', async () => {
    const res = await call(HTTP_NAMESPACE, 'download', testContext(cwd), [url('/dl'), 'dl.json'], {
      tls: obj({ ca: 'ca.pem' }),
    });
    assert.ok(isObject(res));
    assert.equal(res['ok'], true);
    assert.equal(JSON.parse(readFileSync(join(cwd, 'dl.json'), 'utf8')).path, '/dl');
  });

  it('skips verification with insecure: true', async () => {
    const json = await get(testContext(cwd), '/i', {
      tls: obj({ insecure: true }),
    });
    assert.equal(json['path'], '/i');
  });

  it('refuses a server signed by another CA, with the TLS code as the cause', async () => {
    const ctx = testContext(cwd);
    const err = await call(HTTP_NAMESPACE, 'get', ctx, [url('/w')], {
      tls: obj({ ca: 'other-ca.pem' }),
    }).then(
      () => assert.fail('the request succeeded'),
      (e: unknown) => e,
    );
    assert.ok(isNativeError(err));
    assert.ok(
      ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN'].includes(
        rootCode(err) ?? '',
      ),
      String(rootCode(err)),
    );
  });

  it('refuses a self-signed server without tls options (the default trust store)', async () => {
    await assert.rejects(call(HTTP_NAMESPACE, 'get', testContext(cwd), [url('/d')]), isNativeError);
  });

  const malformed: [string, Record<string, Value>][] = [
    ['an unknown tls field', { verify: false }],
    ['a cert without a key', { cert: 'client.pem' }],
    ['a non-string ca', { ca: 3 }],
    ['a non-bool insecure', { insecure: 'yes' }],
    ['a missing file', { ca: 'missing/ca.pem' }],
    ['a file that is not PEM', { ca: '.' }],
  ];
  for (const [what, fields] of malformed) {
    it(`raises NATIVE for ${what}, naming no absolute path`, async () => {
      const err = await call(HTTP_NAMESPACE, 'get', testContext(cwd), [url('/x')], {
        tls: obj(fields),
      }).then(
        () => assert.fail('the request succeeded'),
        (e: unknown) => e,
      );
      assert.ok(isNativeError(err));
      assert.ok(err instanceof LangError && !err.summary.includes(cwd));
    });
  }
});

describe('http proxy', () => {
  it('tunnels an https request through a CONNECT proxy, sending its credentials', async () => {
    const ctx = testContext(cwd);
    const before = proxy.seen.length;
    const json = await get(ctx, '/p', {
      proxy: `http://robot:pa%24%24word@127.0.0.1:${proxy.port}`,
      tls: obj({ ca: 'ca.pem' }),
    });
    assert.equal(json['path'], '/p');
    const seen = proxy.seen.slice(before);
    assert.deepEqual(
      seen.map((s) => s.target),
      [`localhost:${tls.port}`],
    );
    assert.equal(seen[0]?.auth, `Basic ${Buffer.from('robot:pa$$word').toString('base64')}`);
    assert.equal(ctx.redactor.redact('pa$$word'), REDACTED);
  });

  it('tunnels a plain http request through CONNECT as well', async () => {
    const plain = createServer((req, res) => res.end(`plain ${req.url}`));
    await new Promise<void>((ok) => plain.listen(0, '127.0.0.1', ok));
    try {
      const port = (plain.address() as AddressInfo).port;
      const before = proxy.seen.length;
      const res = await call(
        HTTP_NAMESPACE,
        'get',
        testContext(cwd),
        [`http://127.0.0.1:${port}/h`],
        {
          proxy: `http://127.0.0.1:${proxy.port}`,
        },
      );
      assert.ok(isObject(res));
      assert.equal(res['body'], 'plain /h');
      assert.deepEqual(
        proxy.seen.slice(before).map((s) => s.target),
        [`127.0.0.1:${port}`],
      );
    } finally {
      plain.closeAllConnections();
      plain.close();
    }
  });

  it('fails with NATIVE when the proxy is not listening', async () => {
    await assert.rejects(
      call(HTTP_NAMESPACE, 'get', testContext(cwd), [url('/q')], {
        proxy: 'http://127.0.0.1:1',
        tls: obj({ ca: 'ca.pem' }),
      }),
      isNativeError,
    );
  });

  for (const bad of ['not a url', 'socks5://127.0.0.1:1080']) {
    it(`raises NATIVE for proxy ${JSON.stringify(bad)}`, async () => {
      await assert.rejects(
        call(HTTP_NAMESPACE, 'get', testContext(cwd), [url('/q')], { proxy: bad }),
        isNativeError,
      );
    });
  }
});

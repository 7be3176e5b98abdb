/**
 * Real TLS for http tests: a self-signed CA, a server certificate for localhost/127.0.0.1 and a
 * client certificate, all generated with the `openssl` CLI into a fresh directory; an HTTPS
 * server that reports who the client was; and a CONNECT proxy written with node:http.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

/** PEM files in `dir`: ca.pem, server.pem/.key, client.pem/.key, other-ca.pem (unrelated CA). */
export interface Certs {
  readonly dir: string;
  readonly ca: string;
  readonly clientKey: string;
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function leaf(dir: string, name: string, cn: string, ext?: string): void {
  openssl(dir, [
    'req',
    ...EC,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${cn}`,
  ]);
  const extArgs = ext ? ['-extfile', ext] : [];
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    ...extArgs,
  ]);
}

/** Generates the CA and certificates into `dir`. */
export function makeCerts(dir: string): Certs {
  const ca = (name: string, cn: string) =>
    openssl(dir, [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
    ]);
  ca('ca', 'mhl test CA');
  ca('other-ca', 'unrelated CA');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  leaf(dir, 'server', 'localhost', 'san.ext');
  leaf(dir, 'client', 'mhl-client');
  return {
    dir,
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    clientKey: readFileSync(join(dir, 'client.key'), 'utf8'),
  };
}

/**
 * An HTTPS server on 127.0.0.1 that asks for a client certificate and answers every request
 * with JSON `{path, authorized, client}` (`client` = the certificate's CN, or null).
 */
export async function startTlsServer(certs: Certs): Promise<{ server: HttpsServer; port: number }> {
  const file = (n: string) => readFileSync(join(certs.dir, n));
  const server = createHttpsServer(
    {
      key: file('server.key'),
      cert: file('server.pem'),
      ca: file('ca.pem'),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const client = socket.authorized && peer.subject ? String(peer.subject.CN) : null;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, authorized: socket.authorized, client }));
    },
  );
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, port: (server.address() as AddressInfo).port };
}

/** What a proxy saw: one entry per CONNECT, with its target and Proxy-Authorization header. */
export interface ProxySeen {
  readonly target: string;
  readonly auth: string | undefined;
}

/** A CONNECT-only forward proxy on 127.0.0.1 that records each tunnel it opens. */
export async function startConnectProxy(): Promise<{
  server: HttpServer;
  port: number;
  seen: ProxySeen[];
}> {
  const seen: ProxySeen[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => {
    res.writeHead(405);
    res.end();
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    seen.push({ target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

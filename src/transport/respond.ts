/**
 * The two small response writers every HTTP endpoint shares: a plain-text status and a JSON
 * body with its length. No CORS headers, ever.
 */
import type { ServerResponse } from 'node:http';

/** Writes a plain-text body with `status`. */
export function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

/** Writes a JSON body with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

// The second-opinion load generator of `serve-http.bench.mjs --client=node`: a closed loop on
// node:http (keep-alive agent, CONNECTIONS requests in flight, each connection sending its next
// request as soon as the previous answer arrives). Heavier than autocannon: it takes CPU the
// server would use, so its ratios read higher. Every reply's body is checked here, not only its
// status. Also the latency histogram both generators record into.
import { Agent, request as httpRequest } from 'node:http';
import { HOST } from './http-peers.mjs';

const REQUEST_TIMEOUT_MS = 10_000;

/** Latencies in 10 µs buckets up to 10 s (a bounded histogram, not a sample list). */
export class Histogram {
  constructor() {
    this.buckets = new Uint32Array(1_000_001);
    this.count = 0;
  }
  add(ms) {
    this.buckets[Math.min(this.buckets.length - 1, Math.round(ms * 100))]++;
    this.count++;
  }
  quantile(q) {
    const target = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i];
      if (seen >= target && seen > 0) return i / 100;
    }
    return Number.NaN;
  }
}

/** The JSON-RPC message in a reply body: plain JSON, or the last `data:` line of an SSE body. */
export function messageOf(text, contentType) {
  if (contentType?.startsWith('text/event-stream')) {
    const lines = text.split('\n').filter((l) => l.startsWith('data:'));
    return JSON.parse(lines.at(-1).slice(5));
  }
  return JSON.parse(text);
}

/** Null when a reply is a 200 carrying the result of request `id` in the expected form. */
export function checkReply(status, contentType, text, id, streamed) {
  if (status !== 200) return `status ${status}: ${text.slice(0, 200)}`;
  try {
    if (streamed !== (contentType?.startsWith('text/event-stream') ?? false))
      return `unexpected content type ${contentType}: ${text.slice(0, 200)}`;
    const msg = messageOf(text, contentType);
    if (msg.result === undefined || msg.result.isError === true || msg.id !== id)
      return `no result: ${text.slice(0, 200)}`;
    return null;
  } catch {
    return `bad body: ${text.slice(0, 200)}`;
  }
}

function once(agent, target, id) {
  const body = target.body(id);
  return new Promise((done) => {
    const req = httpRequest(
      {
        host: HOST,
        port: target.port,
        method: 'POST',
        path: target.path,
        agent,
        headers: { ...target.headers, 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () =>
          done(
            checkReply(
              res.statusCode,
              res.headers['content-type'],
              text,
              id,
              target.streamed === true,
            ),
          ),
        );
        res.on('error', (e) => done(String(e)));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => done(String(e)));
    req.end(body);
  });
}

/** Loads `target` for `ms` over `connections`; latencies go to `hist` when given. */
export async function nodeLoad(target, connections, ms, hist) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: connections,
    maxFreeSockets: connections,
  });
  const end = performance.now() + ms;
  let ok = 0;
  let errors = 0;
  let firstError;
  let id = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      const error = await once(agent, target, `n${++id}`);
      const finished = performance.now();
      if (finished > end) break; // answered after the window closed: not counted either way
      if (error === null) {
        ok++;
        hist?.add(finished - started);
      } else {
        errors++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return { ok, errors, firstError };
}

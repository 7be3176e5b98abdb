/**
 * Operations endpoints beside `/mcp`, as rows of the route table: `GET /health/ready` (version,
 * pid, this process's `instance_id` and its `configuration_id`), `GET /healthz`, `GET /readyz` (503 once shutdown
 * began), `GET /metrics` and `POST /control/shutdown`, which starts shutdown only for a body of
 * exactly the current `{instance_id}` and never reveals that id on a mismatch. No CORS headers
 * are ever sent; the Host and Origin guards run before these handlers. Knows nothing of MCP.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BodyLimits, discardRest, isJsonContentType, readBody } from './body.js';
import { plain, sendJson } from './respond.js';
import type { Route } from './routes.js';

/** Largest shutdown request body read. */
const MAX_CONTROL_BYTES = 4096;
const SHUTDOWN_BODY = /^\s*\{\s*"instance_id"\s*:\s*"[^"\\]*"\s*\}\s*$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Options for `opsRoutes()`. */
export interface OpsOptions {
  readonly version: string;
  readonly pid: number;
  /** A UUID v4 made once per process. */
  readonly instanceId: string;
  /**
   * The configuration identity a service manager started this process with
   * (`--configuration-id`, docs/service.md), or null: readiness names it so `mhl service` can
   * tell its own server from another one on the port.
   */
  readonly configurationId: string | null;
  /** True once shutdown has begun. */
  readonly shuttingDown: () => boolean;
  /** Starts shutdown; called after the 202 has been written. */
  readonly requestShutdown: () => void;
  /** The Prometheus text of `GET /metrics`. */
  readonly metrics: () => string;
  /** The deadline and shared budget of the shutdown request's body. */
  readonly body: BodyLimits;
}

/**
 * The ops rows, behind the same Host and Origin guards as every row. The probes are `public`
 * (load balancers and service managers read them without credentials; readiness shows the
 * version, pid, instance id and configuration id, nothing a token protects). `/metrics` and `/control/shutdown`
 * are `bearer`: with `--token` only a holder of the token reads the counters or stops the
 * server; without one, any local process can, as seed 002 describes.
 */
export function opsRoutes(options: OpsOptions): Route[] {
  const probe = (
    path: string,
    answer: (res: ServerResponse) => void,
    auth: Route['auth'] = 'public',
  ): Route => ({
    path,
    methods: ['GET', 'HEAD'],
    auth,
    handle: (_req, res) => answer(res),
  });
  return [
    probe('/health/ready', (res) =>
      sendJson(res, 200, {
        status: 'ready',
        version: options.version,
        pid: options.pid,
        instance_id: options.instanceId,
        configuration_id: options.configurationId,
      }),
    ),
    probe('/healthz', (res) => plain(res, 200, 'ok')),
    probe('/readyz', (res) =>
      options.shuttingDown() ? plain(res, 503, 'draining') : plain(res, 200, 'ready'),
    ),
    probe(
      '/metrics',
      (res) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(options.metrics());
      },
      'bearer',
    ),
    {
      path: '/control/shutdown',
      methods: ['POST'],
      auth: 'bearer',
      handle: (req, res) => controlShutdown(req, res, options),
    },
  ];
}

async function controlShutdown(
  req: IncomingMessage,
  res: ServerResponse,
  options: OpsOptions,
): Promise<void> {
  if (!isJsonContentType(req.headers['content-type'])) {
    sendJson(res, 415, { error: 'UNSUPPORTED_MEDIA_TYPE' });
    return;
  }
  const body = await readBody(req, MAX_CONTROL_BYTES, options.body);
  if (!body.ok) {
    if (body.reason === 'aborted') return void res.destroy();
    // A stalled or unfittable body is not read further: its connection closes after the answer.
    if (body.reason === 'too-large') discardRest(req);
    else res.setHeader('connection', 'close');
    if (body.reason === 'timeout' || body.reason === 'stalled')
      return sendJson(res, 408, { error: 'REQUEST_TIMEOUT' });
    if (body.reason === 'busy') return sendJson(res, 503, { error: 'BODY_BUFFER_FULL' });
  }
  const requested = body.ok ? shutdownTarget(body.text) : undefined;
  if (requested === undefined) {
    sendJson(res, 400, { error: 'INVALID_SHUTDOWN_REQUEST' });
    return;
  }
  if (requested.toLowerCase() !== options.instanceId.toLowerCase()) {
    sendJson(res, 409, { error: 'INSTANCE_ID_MISMATCH' });
    return;
  }
  res.once('finish', options.requestShutdown);
  sendJson(res, 202, { status: 'shutting_down', instance_id: options.instanceId });
}

/** The `instance_id` of a body that is exactly `{"instance_id": "<uuid v4>"}`, else undefined. */
function shutdownTarget(text: string): string | undefined {
  // Exactly one key, spelled plainly: JSON.parse keeps the last of duplicate keys (also of
  // keys spelled with escapes), so duplicates are refused on the text itself.
  if (!SHUTDOWN_BODY.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: an invalid shutdown request.
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const id = (value as Record<string, unknown>)['instance_id'];
  if (keys.length !== 1 || typeof id !== 'string' || !UUID_V4.test(id)) return undefined;
  return id;
}

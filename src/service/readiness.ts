/**
 * The managed server's identity, read over loopback HTTP: `GET /health/ready` (version, pid,
 * instance id, configuration id) and the identity-checked `POST /control/shutdown`. An answer
 * from anything that is not an mhl readiness document is `other`: something else holds the
 * port, and nothing here adopts or stops it. Knows nothing of systemd.
 */
import { request } from 'node:http';

/** What answered on the port. */
export type Readiness =
  | { readonly kind: 'absent' }
  | { readonly kind: 'other'; readonly detail: string }
  | {
      readonly kind: 'ready';
      readonly version: string;
      readonly pid: number;
      readonly instanceId: string;
      readonly configurationId: string | null;
    };

/** The identity a lifecycle command expects of its own server. */
export interface ExpectedIdentity {
  readonly version: string;
  readonly pid: number;
  readonly configurationId: string;
}

/** Each probe's bound: a loopback answer takes milliseconds. */
const PROBE_MS = 1000;
const MAX_BODY = 16 * 1024;

interface Reply {
  readonly status: number;
  readonly text: string;
}

function exchange(port: number, method: string, path: string, body?: string): Promise<Reply> {
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          host: `127.0.0.1:${port}`,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
        timeout: PROBE_MS,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.length > MAX_BODY) res.destroy(new Error('readiness answer too large'));
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, text }));
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 1 s')));
    req.on('error', fail);
    req.end(body);
  });
}

/** Reads `/health/ready` on 127.0.0.1:`port`; never throws. */
export async function probeReadiness(port: number): Promise<Readiness> {
  let reply: Reply;
  try {
    reply = await exchange(port, 'GET', '/health/ready');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED') return { kind: 'absent' };
    return { kind: 'other', detail: error instanceof Error ? error.message : String(error) };
  }
  if (reply.status !== 200) return { kind: 'other', detail: `HTTP ${reply.status}` };
  return readinessOf(reply.text);
}

/** A readiness document, or `other` for anything not shaped like mhl's. */
export function readinessOf(text: string): Readiness {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { kind: 'other', detail: 'not a JSON readiness answer' };
  }
  const { status, version, pid, instance_id, configuration_id } = value ?? {};
  if (
    status !== 'ready' ||
    typeof version !== 'string' ||
    typeof pid !== 'number' ||
    typeof instance_id !== 'string' ||
    (configuration_id !== null && typeof configuration_id !== 'string')
  ) {
    return { kind: 'other', detail: 'not an mhl readiness answer' };
  }
  return {
    kind: 'ready',
    version,
    pid,
    instanceId: instance_id,
    configurationId: configuration_id ?? null,
  };
}

/** True when a readiness answer is exactly the expected server. */
export function matches(ready: Readiness, expected: ExpectedIdentity): boolean {
  return (
    ready.kind === 'ready' &&
    ready.pid === expected.pid &&
    ready.version === expected.version &&
    ready.configurationId === expected.configurationId
  );
}

/**
 * Asks the server on `port` to shut down if it is still instance `instanceId`; true on 202.
 * A 409 (another instance now answers) and every other answer are false.
 */
export async function requestShutdown(port: number, instanceId: string): Promise<boolean> {
  try {
    const reply = await exchange(
      port,
      'POST',
      '/control/shutdown',
      JSON.stringify({ instance_id: instanceId }),
    );
    return reply.status === 202;
  } catch {
    // No answer: nothing was asked of whatever holds the port.
    return false;
  }
}

/**
 * The CLI's side of `--open`: reads the running local server's `instance_id` (readiness), asks
 * it for a fresh challenge, and answers it with the vault's control proof over that nonce, that
 * instance and this origin (`key.ts`) to mint a setup capability. Whatever answers on the port
 * sees only a proof for its own nonce, instance and port, useless to replay. It accepts the answer only
 * when its URL is exactly `<configured origin>/secrets/setup?capability=<43 characters>`. A
 * server that answers with any other origin, path or query (another host, a redirect target,
 * an extra parameter) is refused, so a look-alike server on the port cannot send the user's
 * browser elsewhere with a secret to type in.
 */
import { SECRETS_ERROR_CODES, SecretsError } from './errors.js';
import { controlProof } from './key.js';
import { CHALLENGE_PATH, MINT_PATH, SETUP_PATH } from './setup-routes.js';

export const SETUP_CLIENT_CODES = {
  UNREACHABLE: 'SETUP_SERVER_UNREACHABLE',
  REFUSED: 'SETUP_REFUSED',
  BAD_ANSWER: 'SETUP_BAD_ANSWER',
} as const;

export class SetupClientError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface MintRequest {
  readonly mode: 'add' | 'edit';
  readonly name: string;
  readonly kind?: string;
  readonly label?: string;
}

/** The origin the CLI talks to: always loopback, the port `--port` names. */
export function setupOrigin(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** The setup URL in `text` when it has exactly the accepted shape on `origin`, else undefined. */
export function acceptSetupUrl(text: unknown, origin: string): string | undefined {
  if (typeof text !== 'string') return undefined;
  const prefix = `${origin}${SETUP_PATH}?capability=`;
  if (!text.startsWith(prefix)) return undefined;
  return /^[A-Za-z0-9_-]{43}$/.test(text.slice(prefix.length)) ? text : undefined;
}

/** Mints a capability; resolves to the setup URL and when it expires. */
export async function requestSetupUrl(
  origin: string,
  key: Buffer,
  request: MintRequest,
): Promise<{ url: string; expiresAt: string }> {
  const instanceId = await readyInstance(origin);
  const nonce = await challengeOf(origin, instanceId, request.name);
  const proof = controlProof(key, { nonce, instanceId, origin });
  const res = await call(origin, MINT_PATH, {
    method: 'POST',
    headers: { authorization: `Bearer ${nonce}.${proof}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (res.status !== 201) throw refusal(res.status, body, origin, request.name);
  const url = acceptSetupUrl(body?.['url'], origin);
  const expiresAt = body?.['expires_at'];
  if (url === undefined || typeof expiresAt !== 'string') {
    throw new SetupClientError(
      SETUP_CLIENT_CODES.BAD_ANSWER,
      `the server on ${origin} answered with a setup link of another shape than ${origin}${SETUP_PATH}?capability=…; not shown`,
    );
  }
  return { url, expiresAt };
}

async function call(origin: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${origin}${path}`, {
      ...init,
      redirect: 'error',
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new SetupClientError(
      SETUP_CLIENT_CODES.UNREACHABLE,
      `no mhl server answers on ${origin}; start one with mhl serve mcp --http (or give its --port)`,
    );
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** The `instance_id` readiness reports: the identity a proof is bound to. */
async function readyInstance(origin: string): Promise<string> {
  const res = await call(origin, '/health/ready', { method: 'GET' });
  const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  const id = body?.['instance_id'];
  if (res.status !== 200 || typeof id !== 'string' || !UUID.test(id)) {
    throw new SetupClientError(
      SETUP_CLIENT_CODES.REFUSED,
      `the server on ${origin} is not a ready mhl server (HTTP ${res.status} from /health/ready)`,
    );
  }
  return id;
}

/** A fresh nonce from the server that reported `instanceId`; another instance's is refused. */
async function challengeOf(origin: string, instanceId: string, name: string): Promise<string> {
  const res = await call(origin, CHALLENGE_PATH, { method: 'POST' });
  const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (res.status !== 201) throw refusal(res.status, body, origin, name);
  const nonce = body?.['nonce'];
  if (
    typeof nonce !== 'string' ||
    !/^[A-Za-z0-9_-]{43}$/.test(nonce) ||
    body?.['instance_id'] !== instanceId
  ) {
    throw new SetupClientError(
      SETUP_CLIENT_CODES.BAD_ANSWER,
      `the server on ${origin} answered the challenge request with another shape or another instance; nothing sent`,
    );
  }
  return nonce;
}

function refusal(
  status: number,
  body: Record<string, unknown> | undefined,
  origin: string,
  name: string,
): Error {
  const code = typeof body?.['error'] === 'string' ? body['error'] : undefined;
  if (code === SECRETS_ERROR_CODES.EXISTS || code === SECRETS_ERROR_CODES.NOT_FOUND) {
    const what =
      code === SECRETS_ERROR_CODES.EXISTS ? 'exists; use edit' : 'does not exist; use add';
    return new SecretsError(code, `the secret "${name}" ${what}`);
  }
  if (status === 403 || status === 404) {
    return new SetupClientError(
      SETUP_CLIENT_CODES.REFUSED,
      `the server on ${origin} does not serve secret setup for this vault (HTTP ${status}): it runs as another user, with another config folder, or not on loopback`,
    );
  }
  return new SetupClientError(
    SETUP_CLIENT_CODES.REFUSED,
    `the server on ${origin} refused the setup link (HTTP ${status}${code === undefined ? '' : `, ${code}`})`,
  );
}

/**
 * The HTTP rows of secret setup, on the local server only (a loopback bind):
 *
 * - `POST /secrets/challenge` issues a fresh single-use nonce (`challenges.ts`), thirty seconds.
 * - `POST /secrets/capabilities` mints a setup capability. Its credential answers one challenge:
 *   `Authorization: Bearer <nonce>.<proof>`, the proof an HMAC of the vault key over the nonce,
 *   this process's `instance_id`, this server's origin and the purpose (`key.ts`), which only a
 *   process that can read the user's key file can compute, and which is worthless once used (a
 *   look-alike server that records it cannot replay it). The server's `--token` would let
 *   anyone the token was given to write into this user's vault, and no token any local user.
 *   Nothing about the vault (which names exist) is answered before the proof holds.
 * - `GET /secrets/setup?capability=…` shows the form; `POST` (same URL) stores the secret.
 *   Both require a live capability, exactly `capability=<43 characters>` as the whole query; a
 *   POST must also come from the link's own origin (its `Origin`, when sent, is exactly the
 *   origin the link was issued on; `Sec-Fetch-Site`, when sent, is same-origin). Only a POST that stores the
 *   secret uses the capability up.
 *
 * Nothing here logs a request's URL or body: the capability is in the one, the secret in the
 * other. Refusals look the same for a used, expired, unknown or malformed capability.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Logger } from '../log/index.js';
import { type BodyLimits, discardRest, isJsonContentType, readBody } from '../transport/body.js';
import { isLoopback } from '../transport/index.js';
import type { Route } from '../transport/routes.js';
import type { CapabilityStore, SetupGrant } from './capabilities.js';
import type { ChallengeStore } from './challenges.js';
import { SecretsError } from './errors.js';
import { isFormContentType, parseSetupForm } from './form.js';
import { controlProof, readVaultKey } from './key.js';
import { donePage, formPage, refusalPage, sendPage } from './page.js';
import { checkKind, checkLabel, checkName } from './records.js';
import type { Vault } from './vault.js';

export const SETUP_PATH = '/secrets/setup';
export const MINT_PATH = '/secrets/capabilities';
export const CHALLENGE_PATH = '/secrets/challenge';
/** A form body: a 64 KiB value percent-encoded (three bytes each) and a label fit. */
const MAX_FORM_BYTES = 200 * 1024;
const MAX_MINT_BYTES = 4096;

export interface SetupRoutesOptions {
  readonly vault: Vault;
  readonly capabilities: CapabilityStore;
  readonly challenges: ChallengeStore;
  /** This process's `instance_id` (readiness): a proof names the instance it was made for. */
  readonly instanceId: string;
  readonly logger: Logger;
  /** The server's one body deadline and budget, shared with every row that reads a body. */
  readonly body: BodyLimits;
}

/** The body of a link request; built on the first one, not at every server's start-up. */
function buildMintSchema() {
  return z
    .object({
      mode: z.enum(['add', 'edit']).describe('add a new secret or change an existing one'),
      name: z.string().describe('the secret the link sets'),
      kind: z.string().optional().describe('its kind (add: default generic; edit: unchanged)'),
      label: z.string().optional().describe('a label to prefill'),
    })
    .strict();
}
let mintSchema: ReturnType<typeof buildMintSchema> | undefined;

export function setupRoutes(options: SetupRoutesOptions): Route[] {
  const { body } = options;
  const refuseJson = (res: ServerResponse, status: number) =>
    sendJson(res, status, { error: status === 405 ? 'METHOD_NOT_ALLOWED' : 'FORBIDDEN' });
  return [
    {
      path: CHALLENGE_PATH,
      methods: ['POST'],
      auth: 'capability',
      capability: onLoopback,
      refuse: refuseJson,
      handle: (_req, res) => challenge(res, options),
    },
    {
      path: MINT_PATH,
      methods: ['POST'],
      auth: 'capability',
      capability: (req) => onLoopback(req) && proofMatches(req, options),
      refuse: refuseJson,
      handle: (req, res) => mint(req, res, options, body),
    },
    {
      path: SETUP_PATH,
      methods: ['GET', 'POST'],
      auth: 'capability',
      capability: (req) =>
        onLoopback(req) && options.capabilities.check(capabilityOf(req.url)) !== undefined,
      refuse: (res, status) =>
        sendPage(
          res,
          status,
          status === 405
            ? refusalPage('Not allowed', 'The setup page takes GET and POST only.')
            : refusalPage(
                'This setup link does not work',
                'It was used already, it expired, or it was made by another server. Run mhl secrets add NAME --open (or edit) again for a new one.',
              ),
        ),
      handle: (req, res) =>
        req.method === 'POST' ? store(req, res, options, body) : show(req, res, options),
    },
  ];
}

/** The capability of a URL whose whole query is `capability=<value>`, else undefined. */
export function capabilityOf(url: string | undefined): string | undefined {
  const at = url?.indexOf('?') ?? -1;
  if (url === undefined || at === -1) return undefined;
  const found = /^capability=([A-Za-z0-9_-]{43})$/.exec(url.slice(at + 1));
  return found?.[1];
}

function onLoopback(req: IncomingMessage): boolean {
  const local = req.socket.localAddress ?? '';
  return isLoopback(local.replace(/^::ffff:/, ''));
}

/** A nonce for the next mint: `201 {nonce, instance_id, expires_at}`. */
function challenge(res: ServerResponse, options: SetupRoutesOptions): void {
  const issued = options.challenges.issue();
  if (issued === undefined) return sendJson(res, 503, { error: 'TOO_MANY_CHALLENGES' });
  sendJson(res, 201, {
    nonce: issued.nonce,
    instance_id: options.instanceId,
    expires_at: new Date(issued.expiresAt).toISOString(),
  });
}

/**
 * True when the request answers a live challenge of this server with the vault key. The nonce
 * is taken first, whatever follows: one answer per challenge, right or wrong.
 */
function proofMatches(req: IncomingMessage, options: SetupRoutesOptions): boolean {
  const found = /^Bearer ([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/.exec(
    req.headers.authorization ?? '',
  );
  const nonce = found?.[1];
  const proof = found?.[2];
  if (nonce === undefined || proof === undefined || !options.challenges.take(nonce)) return false;
  let key: Buffer | undefined;
  try {
    key = readVaultKey(options.vault.paths.key);
  } catch {
    // An unreadable or unsafe key file proves nothing.
    return false;
  }
  if (key === undefined) return false;
  const given = Buffer.from(proof, 'utf8');
  const challenge = { nonce, instanceId: options.instanceId, origin: ownOrigin(req) };
  const expected = Buffer.from(controlProof(key, challenge), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** This server's origin as the request reached it: the local address and port. */
function ownOrigin(req: IncomingMessage): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${req.socket.localPort}`;
}

/**
 * True when a POST comes from the page of the link (or from no browser page at all): its
 * `Origin`, when sent, is exactly the origin the link was issued on, so a page on
 * `http://localhost:<port>` (another origin to a browser) cannot post a link issued on
 * `127.0.0.1`.
 */
function sameOrigin(req: IncomingMessage, issued: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === issued;
}

async function mint(
  req: IncomingMessage,
  res: ServerResponse,
  options: SetupRoutesOptions,
  limits: BodyLimits,
): Promise<void> {
  if (!isJsonContentType(req.headers['content-type'])) {
    return sendJson(res, 415, { error: 'UNSUPPORTED_MEDIA_TYPE' });
  }
  const read = await readBody(req, MAX_MINT_BYTES, limits);
  if (!read.ok)
    return bodyRefused(req, res, read.reason, (status, code) =>
      sendJson(res, status, { error: code }),
    );
  let grant: SetupGrant;
  try {
    mintSchema ??= buildMintSchema();
    const parsed = mintSchema.safeParse(JSON.parse(read.text));
    if (!parsed.success)
      return sendJson(res, 400, {
        error: 'INVALID_REQUEST',
        field: parsed.error.issues[0]?.path.join('.'),
      });
    const { mode, name, kind, label } = parsed.data;
    checkName(name);
    grant = {
      mode,
      name,
      ...(kind === undefined ? {} : { kind: checkKind(kind) }),
      ...(label === undefined ? {} : { label: checkLabel(label) }),
    };
    const existing = await options.vault.find(name);
    if (mode === 'add' && existing !== undefined)
      return sendJson(res, 409, { error: 'SECRET_EXISTS' });
    if (mode === 'edit' && existing === undefined)
      return sendJson(res, 404, { error: 'SECRET_NOT_FOUND' });
    // An edit's page shows what the record has unless the command said otherwise.
    if (existing !== undefined) grant = { kind: existing.kind, label: existing.label, ...grant };
  } catch (error) {
    if (error instanceof SecretsError) {
      // A record's own rule is the caller's to fix; the vault's faults are the server's.
      return sendJson(res, error.code.startsWith('SECRET_') ? 400 : 500, { error: error.code });
    }
    if (error instanceof SyntaxError) return sendJson(res, 400, { error: 'INVALID_REQUEST' });
    throw error;
  }
  const minted = options.capabilities.mint({ ...grant, origin: ownOrigin(req) });
  if (minted === undefined) return sendJson(res, 503, { error: 'TOO_MANY_SETUP_LINKS' });
  const url = `${ownOrigin(req)}${SETUP_PATH}?capability=${minted.capability}`;
  options.logger.info({ secret: grant.name, mode: grant.mode }, 'secret setup link made');
  sendJson(res, 201, { url, expires_at: new Date(minted.expiresAt).toISOString() });
}

function show(req: IncomingMessage, res: ServerResponse, options: SetupRoutesOptions): void {
  const capability = capabilityOf(req.url) as string;
  const grant = options.capabilities.check(capability) as SetupGrant;
  sendPage(res, 200, formPage(grant, capability));
}

async function store(
  req: IncomingMessage,
  res: ServerResponse,
  options: SetupRoutesOptions,
  limits: BodyLimits,
): Promise<void> {
  const capability = capabilityOf(req.url) as string;
  const page = (status: number, title: string, text: string) =>
    sendPage(res, status, refusalPage(title, text));
  const issued = options.capabilities.check(capability)?.origin ?? ownOrigin(req);
  if (!sameOrigin(req, issued)) {
    return page(403, 'Refused', 'The form was sent from another site than this setup page.');
  }
  if (!isFormContentType(req.headers['content-type'])) {
    return page(415, 'Refused', 'The form must be sent as application/x-www-form-urlencoded.');
  }
  const read = await readBody(req, MAX_FORM_BYTES, limits);
  if (!read.ok)
    return bodyRefused(req, res, read.reason, (status, code) => page(status, 'Refused', code));
  const form = parseSetupForm(read.text);
  const grant = options.capabilities.check(capability);
  if (grant === undefined)
    return page(403, 'This setup link does not work', 'It was used already or it expired.');
  if (!form.ok) {
    return sendPage(
      res,
      400,
      formPage(grant, capability, `The field ${form.field} ${form.problem}.`),
    );
  }
  const claim = options.capabilities.claim(capability);
  if (claim === undefined)
    return page(409, 'Refused', 'This link is being used by another request.');
  const { value, label } = form.fields as { value: string; label?: string };
  try {
    const secret = {
      name: grant.name,
      value,
      ...(grant.kind === undefined ? {} : { kind: grant.kind }),
      ...(label === undefined || label === '' ? {} : { label }),
    };
    const record =
      grant.mode === 'add' ? await options.vault.add(secret) : await options.vault.edit(secret);
    claim.consume();
    options.logger.info(
      { secret: record.name, id: record.id, mode: grant.mode },
      'secret stored through the setup page',
    );
    sendPage(res, 200, donePage(record));
  } catch (error) {
    claim.release();
    if (!(error instanceof SecretsError)) throw error;
    options.logger.warn({ code: error.code, secret: grant.name }, 'secret setup failed');
    sendPage(
      res,
      error.code.startsWith('SECRET_') ? 400 : 500,
      formPage(grant, capability, `Not saved (${error.code}).`),
    );
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

type Reason = 'too-large' | 'aborted' | 'timeout' | 'stalled' | 'busy';

function bodyRefused(
  req: IncomingMessage,
  res: ServerResponse,
  reason: Reason,
  answer: (status: number, code: string) => void,
): void {
  if (reason === 'aborted') return void res.destroy();
  if (reason === 'too-large') discardRest(req);
  else res.setHeader('connection', 'close');
  if (reason === 'too-large') return answer(413, 'BODY_TOO_LARGE');
  if (reason === 'busy') return answer(503, 'BODY_BUFFER_FULL');
  answer(408, 'REQUEST_TIMEOUT');
}

/**
 * The A2A rows of the HTTP route table: the Agent Card (`GET /.well-known/agent-card.json` and
 * `/.well-known/agent.json`, public) and the JSON-RPC endpoint (`POST /a2a`, and `POST /` on
 * `mhl serve a2a`, behind the bearer token like `/mcp`). The transport has already run the Host
 * and Origin guards and the token check; this reads the body (1 MiB cap, the server's shared
 * body budget), parses one JSON-RPC request, picks the codec from `A2A-Version`, resolves the
 * caller (the verified principal, else the one anonymous owner stateless MCP callers share) and
 * answers one JSON body, or an event stream for the streaming methods.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonObject } from '../../catalog/index.js';
import type { Logger } from '../../log/index.js';
import {
  errorResponse,
  exceedsDepth,
  isRecord,
  MAX_NESTING_DEPTH,
  parseJson,
  type RequestId,
  tooLargeResponse,
} from '../../protocol/index.js';
import { type Caller, ownerOf, quotaKeyOf } from '../../runs/index.js';
import {
  type BodyLimits,
  discardRest,
  isJsonContentType,
  MAX_BODY_BYTES,
  readBody,
} from '../../transport/body.js';
import { socketClientKey } from '../../transport/client-key.js';
import { principalOf } from '../../transport/mcp-post.js';
import { sendJson } from '../../transport/respond.js';
import type { Route } from '../../transport/routes.js';
import { STREAM_HEADERS } from '../../transport/sse.js';
import { type Codec, codecFor, type Operation } from './codec.js';
import { CODEC_V1 } from './codec-v1.js';
import { CODEC_V03 } from './codec-v03.js';
import { A2A_ERROR_CODES, A2aError, a2aErrorOf } from './errors.js';
import { type A2aService, includesArtifacts, readQuery } from './service.js';
import { isSettled, type TaskSnapshot } from './task.js';

const CODECS = { v1: CODEC_V1, v03: CODEC_V03 } as const;

export interface A2aRoutesOptions {
  readonly service: A2aService;
  readonly card: (base: string, rpcPath: string) => JsonObject;
  readonly logger: Logger;
  /** The shared deadline and budget of every body the server reads. */
  readonly body: BodyLimits;
  /** The caller-identity header; set only when a token guards the endpoint. */
  readonly principalHeader: string | undefined;
  /** `mhl serve a2a`: JSON-RPC at `/` too, and the card points there. */
  readonly atRoot: boolean;
}

/** The card rows and the JSON-RPC rows. */
export function a2aRoutes(options: A2aRoutesOptions): Route[] {
  const rpcPath = options.atRoot ? '/' : '/a2a';
  const card = (req: IncomingMessage, res: ServerResponse) => {
    // The Host header already passed the transport's guard: it names this server.
    const base = `http://${req.headers.host ?? 'localhost'}`;
    sendJson(res, 200, options.card(base, rpcPath));
  };
  const rpc = (path: string): Route => ({
    path,
    methods: ['POST'],
    auth: 'bearer',
    refuse: (res, status, text) =>
      reply(res, status, errorResponse(null, new A2aError(A2A_ERROR_CODES.INVALID_REQUEST, text))),
    handle: (req, res) => handleRpc(req, res, options),
  });
  return [
    {
      path: '/.well-known/agent-card.json',
      methods: ['GET', 'HEAD'],
      auth: 'public',
      handle: card,
    },
    { path: '/.well-known/agent.json', methods: ['GET', 'HEAD'], auth: 'public', handle: card },
    rpc('/a2a'),
    ...(options.atRoot ? [rpc('/')] : []),
  ];
}

function reply(res: ServerResponse, status: number, body: unknown, version?: string): void {
  if (version !== undefined) res.setHeader('a2a-version', version);
  sendJson(res, status, body);
}

/** A checked request: its id, method and params. */
interface RpcRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** One request read and checked; undefined when a refusal has already been answered. */
async function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
  limits: BodyLimits,
): Promise<RpcRequest | undefined> {
  const text = await readJsonBody(req, res, limits);
  if (text === undefined) return undefined;
  const parsed = parseJson(text);
  if (!parsed.ok) return void reply(res, 400, parsed.response);
  return checkEnvelope(res, parsed.value);
}

/** The body's text, or undefined once its refusal (415, 413, 408, 503) is answered. */
async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  limits: BodyLimits,
): Promise<string | undefined> {
  const type = req.headers['content-type'];
  if (!isJsonContentType(type) && type !== 'application/a2a+json') {
    const error = new A2aError(A2A_ERROR_CODES.INVALID_REQUEST, 'Content-Type must be JSON');
    return void reply(res, 415, errorResponse(null, error));
  }
  const body = await readBody(req, MAX_BODY_BYTES, limits);
  if (body.ok) return body.text;
  if (body.reason === 'aborted') return void res.destroy();
  if (body.reason === 'too-large') {
    discardRest(req);
    return void reply(res, 413, tooLargeResponse(MAX_BODY_BYTES));
  }
  // Busy, stalled or past the deadline: nothing more is read; the connection closes after.
  res.setHeader('connection', 'close');
  const busy = body.reason === 'busy';
  const error = new A2aError(
    busy ? A2A_ERROR_CODES.SERVER_UNAVAILABLE : A2A_ERROR_CODES.INVALID_REQUEST,
    `request body ${body.reason}`,
    { code: `BODY_${body.reason.toUpperCase()}`, ...(busy ? { retryable: true } : {}) },
  );
  return void reply(res, busy ? 503 : 408, errorResponse(null, error));
}

/** One JSON-RPC request with an id, or undefined once its refusal is answered. */
function checkEnvelope(res: ServerResponse, message: unknown): RpcRequest | undefined {
  const invalid = (text: string, id: RequestId | null = null) =>
    void reply(res, 400, errorResponse(id, new A2aError(A2A_ERROR_CODES.INVALID_REQUEST, text)));
  if (Array.isArray(message)) return invalid('batches are not supported: send one request');
  if (!isRecord(message)) return invalid('a request is a JSON-RPC object');
  if (exceedsDepth(message, MAX_NESTING_DEPTH)) return invalid('the request nests too deep');
  const id = message['id'];
  const echo = typeof id === 'string' || typeof id === 'number' ? id : null;
  if (message['jsonrpc'] !== '2.0') return invalid('jsonrpc must be "2.0"', echo);
  if (echo === null) return invalid('an A2A request needs an id (a string or a number)');
  const method = message['method'];
  if (typeof method !== 'string') return invalid('method must be a string', echo);
  const params = message['params'] ?? {};
  if (!isRecord(params)) {
    const error = new A2aError(A2A_ERROR_CODES.INVALID_PARAMS, 'params must be an object', {
      field: 'params',
    });
    return void reply(res, 200, errorResponse(echo, error));
  }
  return { id: echo, method, params };
}

function callerOf(req: IncomingMessage, principalHeader: string | undefined): Caller {
  const principal = principalOf(req, principalHeader);
  const client = socketClientKey(principal, req.socket);
  return {
    owner: ownerOf({ principal }),
    quota: quotaKeyOf({ principal, client }),
    ...(principal !== undefined ? { principal } : {}),
  };
}

async function handleRpc(
  req: IncomingMessage,
  res: ServerResponse,
  options: A2aRoutesOptions,
): Promise<void> {
  const request = await readRequest(req, res, options.body);
  if (request === undefined) return;
  const { id, method, params } = request;
  // The client went away: a wait or a stream stops (the run itself goes on).
  const left = new AbortController();
  const onClose = () => left.abort();
  res.once('close', onClose);
  let codec: Codec | undefined;
  try {
    codec = codecFor(headerOf(req, 'a2a-version'), CODECS);
    const operation = operationOf(codec, method);
    const caller = callerOf(req, options.principalHeader);
    if (operation === 'stream' || operation === 'subscribe') {
      const events =
        operation === 'stream'
          ? options.service.stream(params, caller, left.signal)
          : options.service.subscribe(params, caller, left.signal);
      return await streamEvents(res, id, codec, events);
    }
    const result = await answer(operation, params, caller, codec, options.service, left.signal);
    reply(res, 200, { jsonrpc: '2.0', id, result }, codec.version);
  } catch (error) {
    const answer = errorResponse(id, errorOf(error, options.logger, method));
    // A stream already under way ends with the error as its last event.
    if (res.headersSent) return void res.end(`data: ${JSON.stringify(answer)}\n\n`);
    reply(res, 200, answer, codec?.version);
  } finally {
    res.off('close', onClose);
  }
}

/** What `method` asks in the codec's version; -32601 for a method it does not have. */
function operationOf(codec: Codec, method: string): Operation {
  const operation = codec.operation(method);
  if (operation !== undefined) return operation;
  throw new A2aError(
    A2A_ERROR_CODES.METHOD_NOT_FOUND,
    `method not found in A2A ${codec.version}` +
      (codec === CODEC_V03 ? ' (for 1.0 method names send the header A2A-Version: 1.0)' : ''),
  );
}

async function answer(
  operation: Exclude<Operation, 'stream' | 'subscribe'>,
  params: Record<string, unknown>,
  caller: Caller,
  codec: Codec,
  service: A2aService,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  switch (operation) {
    case 'send':
      return codec.sent(await service.send(params, caller, codec.waits(params), signal));
    case 'get':
      return codec.task(await service.get(params, caller), true);
    case 'cancel':
      return codec.task(await service.cancel(params, caller), true);
    case 'list': {
      const page = service.list(readQuery(params, codec.state), caller);
      const artifacts = includesArtifacts(params);
      return { ...page, tasks: page.tasks.map((task) => codec.task(task, artifacts)) };
    }
    case 'push':
      throw new A2aError(
        A2A_ERROR_CODES.PUSH_NOTIFICATION_NOT_SUPPORTED,
        'push notifications are not supported: poll GetTask or use SendStreamingMessage',
      );
    case 'extendedCard':
      throw new A2aError(
        A2A_ERROR_CODES.EXTENDED_CARD_NOT_CONFIGURED,
        'there is no extended card: the public one at /.well-known/agent-card.json is all of it',
      );
  }
}

/**
 * Writes a stream's events, each one JSON-RPC response with the request's id: the task first,
 * then each status change, the result artifact before a completed status; ends once the task
 * settled. An error before the first event is answered as JSON (the caller's catch).
 */
async function streamEvents(
  res: ServerResponse,
  id: RequestId,
  codec: Codec,
  events: AsyncGenerator<TaskSnapshot>,
): Promise<void> {
  let first = true;
  const send = (result: Record<string, unknown>) => {
    if (res.destroyed || res.writableEnded) return;
    res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
  };
  for await (const task of events) {
    if (first) {
      first = false;
      res.writeHead(200, { ...STREAM_HEADERS, 'a2a-version': codec.version });
      send(codec.streamTask(task));
      continue;
    }
    if (task.state === 'completed') send(codec.artifactUpdate(task));
    send(codec.statusUpdate(task, isSettled(task.state)));
  }
  if (!res.headersSent) res.writeHead(200, { ...STREAM_HEADERS, 'a2a-version': codec.version });
  res.end();
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The error to answer: an A2A one as is; anything else logged, and answered without detail. */
function errorOf(error: unknown, logger: Logger, method: string): A2aError {
  try {
    // Throws for what is not a known refusal.
    return a2aErrorOf(error);
  } catch {
    logger.error({ err: error, method: method.slice(0, 64) }, 'a2a request failed');
    return new A2aError(A2A_ERROR_CODES.INTERNAL_ERROR, 'internal error');
  }
}

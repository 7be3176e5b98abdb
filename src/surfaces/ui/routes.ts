/**
 * The runs page's rows of the HTTP route table: `GET /ui` (the document), `GET /ui/app.js` and
 * `GET /ui/app.css` (static, public: they hold no data), and `GET /ui/events` (the caller's
 * live stream, behind the bearer token). The document is public so a browser can load it
 * without a header it cannot send; with `--token` it then holds no run data until the script
 * presents the token on the stream. Every answer carries the content security policy and is
 * never framed or sniffed. The transport runs the Host and Origin guards before any of these.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log/index.js';
import type { RunRegistry } from '../../runs/index.js';
import type { Route } from '../../transport/routes.js';
import { APP_SCRIPT } from './app-script.js';
import { pageCaller } from './caller.js';
import { CONTENT_SECURITY_POLICY, renderDocument } from './page.js';
import { renderPage } from './rows.js';
import { RunStream } from './stream.js';
import { APP_CSS } from './styles.js';

/** Live streams open at once, server-wide; one more is refused with 503. */
export const MAX_STREAMS = 64;

export interface UiRouteOptions {
  readonly registry: RunRegistry;
  /** Whether `--token` guards the server (the page must ask for it). */
  readonly tokenRequired: boolean;
  /** `--principal-header`, honoured only with a token (as the MCP endpoint honours it). */
  readonly principalHeader: string | undefined;
  readonly version: string;
  readonly logger: Logger;
  readonly now?: () => number;
}

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** The rows, and `close` to end every open stream (shutdown). */
export function uiRoutes(options: UiRouteOptions): { routes: Route[]; close: () => void } {
  const streams = new Set<RunStream>();
  const now = options.now ?? Date.now;
  const principalHeader = options.tokenRequired ? options.principalHeader : undefined;
  const file = (path: string, type: string, text: string): Route => ({
    path,
    methods: ['GET', 'HEAD'],
    auth: 'public',
    handle: (req, res) => sendText(req, res, 200, type, text, 'no-cache'),
  });
  const routes: Route[] = [
    {
      path: '/ui',
      methods: ['GET', 'HEAD'],
      auth: 'public',
      handle: (req, res) => {
        const page = pageOf(req);
        if (page === undefined) return refuse(req, res);
        const caller = pageCaller(req, principalHeader);
        const { registry } = options;
        const runs = options.tokenRequired
          ? undefined
          : renderPage(registry.list(caller), (id) => registry.peek(id, caller), page, now()).html;
        const document = renderDocument({
          runs,
          tokenRequired: options.tokenRequired,
          page,
          version: options.version,
        });
        sendText(req, res, 200, 'text/html; charset=utf-8', document.text, 'no-store');
      },
    },
    file('/ui/app.js', 'text/javascript; charset=utf-8', APP_SCRIPT),
    file('/ui/app.css', 'text/css; charset=utf-8', APP_CSS),
    {
      path: '/ui/events',
      methods: ['GET'],
      auth: 'bearer',
      handle: (req, res) => {
        const page = pageOf(req);
        if (page === undefined) return refuse(req, res);
        if (streams.size >= MAX_STREAMS) {
          res.writeHead(503, {
            ...SECURITY_HEADERS,
            'retry-after': '5',
            'content-type': 'text/plain',
          });
          return void res.end('too many live streams; retry later');
        }
        const stream = new RunStream({
          res,
          registry: options.registry,
          changes: options.registry.changes,
          caller: pageCaller(req, principalHeader),
          page,
          now,
          onEnd: () => streams.delete(stream),
        });
        streams.add(stream);
        for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
        stream.open();
      },
    },
  ];
  return {
    routes,
    close: () => {
      for (const stream of [...streams]) stream.close();
    },
  };
}

/** Most pages asked for: far past 1,000 runs, short enough to parse without surprises. */
const PAGE_PATTERN = /^[1-9]\d{0,5}$/;

/** The `page` query value (1 when absent), or undefined when it is not a page number. */
function pageOf(req: IncomingMessage): number | undefined {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  if (query === -1) return 1;
  const value = new URLSearchParams(url.slice(query + 1)).get('page');
  if (value === null) return 1;
  return PAGE_PATTERN.test(value) ? Number(value) : undefined;
}

function refuse(req: IncomingMessage, res: ServerResponse): void {
  sendText(
    req,
    res,
    400,
    'text/plain; charset=utf-8',
    'page must be a whole number from 1',
    'no-store',
  );
}

function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  text: string,
  cache: string,
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    'cache-control': cache,
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/**
 * The runs page document (`GET /ui`): a server-rendered shell with the caller's first page of
 * runs in it when no token guards the server, else a token form the page's script fills from
 * session storage (the token never reaches a URL: the input has no `name`, so even a form
 * submitted without the script sends nothing). The script and the stylesheet are separate
 * routes, so the content security policy can forbid every inline script and style.
 */
import { type Html, html } from './html.js';

/** The policy every `/ui` answer carries: only this origin's own script, style and connections. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export interface PageParts {
  /** The caller's runs, rendered; undefined when the token is needed first. */
  readonly runs: Html | undefined;
  /** Whether the page must ask for the server's `--token`. */
  readonly tokenRequired: boolean;
  /** The page being shown (1-based), which the script's stream asks for again. */
  readonly page: number;
  /** The running server's version, shown in the footer. */
  readonly version: string;
}

/** The whole document. */
export function renderDocument(parts: PageParts): Html {
  const auth = parts.tokenRequired ? 'token' : 'none';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>mhl runs</title>
<link rel="stylesheet" href="/ui/app.css">
<script src="/ui/app.js" defer></script>
</head>
<body data-auth="${auth}" data-page="${parts.page}" data-mcp="/mcp">
<header class="top"><h1>mhl runs</h1> <span id="live" class="live" data-live="off">not live</span> <button type="button" id="forget-token" hidden>Forget token</button></header>
<form id="token-form" class="token-form"${parts.tokenRequired ? '' : html` hidden`}>
<label for="token-input">This server needs its access token (<code>--token</code>). It is kept in this tab only.</label>
<input id="token-input" type="password" autocomplete="off" spellcheck="false" required>
<button type="submit">Connect</button>
<p id="token-error" class="error" hidden></p>
</form>
<p id="notice" class="notice" role="status" hidden></p>
<main id="runs">${parts.runs ?? ''}</main>
<noscript><p class="notice">Without JavaScript this page shows the runs as they were when it loaded${
    parts.tokenRequired ? ' (and cannot send the token)' : ''
  }; reload it to see changes.</p></noscript>
<footer>mhl ${parts.version}</footer>
</body>
</html>
`;
}

/**
 * The setup page's HTML: one server-rendered form (no script, no style sheet, no external
 * resource), the page after a POST (the stored record's metadata, never its value) and the
 * refusal page. Every text from outside (the secret's name, kind, label, an error) is escaped.
 * The headers forbid scripts, framing, caching and referrers, so the capability in the URL
 * reaches no other site and no cache.
 */
import type { ServerResponse } from 'node:http';
import { escapeHtml } from '../transport/html.js';
import type { SetupGrant } from './capabilities.js';
import type { SecretMetadata } from './records.js';

/** Nothing may load; the form may post only to this origin. */
export const SETUP_CSP =
  "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · mhl</title>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The form for `grant`; it posts back to the same capability URL. */
export function formPage(grant: SetupGrant, capability: string, problem?: string): string {
  const verb = grant.mode === 'add' ? 'Add' : 'Change';
  const kind =
    grant.kind === undefined ? '' : `<p>Kind: <code>${escapeHtml(grant.kind)}</code></p>`;
  const error =
    problem === undefined ? '' : `<p role="alert"><strong>${escapeHtml(problem)}</strong></p>`;
  const action = `/secrets/setup?capability=${encodeURIComponent(capability)}`;
  return document(
    `${verb} secret ${grant.name}`,
    `<h1>${verb} the secret <code>${escapeHtml(grant.name)}</code></h1>
${kind}${error}
<form method="post" action="${escapeHtml(action)}" autocomplete="off">
<p><label for="value">Value</label><br>
<input type="password" id="value" name="value" required minlength="4" autocomplete="new-password" spellcheck="false"></p>
<p><label for="label">Label (optional)</label><br>
<input type="text" id="label" name="label" maxlength="200" value="${escapeHtml(grant.label ?? '')}"></p>
<p><button type="submit">Save secret</button></p>
</form>
<p>This link works once and for ten minutes. The value goes only to this computer's vault.</p>`,
  );
}

/** After a stored secret: what was stored, without the value. */
export function donePage(record: SecretMetadata): string {
  return document(
    `Saved ${record.name}`,
    `<h1>Saved the secret <code>${escapeHtml(record.name)}</code></h1>
<dl>
<dt>Record id</dt><dd><code>${escapeHtml(record.id)}</code></dd>
<dt>Kind</dt><dd>${escapeHtml(record.kind)}</dd>
<dt>Label</dt><dd>${escapeHtml(record.label)}</dd>
<dt>Updated</dt><dd>${escapeHtml(record.updated)}</dd>
</dl>
<p>This link is used up. You can close this page.</p>`,
  );
}

/** A refusal: the code and a fixed sentence (never a path or a submitted value). */
export function refusalPage(title: string, text: string, code?: string): string {
  const shown = code === undefined ? '' : `<p><code>${escapeHtml(code)}</code></p>`;
  return document(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>\n${shown}`);
}

export function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'content-security-policy': SETUP_CSP,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  });
  res.end(html);
}

/**
 * Who owns a run or a job (issue 5 "Ownership"): the verified principal when the transport
 * supplies one (`--principal-header`), else the legacy session (`Mcp-Session-Id`, or the one
 * stdio connection), else the one shared anonymous owner of stateless callers — which means no
 * isolation between them. Owners are hashed so raw principals and session ids never sit in run
 * records or logs, and the two namespaces are prefixed so a principal can never collide with a
 * session id.
 */
import { createHash } from 'node:crypto';

/**
 * What ownership is decided from: a request context has this shape. Declared here rather than
 * imported, since the run layer sits below the protocol layer.
 */
export interface OwnerContext {
  readonly principal?: string | undefined;
  readonly session?: { readonly id: string } | undefined;
  /** The transport's client key (HTTP: principal digest, else address block), if any. */
  readonly client?: string | undefined;
}

/** The owner every stateless (modern, principal-less) caller shares. */
export const ANONYMOUS_OWNER = '';

/** The owner key of the caller behind `ctx`: a sha256 hex digest, or `ANONYMOUS_OWNER`. */
export function ownerOf(ctx: OwnerContext): string {
  if (ctx.principal !== undefined) return digest(`principal:${ctx.principal}`);
  if (ctx.session !== undefined) return digest(`session:${ctx.session.id}`);
  return ANONYMOUS_OWNER;
}

/**
 * Who the caller behind `ctx` is counted as for the run quotas: its principal when it has one
 * (then the same as its owner); else the client the transport saw (its address block), so one
 * client cannot multiply its quota by opening sessions, nor by ending them (a released run still
 * counts against it); else (stdio) its owner. Access stays decided by `ownerOf` alone.
 */
export function quotaKeyOf(ctx: OwnerContext): string {
  if (ctx.principal !== undefined || ctx.client === undefined) return ownerOf(ctx);
  return `client:${ctx.client}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

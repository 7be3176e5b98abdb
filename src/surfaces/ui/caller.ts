/**
 * Who is looking at the runs page: decided as the MCP endpoint decides it for a stateless
 * (2026-07-28) request, so the page lists exactly the runs `run/list` lists to the same
 * caller: the verified principal from `--principal-header` (honoured only behind `--token`),
 * else the one anonymous owner every stateless caller shares. The page never starts a run, so
 * its quota key is its owner.
 */
import type { IncomingMessage } from 'node:http';
import { type Caller, ownerOf } from '../../runs/index.js';

/** The principal `header` names on `req`, trimmed; undefined when absent, empty or not configured. */
export function principalOf(req: IncomingMessage, header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const raw = req.headers[header.toLowerCase()];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The run-layer caller behind a page request. */
export function pageCaller(req: IncomingMessage, principalHeader: string | undefined): Caller {
  const principal = principalOf(req, principalHeader);
  const owner = ownerOf({ principal });
  return { owner, quota: owner, ...(principal !== undefined ? { principal } : {}) };
}

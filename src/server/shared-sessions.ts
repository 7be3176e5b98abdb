/**
 * The legacy session directory on a shared store (`sessions/<id>/record`, zod-parsed on read),
 * so a session minted on one replica resolves on every other, and the housekeeping that reaps
 * records idle past the session TTL (in bounded batches, skipping rows another replica is
 * reaping). Only valid session ids (the transport's UUIDs) ever become keys.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.js';
import { type Store, storeCan } from '../store/index.js';
import type { SessionDirectory, SharedSession } from '../transport/index.js';

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A shared session record as read back; built on the first read, not at start-up. */
function buildSessionSchema() {
  return z.looseObject({
    id: z.string().regex(SESSION_ID),
    principalDigest: z.string().optional(),
    protocol: z.enum(['2025-11-25', '2025-06-18', '2025-03-26']),
    initialized: z.boolean(),
    lastUsed: z.number(),
  });
}
let sessionSchema: ReturnType<typeof buildSessionSchema> | undefined;

const keyOf = (id: string) => `sessions/${id}/record`;

/** A directory over `store`, with `sweep` for housekeeping. */
export function storeSessionDirectory(
  store: Store,
  logger: Logger,
): SessionDirectory & { sweep(idleTtlMs: number): Promise<number> } {
  return {
    publish: (session: SharedSession) =>
      SESSION_ID.test(session.id)
        ? store.put(keyOf(session.id), JSON.stringify(session))
        : Promise.resolve(),
    lookup: async (id) => {
      if (!SESSION_ID.test(id)) return undefined;
      const text = await store.get(keyOf(id));
      if (text === undefined) return undefined;
      try {
        sessionSchema ??= buildSessionSchema();
        const parsed = sessionSchema.safeParse(JSON.parse(text));
        if (parsed.success && parsed.data.id === id) return parsed.data as SharedSession;
      } catch {
        // Not JSON: treated as absent, like any record this version did not write.
      }
      logger.warn({ session_key: keyOf(id) }, 'unreadable shared session record');
      return undefined;
    },
    remove: (id) => (SESSION_ID.test(id) ? store.delete(keyOf(id)) : Promise.resolve()),
    sweep: async (idleTtlMs) => {
      if (!storeCan(store, 'scan')) return 0;
      let reaped = 0;
      for (let batch = 0; batch < 20; batch++) {
        const keys = await store.scan.purge({
          prefix: 'sessions/',
          suffix: '/record',
          updatedBefore: Date.now() - idleTtlMs,
          limit: 100,
        });
        reaped += keys.length;
        if (keys.length < 100) break;
      }
      return reaped;
    },
  };
}

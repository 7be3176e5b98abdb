/**
 * Claims of released runs on a shared store. A legacy session's runs outlive it: when it ends,
 * each of its runs gets a claim key naming the owner it was released from, and the first caller
 * to name the run afterwards takes it with one compare-and-swap on that key, so of two callers
 * on two replicas exactly one wins. The run record keeps its owner (whoever executes it writes
 * it as it was), so nothing but the claim makes a released run reachable.
 *
 *   state/<runId>/mhl-claim.json   {"released": <owner>, "claimant"?: <owner>}
 *
 * Knows nothing of the registry's table: it only answers whether a caller may reach a run.
 */
import { checkSession } from '../runtime/index.js';
import { type Store, storeCan } from '../store/index.js';
import { ownedRecords } from './shared-runs.js';

interface Claim {
  readonly released: string;
  readonly claimant?: string;
}

/** The key of a run's claim. */
export function claimKey(runId: string): string {
  return `state/${checkSession(runId)}/mhl-claim.json`;
}

function parseClaim(text: string): Claim | undefined {
  try {
    const value = JSON.parse(text) as Partial<Claim>;
    if (typeof value.released !== 'string') return undefined;
    if (value.claimant !== undefined && typeof value.claimant !== 'string') return undefined;
    return value as Claim;
  } catch {
    return undefined;
  }
}

/**
 * Makes every run `owner` holds in the store claimable (its session ended). A run already
 * released keeps its first claim key. Resolves to how many runs were released now.
 */
export async function releaseShared(store: Store, owner: string): Promise<number> {
  if (!storeCan(store, 'cas')) return 0;
  let released = 0;
  for (const record of await ownedRecords(store, owner)) {
    const claim: Claim = { released: owner };
    const key = claimKey(record.view.runId);
    if ((await store.cas.putIfAbsent(key, JSON.stringify(claim))) !== undefined) released++;
  }
  return released;
}

/**
 * Whether `caller` may reach a run whose record names `recordOwner` (undefined: a record that
 * names nobody), claiming it when it was released and nobody claimed it yet. 'claimed' when this
 * call took it; 'held' when the caller took it earlier; 'foreign' otherwise.
 * @throws StoreError when the claim cannot be read or written.
 */
export async function claimRun(
  store: Store,
  runId: string,
  recordOwner: string | undefined,
  caller: string,
): Promise<'claimed' | 'held' | 'foreign'> {
  if (!storeCan(store, 'cas')) return 'foreign';
  const key = claimKey(runId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await store.cas.getVersioned(key);
    if (current === undefined) {
      // Only a record that names nobody is claimable without a release.
      if (recordOwner !== undefined) return 'foreign';
      const claim: Claim = { released: '', claimant: caller };
      if ((await store.cas.putIfAbsent(key, JSON.stringify(claim))) !== undefined) return 'claimed';
      continue;
    }
    const claim = parseClaim(current.value);
    if (claim === undefined || claim.released !== (recordOwner ?? '')) return 'foreign';
    if (claim.claimant !== undefined) return claim.claimant === caller ? 'held' : 'foreign';
    const next: Claim = { released: claim.released, claimant: caller };
    if ((await store.cas.compareAndSwap(key, current.version, JSON.stringify(next))) !== undefined)
      return 'claimed';
  }
  return 'foreign';
}

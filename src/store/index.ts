/**
 * The state store layer: the `Store` contract and its implementations. Callers ask a store what
 * it can do (`storeCan`) and never branch on its class. Knows nothing of runs or workflows.
 */
export {
  type AtomicFs,
  DIR_MODE,
  errnoCode,
  FILE_MODE,
  NODE_FS,
  renameOrCopy,
  syncDir,
  TEMP_PREFIX,
  type WriteAtomicOptions,
  writeAtomic,
  writeFileAtomic,
} from './atomic-file.js';
export {
  CACHE_ENV,
  cacheKey,
  cacheRoot,
  readCacheEntry,
  removeCacheEntry,
  writeCacheEntry,
} from './cache-file.js';
export { DirStore, type DirStoreOptions } from './dir.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
export { type ProbeFailure, probeWritable } from './probe.js';
export {
  type BatchCapability,
  type BatchWrite,
  type CasCapability,
  type DeleteOptions,
  type Fence,
  type FenceCapability,
  type FencedWriteOptions,
  type Lease,
  type LeaseCapability,
  type LeaseState,
  MAX_KEY_LENGTH,
  MAX_SEGMENT_BYTES,
  type ScanCapability,
  type ScanPage,
  type ScanQuery,
  STORE_CAPABILITIES,
  STORE_ERROR_CODES,
  type Store,
  type StoreCapability,
  StoreError,
  type StoreErrorCode,
  type StoreOptions,
  type StoreWith,
  storeCan,
  type Versioned,
  validateKey,
  validatePrefix,
  validateValue,
} from './store.js';
export { WriteOffloader, type WriteOffloaderOptions } from './write-offload.js';

/**
 * The modes and temp-file prefix every file mhl writes shares (atomic-file.ts, cache-file.ts,
 * probe.ts). A module of its own so the launcher, which reads the code cache through
 * cache-file.ts before anything else loads, does not load the write worker with them.
 */

/** Mode of every file written (owner read/write). */
export const FILE_MODE = 0o600;
/** Mode of every directory created (owner only). */
export const DIR_MODE = 0o700;
/** Temp files start with this; keys never have a segment starting with ".". */
export const TEMP_PREFIX = '.tmp-';

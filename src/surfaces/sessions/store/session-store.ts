/**
 * Sessions on disk (spec session-profile §2.2–§2.5): planning folders under one planning root,
 * each with `session.json` and its seal `.session-token`. A session is opened by its
 * six-character index: the folder is found, the file's bytes are checked against the seal in
 * constant time, and only then parsed (SEAL_MISMATCH otherwise: the call goes no further). Child
 * sessions live inside their root's file; saving any of them rewrites and reseals the root.
 * Every write is atomic (temp, fsync, rename, copy across devices; `sealed-write.ts`), mode
 * 0600; there is no write that does not reseal. Calls on one folder are serialised by `withFolder`.
 */
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { canonicalJson, seal, verifySeal } from './canonical.js';
import { SESSION_CODES, SessionStoreError } from './errors.js';
import { LOCK_FILE, lockFolder } from './folder-lock.js';
import { writeSealedPair } from './sealed-write.js';
import { type SessionFile, sessionSchemas } from './session.schema.js';

export const SESSION_FILE = 'session.json';
export const SEAL_FILE = '.session-token';
const INDEX = /^[A-Z2-7]{6}$/;
/**
 * A planning slug: one plain folder name. No leading dot, so `.`, `..` and hidden names are
 * out; no separators, so it cannot name anything but a direct child of the planning root.
 */
export const PLANNING_SLUG = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** An opened session: the root file it lives in, and where in it the session is. */
export interface SessionHandle {
  readonly folder: string;
  /** The whole file (the root session). */
  readonly root: SessionFile;
  /** Path of `state` inside `root` (`[]` for the root; `triggeredWorkflows.N.state` segments). */
  readonly path: readonly (string | number)[];
  /** The session itself (the root, or an embedded child). */
  readonly state: SessionFile;
  /** Index of the session that dispatched this one, when it is a child. */
  readonly parent?: SessionFile | undefined;
  readonly transient: boolean;
}

export interface SessionStoreOptions {
  readonly planningRoot: string;
  readonly key: Buffer;
}

export class SessionStore {
  readonly planningRoot: string;
  readonly #key: Buffer;
  /** Index → folder, checked against the file on every use (a hint, never the authority). */
  readonly #known = new Map<string, string>();
  readonly #transient = new Map<string, string>();
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(options: SessionStoreOptions) {
    this.planningRoot = options.planningRoot;
    this.#key = options.key;
  }

  /** The HMAC key (trace tokens share it). */
  get key(): Buffer {
    return this.#key;
  }

  /** The index of the session at `folder` (and `jsonPath` for an embedded child). */
  indexFor(folder: string, jsonPath?: string): string {
    const real = realpathSync(folder);
    const digest = createHmac('sha256', this.#key)
      .update(jsonPath === undefined ? real : `${real}:${jsonPath}`, 'utf8')
      .digest();
    // First 30 bits, six base32 digits.
    const bits = digest.readUInt32BE(0) >>> 2;
    let out = '';
    for (let i = 5; i >= 0; i--) out += B32[(bits >>> (i * 5)) & 31];
    return out;
  }

  /**
   * Runs `fn` with the folder's lock held, so read-modify-write calls never interleave: the
   * in-process queue orders this process's calls, the lock file (`folder-lock.ts`) orders them
   * against other server processes on the same workspace.
   */
  async withFolder<T>(folder: string, fn: () => Promise<T>): Promise<T> {
    const before = this.#locks.get(folder) ?? Promise.resolve();
    const locked = async () => {
      const release = await lockFolder(folder);
      try {
        return await fn();
      } finally {
        release();
      }
    };
    const run = before.then(locked, locked);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(folder, settled);
    try {
      return await run;
    } finally {
      if (this.#locks.get(folder) === settled) this.#locks.delete(folder);
    }
  }

  /** The planning folder of `slug` when a session lives there. @throws COLLISION */
  findSlug(slug: string): string | undefined {
    const hits = this.#scan().filter((f) => f.split('/').pop() === slug);
    if (hits.length > 1) throw new SessionStoreError(SESSION_CODES.COLLISION);
    return hits[0];
  }

  /** Where the session with `index` lives. @throws INVALID_INDEX, NOT_FOUND, COLLISION */
  locate(index: string): string {
    if (!INDEX.test(index)) throw new SessionStoreError(SESSION_CODES.INVALID_INDEX);
    const transient = this.#transient.get(index);
    if (transient !== undefined) return transient;
    // A folder this process already served the index from stays its home while it holds a
    // session file: the seal check on open decides whether its content may be used, so a
    // damaged file is SEAL_MISMATCH there, not an unknown index.
    const hint = this.#known.get(index);
    if (hint !== undefined && existsSync(join(hint, SESSION_FILE))) return hint;
    const hits = this.#scan().filter((f) => this.#holds(f, index));
    if (hits.length > 1) throw new SessionStoreError(SESSION_CODES.COLLISION);
    const found = hits[0];
    if (found === undefined) throw new SessionStoreError(SESSION_CODES.NOT_FOUND);
    this.#known.set(index, found);
    return found;
  }

  /** Opens the session `index`: seal verified, then schema. @throws SessionStoreError */
  open(index: string): SessionHandle {
    const folder = this.locate(index);
    const root = this.readFolder(folder);
    const found = findIndex(root, index, []);
    if (found === undefined) throw new SessionStoreError(SESSION_CODES.NOT_FOUND);
    return { folder, root, ...found, transient: [...this.#transient.values()].includes(folder) };
  }

  /** The verified root session file of `folder`. @throws SEAL_MISMATCH */
  readFolder(folder: string): SessionFile {
    const bytes = this.#readPair(folder);
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new SessionStoreError(SESSION_CODES.SEAL_MISMATCH);
    }
    const parsed = sessionSchemas().sessionFile.safeParse(json);
    if (!parsed.success) throw new SessionStoreError(SESSION_CODES.SEAL_MISMATCH);
    return parsed.data;
  }

  /**
   * The bytes of the session file, verified. Readers take no lock, so the seal is read before
   * and after the file: a writer replaces seal (old+new), file, seal (new) in that order, so the
   * seal read before covers an old file and the one read after covers a new file. Several
   * writes landing between the reads can still tear the triple; it is read again, a few times,
   * before the pair is called damaged (a real tamper fails every time).
   */
  #readPair(folder: string): Buffer {
    for (let attempt = 0; ; attempt++) {
      let bytes: Buffer;
      let first: string;
      let second: string;
      try {
        first = readFileSync(join(folder, SEAL_FILE), 'utf8');
        bytes = readFileSync(join(folder, SESSION_FILE));
        second = readFileSync(join(folder, SEAL_FILE), 'utf8');
      } catch {
        // Missing, a folder in its place, unreadable: the pair cannot be verified (§2.5).
        throw new SessionStoreError(SESSION_CODES.SEAL_MISMATCH);
      }
      if (verifySeal(this.#key, bytes, first) || verifySeal(this.#key, bytes, second)) return bytes;
      if (attempt >= 3 || !existsSync(join(folder, LOCK_FILE)))
        throw new SessionStoreError(SESSION_CODES.SEAL_MISMATCH);
    }
  }

  /** Writes the root file and then its seal, both atomically, 0600. */
  async save(folder: string, root: SessionFile): Promise<void> {
    const text = canonicalJson(root);
    await writeSealedPair(
      folder,
      SESSION_FILE,
      text,
      SEAL_FILE,
      seal(this.#key, text),
      this.#sealOnDisk(folder),
    );
    this.#known.set(root.sessionIndex, folder);
  }

  /**
   * The seal that covers the session file on disk now, if one does: the old seal a write keeps
   * beside the new one until the new file is in place. Never a seal of bytes that are not there
   * (after a killed write the seal file may name a seal whose file never landed).
   */
  #sealOnDisk(folder: string): string | undefined {
    try {
      const bytes = readFileSync(join(folder, SESSION_FILE));
      const current = seal(this.#key, bytes);
      return verifySeal(this.#key, bytes, readFileSync(join(folder, SEAL_FILE), 'utf8'))
        ? current
        : undefined;
    } catch {
      // A new folder: nothing on disk to keep verifiable.
      return undefined;
    }
  }

  /** Creates the durable planning folder `<planningRoot>/<slug>` (0700) and returns it. */
  makeFolder(slug: string): string {
    // The tools check the slug already; this is the store's own guard, so no caller can make it
    // write outside the planning root (a `..` slug once put session.json in the workspace).
    const root = resolve(this.planningRoot);
    const folder = resolve(root, slug);
    if (!PLANNING_SLUG.test(slug) || dirname(folder) !== root)
      throw new SessionStoreError(SESSION_CODES.WORKSPACE_INVALID, 'invalid planning slug');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // A symlink planted under the root could still lead elsewhere: compare the real paths.
    if (dirname(realpathSync(folder)) !== realpathSync(root))
      throw new SessionStoreError(SESSION_CODES.WORKSPACE_INVALID, 'planning folder is a link');
    return folder;
  }

  /** Registers a transient (tmp) folder under its index for this process. */
  registerTransient(index: string, folder: string): void {
    this.#transient.set(index, folder);
  }

  /** Moves a transient session's registration to its durable folder and removes the tmp one. */
  promote(index: string, folder: string): void {
    const old = this.#transient.get(index);
    this.#transient.delete(index);
    this.#known.set(index, folder);
    if (old !== undefined && old !== folder) rmSync(old, { recursive: true, force: true });
  }

  #holds(folder: string, index: string): boolean {
    try {
      const json = JSON.parse(readFileSync(join(folder, SESSION_FILE), 'utf8')) as SessionFile;
      return findIndex(json, index, []) !== undefined;
    } catch {
      // Unreadable or half-written: it holds nothing a lookup may use.
      return false;
    }
  }

  /** Every folder under the planning root that holds a session file. */
  #scan(): string[] {
    const out: string[] = [];
    const walk = (dir: string, depth: number) => {
      let names: import('node:fs').Dirent[];
      try {
        names = readdirSync(dir, { withFileTypes: true });
      } catch {
        // The planning root does not exist yet: no sessions.
        return;
      }
      if (names.some((n) => n.isFile() && n.name === SESSION_FILE)) out.push(dir);
      if (depth > 6) return;
      for (const n of names)
        if (n.isDirectory() && !n.name.startsWith('.')) walk(join(dir, n.name), depth + 1);
    };
    walk(this.planningRoot, 0);
    return out;
  }
}

/** Finds the session with `index` in `state` or its embedded children. */
function findIndex(
  state: SessionFile,
  index: string,
  path: (string | number)[],
  parent?: SessionFile,
): { state: SessionFile; path: (string | number)[]; parent?: SessionFile } | undefined {
  if (state.sessionIndex === index)
    return parent === undefined ? { state, path } : { state, path, parent };
  const children = state.triggeredWorkflows ?? [];
  for (let i = 0; i < children.length; i++) {
    const child = children[i]?.state;
    if (child === undefined) continue;
    const hit = findIndex(child, index, [...path, 'triggeredWorkflows', i, 'state'], state);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

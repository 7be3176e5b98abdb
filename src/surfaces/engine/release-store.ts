/**
 * The releases a server can serve checkpoints from: the active release (refreshed from its
 * folder when the folder changes, at each `start_workflow`), the migration target, and every
 * release pinned before, kept under `<state-dir>/releases/<digest>/` so a checkpoint is served
 * by the release it names after the active one moved on, by this process or the next. A
 * refresh that does not load keeps the last good release and is reported; a pinned release
 * that is gone or does not match its digest is `release_unavailable`, never re-pinned.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { EngineError } from './errors.js';
import type { Release } from './release.js';
import { loadRelease } from './release-load.js';

/** What went wrong with the last refresh of the active release. */
export interface RefreshFailure {
  readonly at: string;
  readonly problems: readonly string[];
}

export interface ReleaseStoreOptions {
  readonly activeRoot: string;
  readonly active: Release;
  readonly target?: Release | undefined;
  /** `<state-dir>/releases`; without it pinned releases live in memory only. */
  readonly storeDir?: string | undefined;
  readonly onRefresh?: (event: {
    ok: boolean;
    digest?: string;
    problems?: readonly string[];
  }) => void;
}

export class ReleaseStore {
  readonly #root: string;
  readonly #storeDir: string | undefined;
  readonly #loaded = new Map<string, Release>();
  readonly #onRefresh: ReleaseStoreOptions['onRefresh'];
  #active: Release;
  #fingerprint: string;
  readonly target: Release | undefined;
  #failure: RefreshFailure | undefined;

  constructor(options: ReleaseStoreOptions) {
    this.#root = options.activeRoot;
    this.#storeDir = options.storeDir;
    this.#onRefresh = options.onRefresh;
    this.#active = options.active;
    this.target = options.target;
    this.#fingerprint = fingerprint(this.#root);
    this.#pin(options.active);
    if (options.target) this.#pin(options.target);
  }

  /** The active release, reloaded first when its folder changed since the last look. */
  active(): Release {
    const now = fingerprint(this.#root);
    if (now === this.#fingerprint) return this.#active;
    this.#fingerprint = now;
    const loaded = loadRelease(this.#root);
    if (!loaded.ok) {
      this.#failure = { at: new Date().toISOString(), problems: loaded.problems };
      this.#onRefresh?.({ ok: false, problems: loaded.problems });
      return this.#active;
    }
    if (loaded.release.digest !== this.#active.digest) {
      try {
        this.#pin(loaded.release);
      } catch (error) {
        // Unstored, its checkpoints would not outlive this process: keep the last good one.
        const problems = [`the release store cannot be written (${errorCode(error)})`];
        this.#failure = { at: new Date().toISOString(), problems };
        this.#onRefresh?.({ ok: false, problems });
        return this.#active;
      }
      this.#active = loaded.release;
      this.#onRefresh?.({ ok: true, digest: loaded.release.digest });
    }
    this.#failure = undefined;
    return this.#active;
  }

  /** The last refresh's failure while the last good release is served, else undefined. */
  refreshFailure(): RefreshFailure | undefined {
    return this.#failure;
  }

  /** The release a checkpoint pinned; `release_unavailable` when it cannot be had intact. */
  pinned(digest: string): Release {
    const known = this.#loaded.get(digest);
    if (known) return known;
    const unavailable = new EngineError(
      'release_unavailable',
      'the release this checkpoint pinned is no longer available on this server',
    );
    if (this.#storeDir === undefined || !/^[0-9a-f]{64}$/.test(digest)) throw unavailable;
    const loaded = loadRelease(join(this.#storeDir, digest));
    if (!loaded.ok || loaded.release.digest !== digest) throw unavailable;
    this.#loaded.set(digest, loaded.release);
    return loaded.release;
  }

  /** Every release this store holds in memory, for resources. */
  loaded(): readonly Release[] {
    return [...this.#loaded.values()];
  }

  #pin(release: Release): void {
    this.#loaded.set(release.digest, release);
    if (this.#storeDir !== undefined) writeStored(this.#storeDir, release);
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'unknown error';
}

/** A cheap change detector for a folder: every entry's path, size, mtime and inode. */
function fingerprint(root: string): string {
  const parts: string[] = [];
  const walk = (dir: string, rel: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      parts.push(`!${rel}`);
      return;
    }
    for (const name of entries) {
      const path = join(dir, name);
      try {
        const s = lstatSync(path);
        parts.push(`${rel}/${name}:${s.size}:${s.mtimeMs}:${s.ino}:${s.mode}`);
        if (s.isDirectory()) walk(path, `${rel}/${name}`);
      } catch {
        parts.push(`!${rel}/${name}`);
      }
    }
  };
  walk(root, '');
  return parts.join('\n');
}

/** Writes a release's files under `<dir>/<digest>/` once: temp folder, fsync, rename. */
function writeStored(dir: string, release: Release): void {
  const final = join(dir, release.digest);
  try {
    lstatSync(final);
    return;
  } catch {
    // Not stored yet: written below.
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.tmp-${release.digest.slice(0, 16)}-${randomBytes(4).toString('hex')}`);
  try {
    for (const file of release.files.values()) {
      const path = join(temp, file.path);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, file.text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    renameSync(temp, final);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    // Another process stored the same digest first: same bytes, nothing lost.
    if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}

/**
 * `mhl pack DIR -o FILE [--new-key]`: encrypts every non-hidden file under DIR into a DMPK v2
 * pack for `mhl serve mcp --http --workflows-pack`. The pack is built in memory, decrypted
 * again and its workflows loaded and linted from that in-memory copy; only if they load clean
 * is it written (atomically, mode 0600). The key comes from `MHL_SERVE_WORKFLOWS_KEY`, or
 * `--new-key` makes one and prints it, and nothing else, on stdout. Exit 0 written, 1 not
 * written (bad folder, bad workflows, bad key, write failure), 2 usage error.
 */
import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type CatalogResult, loadPackCatalog } from '../catalog/index.js';
import { formatDiagnostic } from '../lang/index.js';
import {
  collectPackFiles,
  encodePack,
  formatWorkflowsKey,
  newWorkflowsKey,
  PackError,
  parseWorkflowsKey,
  WORKFLOWS_KEY_ENV,
} from '../pack/index.js';
import { NODE_FS, writeAtomic } from '../store/index.js';
import { displayPath, reportCatalogProblems } from './files.js';
import type { Output } from './lint.js';

export interface PackCliOptions {
  /** Where to write the pack. */
  readonly output: string;
  /** Generate a key and print it on stdout instead of reading `MHL_SERVE_WORKFLOWS_KEY`. */
  readonly newKey?: boolean;
}

/** Runs `mhl pack`; resolves to the exit status. `env` is where the key is read from. */
export async function runPack(
  dir: string,
  options: PackCliOptions,
  io: Output,
  env: Readonly<Record<string, string | undefined>> = process.env,
  signal?: AbortSignal,
): Promise<number> {
  const key = packKey(options, env, io);
  if (typeof key === 'number') return key;
  try {
    return await packWith(resolve(dir), resolve(options.output), key, options, io, signal);
  } finally {
    key.fill(0);
  }
}

/** The key to pack with, or the exit status when there is none usable. */
function packKey(
  options: PackCliOptions,
  env: Readonly<Record<string, string | undefined>>,
  io: Output,
): Buffer | number {
  const text = env[WORKFLOWS_KEY_ENV];
  const given = text !== undefined && text !== '';
  if (options.newKey) {
    if (!given) return newWorkflowsKey();
    io.err(
      `mhl pack: --new-key and ${WORKFLOWS_KEY_ENV} contradict each other: unset the variable to make a new key, or drop --new-key to use it`,
    );
    return 2;
  }
  if (!given) {
    io.err(`mhl pack: set ${WORKFLOWS_KEY_ENV} to the key (64 hex digits), or pass --new-key`);
    return 2;
  }
  try {
    return parseWorkflowsKey(text);
  } catch (e) {
    if (!(e instanceof PackError)) throw e;
    io.err(`mhl pack: ${e.code}: ${e.message}`);
    return 1;
  }
}

async function packWith(
  root: string,
  output: string,
  key: Buffer,
  options: PackCliOptions,
  io: Output,
  signal: AbortSignal | undefined,
): Promise<number> {
  let bytes: Buffer;
  let loaded: CatalogResult;
  let files: number;
  try {
    const collected = collectPackFiles(root, output);
    for (const s of collected.skipped) io.err(`mhl pack: skipped ${s.path}: ${s.reason}`);
    files = collected.entries.length;
    bytes = encodePack(collected.entries, key);
    // Load from the bytes about to be written, so the pack on disk is known to serve.
    loaded = loadPackCatalog(bytes, key, root);
  } catch (e) {
    if (!(e instanceof PackError)) throw e;
    io.err(`mhl pack: ${e.code}: ${e.message}`);
    return 1;
  }
  if (!loaded.ok) {
    reportCatalogProblems(loaded, io, 'mhl pack');
    io.err('mhl pack: nothing written: the workflows must load and lint clean from the pack');
    return 1;
  }
  for (const w of loaded.warnings) io.err(formatDiagnostic(w, displayPath(w.span.file)));
  try {
    removeStaleTemps(output);
    await writeAtomic(NODE_FS, output, bytes, {
      signal,
      tempPrefix: tempPrefixOf(output, process.pid),
    });
  } catch (e) {
    if (signal?.aborted) {
      io.err('mhl pack: interrupted: nothing written');
      return 1;
    }
    io.err(`mhl pack: cannot write ${output}: ${(e as Error).message}`);
    return 1;
  }
  const workflows = loaded.catalog.workflows.size;
  io.err(
    `mhl pack: packed ${files} files (${workflows} workflows, ${bytes.length} bytes) into ${displayPath(output)}`,
  );
  if (options.newKey) io.out(formatWorkflowsKey(key));
  return 0;
}

/**
 * The name a pack's temp file starts with: beside the output, hidden, naming the output and the
 * writing process, so a later run can tell a dead writer's leftover from a live one's file.
 */
function tempPrefixOf(output: string, pid: number): string {
  return `.${basename(output)}.tmp-${pid}-`;
}

/**
 * Removes what an earlier `mhl pack` to the same output left when it was killed (SIGKILL gives
 * it no chance): its temp files whose writing process no longer exists. Never throws.
 */
function removeStaleTemps(output: string): void {
  const dir = dirname(output);
  const prefix = `.${basename(output)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // No folder to clean: the write itself reports why it cannot go there.
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length))?.[1]);
    if (!name.startsWith(prefix) || !Number.isSafeInteger(pid) || isRunning(pid)) continue;
    try {
      rmSync(join(dir, name), { force: true });
    } catch {
      // Not ours to remove after all (another user's folder, say): leave it, write anyway.
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

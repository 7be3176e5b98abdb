/**
 * Libraries loaded on first use rather than at start-up. Ajv and yaml together cost ~40 ms to
 * load, and a stdio server answers its first request before it needs either (validators are
 * compiled in the background once it is serving; yaml only locates a bad schema's error).
 * `createRequire` loads them synchronously, so their callers stay synchronous.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type * as Yaml from 'yaml';

const require = createRequire(import.meta.url);

/** The Ajv class for JSON Schema 2020-12. */
export function ajv2020Class(): typeof Ajv2020 {
  return (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020;
}

/** The Ajv class for draft-07. */
export function ajvClass(): typeof Ajv {
  return (require('ajv') as { Ajv: typeof Ajv }).Ajv;
}

/** The `yaml` package. */
export function yaml(): typeof Yaml {
  return require('yaml') as typeof Yaml;
}

/** The packages above, which a checked catalog depends on (yaml has no dependencies). */
const CHECKER_PACKAGES = ['ajv', 'yaml'] as const;

let versions: readonly string[] | null | undefined;

/**
 * `name@version` of every package outside the bundle whose code the check runs: Ajv, yaml and
 * what they depend on, as installed where this module loads them. The bundle's own hash does not
 * cover them, so the catalog cache keys on these too (an `npm update` of Ajv must miss). Read
 * once; undefined when a package.json cannot be read (then nothing may be cached by them).
 */
export function checkerVersions(): readonly string[] | undefined {
  if (versions === undefined) versions = readVersions();
  return versions ?? undefined;
}

function readVersions(): readonly string[] | null {
  const found = new Set<string>();
  const visit = (name: string, from: string): boolean => {
    const dir = packageDir(name, from);
    if (dir === undefined) return false;
    let manifest: { version?: unknown; dependencies?: Record<string, unknown> };
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as typeof manifest;
    } catch {
      return false;
    }
    if (typeof manifest.version !== 'string') return false;
    const id = `${name}@${manifest.version}`;
    if (found.has(id)) return true;
    found.add(id);
    return Object.keys(manifest.dependencies ?? {}).every((dep) => visit(dep, dir));
  };
  const here = dirname(fileURLToPath(import.meta.url));
  if (!CHECKER_PACKAGES.every((name) => visit(name, here))) return null;
  return [...found].sort();
}

/**
 * The folder of package `name` as `require` finds it from `from`: the first
 * `node_modules/<name>` up the tree, by its real path (a pnpm layout links packages, and each
 * one's dependencies lie beside its real folder). Looked up by hand, not with
 * `require.resolve`, whose resolution of six `package.json` files cost a server ~3 ms a start.
 */
function packageDir(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') {
      try {
        return realpathSync(join(dir, 'node_modules', name));
      } catch {
        // Not here: on up the tree.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Libraries loaded on first use rather than at start-up. Ajv and yaml together cost ~40 ms to
 * load, and a stdio server answers its first request before it needs either (validators are
 * compiled in the background once it is serving; yaml only locates a bad schema's error).
 * `createRequire` loads them synchronously, so their callers stay synchronous.
 */
import { createRequire } from 'node:module';
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
  const visit = (name: string, from: NodeJS.Require): boolean => {
    let path: string;
    let manifest: { version?: unknown; dependencies?: Record<string, unknown> };
    try {
      path = from.resolve(`${name}/package.json`);
      manifest = from(path) as typeof manifest;
    } catch {
      return false;
    }
    if (typeof manifest.version !== 'string') return false;
    const id = `${name}@${manifest.version}`;
    if (found.has(id)) return true;
    found.add(id);
    const inner = createRequire(path);
    return Object.keys(manifest.dependencies ?? {}).every((dep) => visit(dep, inner));
  };
  if (!CHECKER_PACKAGES.every((name) => visit(name, require))) return null;
  return [...found].sort();
}

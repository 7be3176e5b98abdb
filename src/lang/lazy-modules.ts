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

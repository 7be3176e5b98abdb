/**
 * Reads the projected schemas back: follows a property's `$ref` into the `$defs` of the schema
 * it belongs to, for consumers that need a declared type's own keywords (an elicitation form
 * can carry no `$ref`). Reads only: never changes or copies a schema into another.
 */
import type { JsonObject, JsonValue } from './types.js';

const DEFS_PREFIX = '#/$defs/';

/**
 * The schema `schema` stands for inside `root`: while it is a `$ref` to an entry of `root`'s
 * `$defs`, that entry, with the keywords written beside the `$ref` (`default`, `description`)
 * kept over the entry's. A `$ref` it cannot follow stays as it is; a loop of `$ref`s stops.
 * Recursion below the top (a shape's field, an array's `items`) is left as `$ref`s.
 */
export function resolveSchemaRef(root: JsonObject, schema: JsonValue | undefined): JsonObject {
  if (!isObject(schema)) return {};
  const defs = isObject(root['$defs']) ? root['$defs'] : {};
  let current: JsonObject = schema;
  const seen = new Set<string>();
  for (;;) {
    const ref = current['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith(DEFS_PREFIX)) return current;
    const name = ref.slice(DEFS_PREFIX.length);
    const target = Object.hasOwn(defs, name) ? defs[name] : undefined;
    if (!isObject(target) || seen.has(name)) return current;
    seen.add(name);
    const { $ref: _followed, ...beside } = current;
    current = { ...target, ...beside };
  }
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

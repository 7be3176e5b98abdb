import { yaml } from '../../../lang/index.js';

/**
 * The YAML every response carries (no folding, so hashes and lengths are of one-line text).
 * No anchors and aliases: parsed techniques are cached and composed from shared contract
 * entries, so one object can appear twice in a response (an orchestrator bundle's inherited
 * inputs); the public server builds every entry afresh and writes each one out in full.
 */
export function toYaml(value: unknown): string {
  return yaml().stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

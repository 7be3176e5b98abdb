import { stringify } from 'yaml';

/** The YAML every response carries (no folding, so hashes and lengths are of one-line text). */
export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0 });
}

/**
 * The raw activity text `get_activity` delivers (spec session-profile §3.6 item 5): the file as
 * written, with every `ref:` line of a checkpoint step replaced by the fragment's body at the
 * same indentation, so a worker never sees a ref. Text in, text out.
 */
import { yaml as yamlLib } from '../../../lang/index.js';
import type { CheckpointBody } from '../definition/definition.schema.js';

/**
 * Rewrites checkpoint `ref:` lines with `resolve(ref)`'s body; a ref that does not resolve is
 * left as written (the loader already excluded such an activity).
 */
export function materialiseRefs(
  text: string,
  resolve: (ref: string) => CheckpointBody | undefined,
): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let checkpointIndent = -1;
  for (const line of lines) {
    const item = /^(\s*)- (.*)$/.exec(line);
    if (item)
      checkpointIndent = /^kind:\s*checkpoint\s*$/.test(item[2] as string)
        ? (item[1] as string).length + 2
        : -1;
    else if (/^(\s*)kind:\s*checkpoint\s*$/.test(line))
      checkpointIndent = (/^(\s*)/.exec(line)?.[1] ?? '').length;
    const ref = /^(\s*)ref:\s*['"]?([^'"#\s]+)['"]?\s*$/.exec(line);
    if (ref && (ref[1] as string).length === checkpointIndent) {
      const body = resolve(ref[2] as string);
      if (body !== undefined) {
        const pad = ref[1] as string;
        const yaml = yamlLib().stringify(body, { lineWidth: 0 }).trimEnd();
        out.push(...yaml.split('\n').map((l) => pad + l));
        continue;
      }
    }
    out.push(line);
  }
  return out.join('\n');
}

/**
 * Resource links of eagerly bundled step techniques (spec session-profile §3.9 item 4): the
 * `[text](id#section)` and `[text](wf/id)` links the technique loader rewrote, in order of first
 * appearance, and the ones no resource answers (warned about, never fatal).
 */
import { findResource, parseResourceRef } from '../definition/resources.js';

const LINK = /\]\(([^)\s]+)\)/g;

/** Resource ids linked from `texts`, deduplicated, in order. */
export function linkedResources(texts: readonly string[]): string[] {
  return linkedFrom(texts.map((text) => ({ text, workflow: '' }))).map((l) => l.ref);
}

/** Resource ids linked from each `{text, workflow}`, with the workflow they resolve in. */
export function linkedFrom(
  sources: readonly { text: string; workflow: string }[],
): { ref: string; workflow: string }[] {
  const out: { ref: string; workflow: string }[] = [];
  for (const { text, workflow } of sources) {
    for (const m of text.matchAll(LINK)) {
      const ref = m[1] as string;
      if (ref.includes('://') || ref.startsWith('.') || ref.startsWith('/') || ref.startsWith('#'))
        continue;
      if (/\.[A-Za-z0-9]+(#|$)/.test(ref)) continue;
      // Only what reads as a resource id (placeholders such as `[…](…)` are prose).
      if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9._-]+)?(#[A-Za-z0-9._-]+)?$/.test(ref))
        continue;
      if (!out.some((l) => l.ref === ref)) out.push({ ref, workflow });
    }
  }
  return out;
}

/** The warning for each linked id that does not resolve from the workflow it was linked in. */
export function unresolvedLinks(
  root: string,
  links: readonly { ref: string; workflow: string }[],
): string[] {
  const warnings: string[] = [];
  for (const { ref, workflow } of links) {
    const { wf, id } = parseResourceRef(ref, workflow);
    if (findResource(root, wf, id) !== undefined) continue;
    warnings.push(
      `Unresolvable resource ref '${ref}' linked from bundled step techniques: Resource not found: ${id} in workflow ${wf}`,
    );
  }
  return warnings;
}

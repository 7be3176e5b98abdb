/**
 * The semantic-version order the engine picks workflows and checks adapters by: `MAJOR.MINOR.PATCH`
 * with an optional pre-release (which sorts before its release, identifiers compared as
 * SemVer 2.0.0 §11 says); build metadata is not accepted, since two releases differing only
 * in it would be the same version.
 */

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly pre: readonly string[];
}

/** The parsed version, or undefined when `text` is not one. */
export function parseSemVer(text: string): SemVer | undefined {
  const m = SEMVER.exec(text);
  if (!m) return undefined;
  return {
    major: Number(m[1]),
    minor: Number(m[2]),
    patch: Number(m[3]),
    pre: m[4] === undefined ? [] : m[4].split('.'),
  };
}

/** True when `text` is a version this module orders. */
export function isSemVer(text: string): boolean {
  return parseSemVer(text) !== undefined;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` (both must parse). */
export function compareSemVer(a: string, b: string): number {
  const x = parseSemVer(a);
  const y = parseSemVer(b);
  if (!x || !y) throw new TypeError('compareSemVer takes two versions');
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (x[key] !== y[key]) return x[key] - y[key];
  }
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}

/** A host at `host` can use an adapter released at `released`: same major, minor at least. */
export function compatibleVersion(host: string, released: string): boolean {
  const h = parseSemVer(host);
  const r = parseSemVer(released);
  if (!h || !r) return false;
  return h.major === r.major && h.minor >= r.minor;
}

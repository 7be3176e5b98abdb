/**
 * Which build of mhl is running, for caches that must not outlive the code that filled them:
 * the launcher (launch.ts) sets it to its code-cache key (a hash of the CLI bundle's bytes, the
 * Node version and the architecture) before the CLI starts. Undefined when the CLI runs outside
 * the launcher (tests importing src/ directly), and then nothing is cached by build.
 */

/** Where the launcher leaves the id: a registered symbol, so the bundle and it agree on it. */
export const BUILD_ID: unique symbol = Symbol.for('mhl.buildId') as never;

/** The running build's id, or undefined outside the launcher. */
export function buildId(): string | undefined {
  const id = (globalThis as Record<symbol, unknown>)[BUILD_ID];
  return typeof id === 'string' ? id : undefined;
}

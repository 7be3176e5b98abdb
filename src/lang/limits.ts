/**
 * Frozen limits that bound what the language front end will read, so hostile or broken input
 * costs bounded time and stack. Breaking one is a `LIMIT_EXCEEDED` diagnostic with a span.
 */
export interface Limits {
  /** Bytes of one `.mh` source file. */
  readonly maxSourceBytes: number;
  /** Nesting depth of expressions, statements and blocks. */
  readonly maxDepth: number;
  /** Diagnostics kept per file before the parser gives up on the rest of it. */
  readonly maxDiagnosticsPerFile: number;
  /** Bytes of one prompt, skill or schema file. */
  readonly maxAssetBytes: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxSourceBytes: 4 * 1024 * 1024,
  maxDepth: 200,
  maxDiagnosticsPerFile: 100,
  maxAssetBytes: 1024 * 1024,
});

const LIMIT_KEYS = new Set(Object.keys(DEFAULT_LIMITS));

/** Merges overrides onto the defaults, rejecting unknown keys so a typo cannot lift a limit. */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  for (const key of Object.keys(overrides)) {
    if (!LIMIT_KEYS.has(key)) throw new TypeError(`unknown language limit '${key}'`);
  }
  return Object.freeze({ ...DEFAULT_LIMITS, ...overrides });
}

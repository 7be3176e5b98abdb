/**
 * The `workflow-engine` profile: DIR is a release folder, not a folder of `.mh` workflows, so
 * this profile loads its own source: the active release, the `--migration-target` release, the
 * pinned-release store under `<state-dir>/releases/` and the signing keys, then serves the
 * four-tool engine surface. Any problem stops start-up before anything is served.
 */
import { join } from 'node:path';
import {
  type EngineContext,
  engineSurface,
  KeyRing,
  loadEngineKeys,
  loadRelease,
  type Release,
  ReleaseStore,
  takeEngineKey,
} from '../surfaces/index.js';
import type { ProfileParts, ProfileResult } from './profiles.js';

/**
 * Removes `MHL_ENGINE_KEY` from `process.env` (no child, log or `env()` ever sees it) and
 * returns its text. Called first thing by `mhl serve mcp`, whatever the profile.
 */
export function takeServeEngineKey(): string | undefined {
  return takeEngineKey(process.env);
}

function loadOrProblem(root: string, what: string): Release | string {
  const loaded = loadRelease(root);
  if (loaded.ok) return loaded.release;
  return `${what} release does not load:\n  ${loaded.problems.join('\n  ')}`;
}

/** The engine surface over the releases `config.root` and `config.migrationTarget` hold. */
export function workflowEngineProfile(parts: ProfileParts): ProfileResult {
  const { config, logger } = parts;
  const active = loadOrProblem(config.root, 'the active');
  if (typeof active === 'string') return { problem: active };
  let target: Release | undefined;
  if (config.migrationTarget !== undefined) {
    const loaded = loadOrProblem(config.migrationTarget, 'the --migration-target');
    if (typeof loaded === 'string') return { problem: loaded };
    target = loaded;
  }
  const keys = loadEngineKeys(parts.engineKey, config.stateDir);
  if (!keys.ok) return { problem: keys.problem };
  if (keys.source === 'ephemeral') {
    logger.warn(
      { code: 'ENGINE_EPHEMERAL_KEY' },
      'no MHL_ENGINE_KEY and no --state-dir: checkpoints will not outlive this process',
    );
  }
  const ring = new KeyRing(keys.keys);
  let releases: ReleaseStore;
  try {
    releases = new ReleaseStore({
      activeRoot: config.root,
      active,
      target,
      storeDir: config.stateDir === undefined ? undefined : join(config.stateDir, 'releases'),
      onRefresh: (event) =>
        event.ok
          ? logger.info(
              { code: 'ENGINE_RELEASE_REFRESHED', digest: event.digest },
              'active release refreshed',
            )
          : logger.error(
              { code: 'ENGINE_RELEASE_REFRESH_FAILED', problems: event.problems },
              'active release refresh failed; serving the last good release',
            ),
    });
  } catch (error) {
    return { problem: `the release store cannot be written: ${(error as Error).message}` };
  }
  const context: EngineContext = { ring, releases, now: () => new Date() };
  logger.info(
    {
      release: `${active.id}@${active.version}`,
      digest: active.digest,
      kid: ring.signingKid,
      keys: keys.source,
    },
    'workflow-engine release loaded',
  );
  let surface: ReturnType<typeof engineSurface>;
  try {
    surface = engineSurface({ context, logger });
  } catch (error) {
    // A contract that is not a valid JSON Schema 2020-12: a build fault, reported, not served.
    return { problem: (error as Error).message };
  }
  return {
    surfaces: [surface],
    tools: { unknownToolCode: -32601, privateList: true },
  };
}

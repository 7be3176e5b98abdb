/**
 * The deterministic checks of a step's submitted artifacts, accumulated rather than stopping at
 * the first: declared ids only, each once, all present, at most `max_artifacts`, each within its
 * `max_bytes` and all within `max_total_bytes`, the declared path and media type, JSON that
 * parses and meets its schema, Markdown that is UTF-8 text.
 */
import { sha256Hex } from './canonical-json.js';
import { type Failure, failure } from './errors.js';
import type { Release } from './release.js';
import { isProjectPath } from './release-check.js';
import type { OutputDef, StepDef } from './release-schema.js';

export interface SubmittedArtifact {
  readonly id: string;
  readonly path: string;
  readonly media_type: 'application/json' | 'text/markdown';
  readonly content: string;
  readonly encoding: 'utf8' | 'base64';
}

/** An artifact that passed its checks, with its bytes. */
export interface CheckedArtifact {
  readonly output: OutputDef;
  readonly bytes: Buffer;
  readonly sha256: string;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The checks of `artifacts` against `step`; the failures and the artifacts that passed. */
export function checkArtifacts(
  release: Release,
  step: StepDef,
  artifacts: readonly SubmittedArtifact[],
): { failures: Failure[]; checked: CheckedArtifact[] } {
  const failures: Failure[] = [];
  const checked: CheckedArtifact[] = [];
  const max = step.max_artifacts ?? step.outputs.length;
  if (artifacts.length > max) {
    failures.push(failure('too_many_artifacts', `at most ${max} artifacts`, 'artifacts'));
  }
  const seen = new Set<string>();
  let total = 0;
  artifacts.forEach((a, i) => {
    const at = `artifacts[${i}]`;
    const output = step.outputs.find((o) => o.id === a.id);
    if (!output) {
      failures.push(
        failure(
          'undeclared_artifact',
          `step ${step.id} declares no artifact with this id`,
          `${at}.id`,
        ),
      );
      return;
    }
    if (seen.has(a.id)) {
      failures.push(
        failure('duplicate_artifact', `artifact ${a.id} is submitted twice`, `${at}.id`),
      );
      return;
    }
    seen.add(a.id);
    const bytes = decode(a);
    if (bytes === undefined) {
      failures.push(failure('json_schema_failed', 'content is not valid base64', `${at}.content`));
      return;
    }
    total += bytes.length;
    const before = failures.length;
    // A path that leaves the project is named as such (spec §5), before it is compared with
    // the declared one (which the loader already proved project-relative).
    if (!isProjectPath(a.path)) {
      failures.push(
        failure(
          'path_outside_project',
          `artifact ${a.id} must be project-relative, without ..`,
          `${at}.path`,
        ),
      );
    } else if (a.path !== output.path) {
      failures.push(
        failure(
          'output_path_mismatch',
          `artifact ${a.id} is written at ${output.path}`,
          `${at}.path`,
        ),
      );
    }
    if (a.media_type !== output.media_type) {
      failures.push(
        failure(
          'media_type_mismatch',
          `artifact ${a.id} is ${output.media_type}`,
          `${at}.media_type`,
        ),
      );
    }
    if (bytes.length > output.max_bytes) {
      failures.push(
        failure(
          'artifact_too_large',
          `artifact ${a.id} exceeds ${output.max_bytes} bytes`,
          `${at}.content`,
        ),
      );
    } else failures.push(...contentFailures(release, output, bytes, at));
    if (failures.length === before) checked.push({ output, bytes, sha256: sha256Hex(bytes) });
  });
  if (step.max_total_bytes !== undefined && total > step.max_total_bytes) {
    failures.push(
      failure(
        'artifacts_total_too_large',
        `all artifacts exceed ${step.max_total_bytes} bytes`,
        'artifacts',
      ),
    );
  }
  for (const output of step.outputs) {
    if (!seen.has(output.id)) {
      failures.push(failure('missing_artifact', `artifact ${output.id} is required`, 'artifacts'));
    }
  }
  return { failures, checked };
}

function decode(a: SubmittedArtifact): Buffer | undefined {
  if (a.encoding === 'utf8') return Buffer.from(a.content, 'utf8');
  return BASE64.test(a.content) ? Buffer.from(a.content, 'base64') : undefined;
}

/** UTF-8 text for both media types; JSON that parses and meets the output's schema. */
function contentFailures(
  release: Release,
  output: OutputDef,
  bytes: Buffer,
  at: string,
): Failure[] {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) {
    return [
      failure('media_type_mismatch', `artifact ${output.id} is not UTF-8 text`, `${at}.content`),
    ];
  }
  if (output.media_type !== 'application/json') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [failure('json_schema_failed', `artifact ${output.id} is not JSON`, `${at}.content`)];
  }
  const validate = output.schema === undefined ? undefined : release.schemas.get(output.schema);
  if (!validate || validate(value)) return [];
  return (validate.errors ?? [])
    .slice(0, 20)
    .map((e) =>
      failure(
        'json_schema_failed',
        `artifact ${output.id}${e.instancePath} ${e.message ?? 'is invalid'}`,
        `${at}.content${e.instancePath}`,
      ),
    );
}

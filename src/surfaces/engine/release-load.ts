/**
 * `loadRelease(root)`: a release folder read, parsed and verified into a `Release`, or every
 * problem found (one line each, naming the release-relative file and the field). Schemas are
 * compiled once here with Ajv for JSON Schema 2020-12, so an invalid schema stops the load.
 */
import type { ValidateFunction } from 'ajv';
import type { z } from 'zod';
import { ajv2020Class, yaml } from '../../lang/index.js';
import { canonicalDigest } from './canonical-json.js';
import type { LoadedWorkflow, Release, ReleaseFile } from './release.js';
import { checkAdapters, checkCatalogue, checkWorkflow } from './release-check.js';
import { readReleaseFiles } from './release-files.js';
import {
  type AdapterDef,
  hostAssetPath,
  releaseSchemas,
  type WorkflowDef,
} from './release-schema.js';

export type ReleaseResult =
  | { readonly ok: true; readonly release: Release }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Loads and verifies the release under `root`. Never throws for a bad release. */
export function loadRelease(root: string): ReleaseResult {
  const read = readReleaseFiles(root);
  if (!read.ok) return read;
  const { files, digest } = read;
  const problems: string[] = [];
  const formats = releaseSchemas();
  const manifest = parseFile(files, 'release.yaml', formats.manifest, problems);
  if (manifest === undefined) return { ok: false, problems };
  const locators = new Map<string, (field: string) => string>();
  const defs = manifest.workflows.flatMap((file) => {
    const def = parseFile(files, file, formats.workflow, problems, locators);
    return def === undefined ? [] : [{ file, def }];
  });
  const adapters = manifest.host_adapters.flatMap((file) => {
    const def = parseFile(files, file, formats.adapter, problems);
    return def === undefined ? [] : [{ file, def }];
  });
  for (const { file, def } of defs) {
    problems.push(...checkWorkflow(file, def, files, locators.get(file)));
  }
  problems.push(...checkCatalogue(defs), ...checkAdapters(adapters));
  if (problems.length > 0) return { ok: false, problems };
  const ajv = new (ajv2020Class())({ allErrors: true, strict: false });
  const schemas = new Map<string, ValidateFunction>();
  const compile = (path: string): ValidateFunction | undefined => {
    const known = schemas.get(path);
    if (known) return known;
    try {
      const schema = JSON.parse((files.get(path) as ReleaseFile).text) as object;
      const validate = ajv.compile(schema);
      schemas.set(path, validate);
      return validate;
    } catch (error) {
      problems.push(`${path}: not a valid JSON Schema 2020-12: ${(error as Error).message}`);
      return undefined;
    }
  };
  const workflows: LoadedWorkflow[] = [];
  for (const { def } of defs) {
    const stateValidator = compile(def.confirmed_state_schema);
    for (const step of def.steps)
      for (const out of step.outputs) if (out.schema) compile(out.schema);
    if (stateValidator) {
      workflows.push({
        def,
        manifestDigest: manifestDigest(def, files),
        stateValidator,
        steps: new Map(def.steps.map((s) => [s.id, s])),
      });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    release: {
      id: manifest.id,
      version: manifest.version,
      digest,
      files,
      workflows,
      adapters: adapters.map((a): AdapterDef => a.def),
      schemas,
    },
  };
}

/** One YAML file parsed against its schema; problems are added, undefined returned. */
function parseFile<T extends z.ZodType>(
  files: ReadonlyMap<string, ReleaseFile>,
  path: string,
  schema: T,
  problems: string[],
  locators?: Map<string, (field: string) => string>,
): z.infer<T> | undefined {
  const file = files.get(path);
  if (file === undefined) {
    problems.push(`${path}: missing from the release`);
    return undefined;
  }
  const Yaml = yaml();
  const lines = new Yaml.LineCounter();
  const doc = Yaml.parseDocument(file.text, { prettyErrors: false, lineCounter: lines });
  const error = doc.errors[0];
  if (error !== undefined) {
    const pos = error.linePos?.[0];
    const where = pos === undefined ? ' ' : `${pos.line}:${pos.col}: `;
    problems.push(`${path}:${where}${error.message.split('\n')[0]}`);
    return undefined;
  }
  const parsed = schema.safeParse(doc.toJS());
  if (!parsed.success) {
    for (const issue of parsed.error.issues.slice(0, 10)) {
      const offset = issueOffset(doc, issue);
      const pos = offset === undefined ? undefined : lines.linePos(offset);
      const where = pos === undefined ? '' : `${pos.line}:${pos.col}:`;
      problems.push(`${path}:${where} ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    return undefined;
  }
  // Later checks name fields as `steps[2].outputs[0].path`: the same walk finds their node.
  locators?.set(path, (field) => {
    const keys = field.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== '');
    const offset = nodeOffset(
      doc,
      keys.map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
    );
    const pos = offset === undefined ? undefined : lines.linePos(offset);
    return pos === undefined ? '' : `${pos.line}:${pos.col}:`;
  });
  return parsed.data;
}

type YamlDocument = ReturnType<ReturnType<typeof yaml>['parseDocument']>;

/** The start of the node at `path` (the deepest that exists), if the document has one. */
function nodeOffset(doc: YamlDocument, path: (string | number)[]): number | undefined {
  const Yaml = yaml();
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (Yaml.isNode(node) && node.range) return node.range[0];
  }
  return undefined;
}

/** Where in the YAML text an issue points: the unknown key itself, else the node at its path. */
function issueOffset(doc: YamlDocument, issue: z.core.$ZodIssue): number | undefined {
  const path = issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part));
  const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
  const Yaml = yaml();
  if (issue.code === 'unrecognized_keys' && Yaml.isMap(node)) {
    const key = node.items.find(
      (pair) => Yaml.isScalar(pair.key) && pair.key.value === issue.keys[0],
    )?.key;
    if (Yaml.isNode(key) && key.range) return key.range[0];
  }
  return nodeOffset(doc, path);
}

/** The digest of a definition and of every asset it references, which a checkpoint pins. */
function manifestDigest(def: WorkflowDef, files: ReadonlyMap<string, ReleaseFile>): string {
  const paths = new Set<string>([def.confirmed_state_schema]);
  for (const step of def.steps) {
    paths.add(step.instruction);
    for (const kind of ['prompts', 'skills', 'subagents'] as const) {
      for (const name of step.host_assets[kind]) paths.add(hostAssetPath(kind, name));
    }
    for (const out of step.outputs) if (out.schema) paths.add(out.schema);
    for (const v of step.validators) paths.add(v.instruction);
  }
  const assets = Object.fromEntries(
    [...paths].sort().map((p) => [p, (files.get(p) as ReleaseFile).sha256]),
  );
  return canonicalDigest({ definition: def, assets });
}

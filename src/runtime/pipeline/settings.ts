/**
 * What the step loop reads from a pipeline without running it: literal settings
 * (`checkpoint: {enabled: false}`, `spawn`, `repeat.stop_when`), the names an AST node
 * mentions (which `mem` variables a step needs), and how variables cross a checkpoint
 * (`persisted` / `restored`, enum values tagged). Pure: no I/O, nothing evaluated.
 */
import type { DeclOf, Expr } from '../../lang/index.js';
import {
  DurationValue,
  EnumValue,
  isObject,
  newObject,
  type Value,
} from '../interpreter/values.js';

/** Marks an enum value in a checkpoint, so a resumed run gets `Status.Draft` back, not "Draft". */
const ENUM_KEY = '$enum';

/** A checkpoint-ready copy: JSON data, with enum values as `{"$enum": "Status.Draft"}`. */
export function persisted(v: Value): Value {
  if (v instanceof EnumValue) return newObject([[ENUM_KEY, `${v.enumName}.${v.variant}`]]);
  if (Array.isArray(v)) return v.map(persisted);
  if (isObject(v)) return newObject(Object.entries(v).map(([k, x]) => [k, persisted(x)]));
  return v;
}

/** The inverse of `persisted`, applied to variables read back from a checkpoint. */
export function restored(v: Value): Value {
  if (Array.isArray(v)) return v.map(restored);
  if (!isObject(v)) return v;
  const keys = Object.keys(v);
  const tag = v[ENUM_KEY];
  if (keys.length === 1 && typeof tag === 'string' && tag.includes('.')) {
    const dot = tag.indexOf('.');
    return new EnumValue(tag.slice(0, dot), tag.slice(dot + 1));
  }
  return newObject(keys.map((k) => [k, restored(v[k] as Value)]));
}

const mentions = new WeakMap<object, ReadonlySet<string>>();

/** Every name an AST node mentions (its identifiers, at any depth), found once per node. */
export function mentionedNames(node: object): ReadonlySet<string> {
  let names = mentions.get(node);
  if (names === undefined) {
    const found = new Set<string>();
    collectIdents(node, found);
    names = found;
    mentions.set(node, names);
  }
  return names;
}

function collectIdents(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectIdents(item, into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const node = value as Record<string, unknown>;
  if (node['kind'] === 'Ident' && typeof node['name'] === 'string') into.add(node['name']);
  for (const key of Object.keys(node)) if (key !== 'span') collectIdents(node[key], into);
}

export function nullExpr(i: { span: Expr['span'] }): Expr {
  return { kind: 'Null', span: i.span };
}

/** Literal settings (`checkpoint: {enabled: false}`) read without running code. */
export function literalValue(e: Expr): Value | undefined {
  switch (e.kind) {
    case 'Null':
      return null;
    case 'Bool':
    case 'Number':
      return e.value;
    case 'Duration':
      return new DurationValue(e.ms);
    case 'String':
      return e.segments.every((s) => typeof s === 'string') ? e.segments.join('') : undefined;
    case 'Object': {
      const o = newObject();
      for (const f of e.fields) {
        const v = literalValue(f.value);
        if (v !== undefined) o[f.key] = v;
      }
      return o;
    }
    default:
      return undefined;
  }
}

export function numberSetting(v: Value | undefined, key: string): number | undefined {
  return isObject(v) && typeof v[key] === 'number' ? (v[key] as number) : undefined;
}

export function repeatStopWhen(decl: DeclOf<'Pipeline'>): Expr | undefined {
  const repeat = decl.props.find((p) => p.name === 'repeat')?.value;
  return repeat?.kind === 'Object'
    ? repeat.fields.find((f) => f.key === 'stop_when')?.value
    : undefined;
}

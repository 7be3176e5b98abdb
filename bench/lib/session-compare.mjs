/**
 * Comparing two walks' tool results modulo what differs by construction (timestamps, session
 * indexes, uuids, planning paths, trace tokens, seals): each result is normalised, texts with a
 * bundle are split at the separator and compared part by part, and every difference is reported
 * as `{tool, call, part, mhl, public}`. Where every part agrees, the text as sent is compared too
 * (part `text`: what parsing hides, such as key order, YAML anchors and blank lines).
 */
import { parse } from 'yaml';
import { SEPARATOR } from './session-walker.mjs';

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Text with run-specific values replaced by placeholders. */
export function normaliseText(text, indexes, folders) {
  let out = text;
  for (const f of folders) out = out.split(f).join('<folder>');
  for (const i of indexes) out = out.split(i).join('<index>');
  return out
    .replace(ISO, '<time>')
    .replace(UUID, '<uuid>')
    .replace(/\b\d{4}-\d{2}-\d{2}-/g, '<date>-');
}

function normaliseValue(value) {
  if (Array.isArray(value)) return value.map(normaliseValue);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'trace_token') out[k] = '<token>';
    // get_workflow_status's last_checkpoint carries a trace event's epoch seconds.
    else if (k === 'timestamp' && typeof v === 'number') out[k] = '<n>';
    // `ms`, `elapsed_ms`, `wall_clock_ms`: measured durations, wall clock like a timestamp.
    else if (
      k === 'uptime_seconds' ||
      k === 'ts' ||
      k === 'ms' ||
      k === 'elapsed_ms' ||
      k === 'wall_clock_ms' ||
      k === 'respondedAt' ||
      k === 'yieldedAt'
    )
      out[k] = '<n>';
    else out[k] = normaliseValue(v);
  }
  return out;
}

function tryJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function tryYaml(text) {
  try {
    return parse(text);
  } catch {
    return text;
  }
}

/**
 * A bundled resource's ledger hash is taken over its get_resource text, which names the session
 * index, so it differs between any two sessions by construction, like a seal.
 */
function sealedResourceHashes(bundle) {
  const resources = bundle?.resources;
  if (resources === null || typeof resources !== 'object') return bundle;
  const out = {};
  for (const [id, r] of Object.entries(resources))
    out[id] = r?.delivery === 'unchanged' ? { ...r, content_hash: '<hash>' } : r;
  return { ...bundle, resources: out };
}

/** The parts of one result to compare: `{part → normalised value}`. */
export function resultParts(name, result, indexes, folders) {
  const text = normaliseText(result.content?.[0]?.text ?? '', indexes, folders);
  const parts = { isError: Boolean(result.isError) };
  if (result.thrown !== undefined) parts.thrown = result.thrown;
  const meta = result._meta
    ? normaliseValue(tryJson(normaliseText(JSON.stringify(result._meta), indexes, folders)))
    : undefined;
  if (meta?.validation) parts.validation = meta.validation;
  if (result.isError) return parts;
  const cut = text.indexOf(SEPARATOR);
  if ((name === 'get_workflow' || name === 'get_activity') && cut !== -1) {
    parts.bundle = sealedResourceHashes(tryYaml(text.slice(0, cut)));
    parts.body = tryYaml(text.slice(cut + SEPARATOR.length));
  } else if (name === 'get_resource' && /^delivery: unchanged$/m.test(text)) {
    // The unchanged stub's hash is over the get_resource text, which names the session index.
    const stub = tryYaml(text.slice(text.indexOf('\n\n') + 2));
    parts.body = { header: text.slice(0, text.indexOf('\n\n')), ...stub, content_hash: '<hash>' };
  } else parts.body = normaliseValue(tryJson(text) ?? text);
  return parts;
}

/**
 * A `content_hash` line of YAML text, its value quoted or not: a hash taken over text that names
 * the session index is random per run, and YAML quotes one that reads as a number (all digits,
 * or digits around one `e`), about one in 700, two characters more.
 */
const QUOTABLE_HASH = /(content_hash: )(["']?)[0-9a-f]+\2/g;
const QUOTED_HASH = /content_hash: (["'])[0-9a-f]+\1/g;

/** How many hashes a result's text carries quoted (see QUOTABLE_HASH). */
function quotedHashes(result) {
  return (result.content?.[0]?.text ?? '').match(QUOTED_HASH)?.length ?? 0;
}

/**
 * Whether two `batch.delivered_chars` differ only by the quotes of hashes delivered so far:
 * by an even number of characters, at most two for each quoted hash either server sent.
 */
function quotesOnly(x, y, quoted) {
  const dx = x?.batch?.delivered_chars;
  const dy = y?.batch?.delivered_chars;
  if (typeof dx !== 'number' || typeof dy !== 'number' || dx === dy) return false;
  const gap = Math.abs(dx - dy);
  if (gap % 2 !== 0 || gap > 2 * quoted) return false;
  return (
    stable({ ...x, batch: { ...x.batch, delivered_chars: 0 } }) ===
    stable({ ...y, batch: { ...y.batch, delivered_chars: 0 } })
  );
}

/**
 * A result's text modulo the same run-specific values: a JSON text re-serialised in its own key
 * order, any other with its `content_hash` values masked (the parts compare those, bar the ones
 * taken over text that names the session index).
 */
function sentText(result, indexes, folders) {
  const text = normaliseText(result.content?.[0]?.text ?? '', indexes, folders);
  const json = tryJson(text);
  return json === undefined
    ? text.replace(QUOTABLE_HASH, '$1<hash>')
    : JSON.stringify(normaliseValue(json));
}

/** Where two texts first differ, with some context on both sides. */
function firstDifference(x, y) {
  let k = 0;
  while (k < x.length && x[k] === y[k]) k++;
  const around = (t) => ({ at: k, text: t.slice(Math.max(0, k - 80), k + 80) });
  return [around(x), around(y)];
}

const stable = (v) =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort())
      : x,
  );

/**
 * Differences between two walks of the same workflow. `kept(call)` names why a call's results
 * differ on purpose (docs/sessions.md, "Kept on purpose"); its differences carry that as `kept`.
 */
export function compareWalks(a, b, folders, kept = () => undefined) {
  const diffs = [];
  // Child sessions a probe dispatched are run-specific indexes too.
  const childIndexes = (w) =>
    w.calls
      .filter((c) => c.name === 'dispatch_child' && !c.result.isError)
      .map((c) => tryJson(c.result.content?.[0]?.text ?? '')?.session_index)
      .filter((i) => typeof i === 'string');
  const indexes = [a.sessionIndex, b.sessionIndex, ...childIndexes(a), ...childIndexes(b)];
  const n = Math.max(a.calls.length, b.calls.length);
  // Quoted hashes each server has sent so far in the walk (see quotesOnly).
  let quoted = 0;
  for (let i = 0; i < n; i++) {
    const x = a.calls[i];
    const y = b.calls[i];
    quoted += (x ? quotedHashes(x.result) : 0) + (y ? quotedHashes(y.result) : 0);
    if (!x || !y || x.name !== y.name) {
      diffs.push({
        tool: x?.name ?? y?.name,
        call: i,
        part: 'sequence',
        mhl: x?.name,
        public: y?.name,
      });
      break;
    }
    const px = resultParts(x.name, x.result, indexes, folders);
    const py = resultParts(y.name, y.result, indexes, folders);
    const why = kept(x);
    const before = diffs.length;
    let tolerated = false;
    for (const part of new Set([...Object.keys(px), ...Object.keys(py)])) {
      if (stable(px[part]) === stable(py[part])) continue;
      if (part === 'body' && quotesOnly(px[part], py[part], quoted)) {
        // Its text differs by those same quotes' count: nothing more to compare.
        tolerated = true;
        continue;
      }
      diffs.push({
        tool: x.name,
        call: i,
        part,
        mhl: px[part],
        public: py[part],
        ...(why ? { kept: why } : {}),
      });
    }
    if (diffs.length === before && !tolerated) {
      const tx = sentText(x.result, indexes, folders);
      const ty = sentText(y.result, indexes, folders);
      if (tx !== ty) {
        const [mhl, pub] = firstDifference(tx, ty);
        diffs.push({
          tool: x.name,
          call: i,
          part: 'text',
          mhl,
          public: pub,
          ...(why ? { kept: why } : {}),
        });
      }
    }
  }
  return diffs;
}

/**
 * Reading and printing instants for the `time` namespace: RFC 3339 text, and layouts written
 * with tokens (`yyyy-MM-dd HH:mm`) or as Go reference layouts (`2006-01-02 15:04`).
 *
 * All printing is in UTC. Parsing is strict: every field is range-checked, nothing is guessed.
 * Pure functions; no I/O, no clock.
 */

/** The fields a layout can read, before they are combined into an instant. */
interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  /** 'AM' / 'PM' when the layout had a marker and the hour is on a 12-hour clock. */
  meridiem?: 'AM' | 'PM';
  /** Minutes east of UTC. */
  offset: number;
}

type FieldName =
  | 'year'
  | 'month'
  | 'day'
  | 'hour'
  | 'hour12'
  | 'minute'
  | 'second'
  | 'ms'
  | 'meridiem'
  | 'zone';

interface Token {
  readonly text: string;
  readonly field: FieldName;
}

/** Token layouts: the digest's `yyyy MM dd HH hh mm ss`, plus `tt` for AM/PM beside `hh`. */
const WORD_TOKENS: readonly Token[] = [
  { text: 'yyyy', field: 'year' },
  { text: 'MM', field: 'month' },
  { text: 'dd', field: 'day' },
  { text: 'HH', field: 'hour' },
  { text: 'hh', field: 'hour12' },
  { text: 'mm', field: 'minute' },
  { text: 'ss', field: 'second' },
  { text: 'tt', field: 'meridiem' },
];

/** Go reference-time layouts (`Mon Jan 2 15:04:05 MST 2006`), the numeric elements only. */
const GO_TOKENS: readonly Token[] = [
  { text: 'Z07:00', field: 'zone' },
  { text: '-07:00', field: 'zone' },
  { text: '2006', field: 'year' },
  { text: '.000', field: 'ms' },
  { text: '01', field: 'month' },
  { text: '02', field: 'day' },
  { text: '15', field: 'hour' },
  { text: '03', field: 'hour12' },
  { text: '04', field: 'minute' },
  { text: '05', field: 'second' },
  { text: 'PM', field: 'meridiem' },
];

const PATTERNS: Readonly<Record<FieldName, string>> = {
  year: '(\\d{4})',
  month: '(\\d{2})',
  day: '(\\d{2})',
  hour: '(\\d{2})',
  hour12: '(\\d{2})',
  minute: '(\\d{2})',
  second: '(\\d{2})',
  ms: '\\.(\\d{3})',
  meridiem: '(AM|PM|am|pm)',
  zone: '(Z|[+-]\\d{2}:\\d{2})',
};

type Part = string | Token;

/** Splits a layout into literal text and tokens (Go style when it has no word tokens). */
function tokenize(layout: string): Part[] {
  const hasWords = WORD_TOKENS.some((t) => layout.includes(t.text));
  const tokens = hasWords ? WORD_TOKENS : GO_TOKENS;
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < layout.length; ) {
    const tok = tokens.find((t) => layout.startsWith(t.text, i));
    if (tok) {
      if (literal) parts.push(literal);
      literal = '';
      parts.push(tok);
      i += tok.text.length;
    } else {
      literal += layout[i];
      i++;
    }
  }
  if (literal) parts.push(literal);
  return parts;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function formatField(field: FieldName, d: Date, token: string): string {
  switch (field) {
    case 'year':
      return pad(d.getUTCFullYear(), 4);
    case 'month':
      return pad(d.getUTCMonth() + 1);
    case 'day':
      return pad(d.getUTCDate());
    case 'hour':
      return pad(d.getUTCHours());
    case 'hour12':
      return pad(d.getUTCHours() % 12 || 12);
    case 'minute':
      return pad(d.getUTCMinutes());
    case 'second':
      return pad(d.getUTCSeconds());
    case 'ms':
      return `.${pad(d.getUTCMilliseconds(), 3)}`;
    case 'meridiem':
      return d.getUTCHours() < 12 ? 'AM' : 'PM';
    case 'zone':
      return token === 'Z07:00' ? 'Z' : '+00:00';
  }
}

/** Prints an instant (ms since the epoch) in UTC with a token or Go layout. */
export function formatLayout(ms: number, layout: string): string {
  const d = new Date(ms);
  return tokenize(layout)
    .map((p) => (typeof p === 'string' ? p : formatField(p.field, d, p.text)))
    .join('');
}

/** RFC 3339 in UTC: `2024-05-01T12:00:00Z`, with milliseconds only when there are some. */
export function formatRfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function zoneMinutes(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
}

/** Combines fields into an instant; undefined when any field is out of range. */
function instant(f: Fields): number | undefined {
  let hour = f.hour;
  if (f.meridiem) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (f.meridiem === 'PM' ? 12 : 0);
  }
  const ms = Date.UTC(f.year, f.month - 1, f.day, hour, f.minute, f.second, f.ms);
  const d = new Date(ms);
  d.setUTCFullYear(f.year); // Date.UTC maps years 0–99 to 1900–1999.
  const exact =
    d.getUTCFullYear() === f.year &&
    d.getUTCMonth() === f.month - 1 &&
    d.getUTCDate() === f.day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === f.minute &&
    d.getUTCSeconds() === f.second;
  return exact ? d.getTime() - f.offset * 60_000 : undefined;
}

function emptyFields(): Fields {
  return { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0, offset: 0 };
}

function setField(f: Fields, field: FieldName, text: string): void {
  switch (field) {
    case 'hour12':
      f.hour = Number(text);
      f.meridiem ??= 'AM';
      return;
    case 'meridiem':
      f.meridiem = text.toUpperCase() === 'PM' ? 'PM' : 'AM';
      return;
    case 'zone':
      f.offset = zoneMinutes(text);
      return;
    default:
      f[field] = Number(text);
  }
}

/**
 * Reads `text` with a token or Go layout; fields the layout lacks default to 1970-01-01
 * 00:00:00 UTC. Undefined when the text does not match or a field is out of range.
 */
export function parseLayout(text: string, layout: string): number | undefined {
  const parts = tokenize(layout);
  const source = parts
    .map((p) =>
      typeof p === 'string' ? p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : PATTERNS[p.field],
    )
    .join('');
  const m = new RegExp(`^${source}$`).exec(text);
  if (!m) return undefined;
  const f = emptyFields();
  const tokens = parts.filter((p): p is Token => typeof p !== 'string');
  tokens.forEach((t, i) => {
    setField(f, t.field, m[i + 1] as string);
  });
  return instant(f);
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Reads RFC 3339 / ISO 8601 text (`2024-05-01`, `2024-05-01T12:00:00.5+02:00`); a missing zone
 * means UTC. Undefined when the text is not such a timestamp or a field is out of range.
 */
export function parseIso(text: string): number | undefined {
  const m = ISO.exec(text.trim());
  if (!m) return undefined;
  const n = (i: number): number => Number(m[i] ?? 0);
  const fraction = (m[7] ?? '').padEnd(3, '0').slice(0, 3);
  return instant({
    year: n(1),
    month: n(2),
    day: n(3),
    hour: n(4),
    minute: n(5),
    second: n(6),
    ms: Number(fraction),
    offset: m[8] ? zoneMinutes(m[8]) : 0,
  });
}

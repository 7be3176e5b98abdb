/**
 * Frontmatter of prompt and skill files, as MHL defines it (not YAML): an opening `---` line
 * (after optional blank lines), `key: value` lines, a closing `---` line. Values: `true`/`false`,
 * a double-quoted string, a number, or the trimmed raw text. No nesting and no lists.
 */

export type FrontmatterValue = string | number | boolean;

export interface FrontmatterResult {
  readonly frontmatter: Readonly<Record<string, FrontmatterValue>>;
  /** The text after the block, trimmed (the whole text, trimmed, when there is no block). */
  readonly body: string;
  /** 1-based line of the body's first line in the file, for positions inside the body. */
  readonly bodyLine: number;
  readonly present: boolean;
}

export interface FrontmatterError {
  readonly message: string;
  /** 1-based line in the file. */
  readonly line: number;
}

const NUMERIC = /^-?\d+(\.\d+)?$/;

/** Splits a file into frontmatter and body, or says which line is wrong. */
export function parseFrontmatter(text: string): FrontmatterResult | FrontmatterError {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && (lines[i] as string).trim() === '') i++;
  if (i >= lines.length || (lines[i] as string).trim() !== '---') {
    return { frontmatter: {}, body: text.trim(), bodyLine: 1, present: false };
  }
  const openLine = i + 1;
  const frontmatter: Record<string, FrontmatterValue> = {};
  for (i++; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/\r$/, '');
    if (line.trim() === '---') {
      const rest = lines.slice(i + 1).join('\n');
      const leading = rest.length - rest.trimStart().length;
      const bodyLine = i + 2 + (rest.slice(0, leading).match(/\n/g)?.length ?? 0);
      return { frontmatter, body: rest.trim(), bodyLine, present: true };
    }
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) {
      return {
        message: `frontmatter line has no 'key: value' form: ${JSON.stringify(line.trim())}`,
        line: i + 1,
      };
    }
    const key = line.slice(0, colon).trim();
    frontmatter[key] = frontmatterValue(line.slice(colon + 1).trim());
  }
  return {
    message: "frontmatter opened with '---' is never closed: add a '---' line after it",
    line: openLine,
  };
}

function frontmatterValue(raw: string): FrontmatterValue {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) return raw.slice(1, -1);
  if (NUMERIC.test(raw)) return Number(raw);
  return raw;
}

export function isFrontmatterError(r: FrontmatterResult | FrontmatterError): r is FrontmatterError {
  return 'message' in r;
}

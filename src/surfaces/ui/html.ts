/**
 * HTML with escaping by construction: `html\`…\`` escapes every interpolated value unless it is
 * already `Html` (a fragment built the same way), so a string from a workflow (a name, a step,
 * a log line, an error) can only ever land in the page as text. Attribute values must be
 * written inside double quotes; the escape covers both quote characters anyway.
 */
import { escapeHtml } from '../../transport/html.js';

export { escapeHtml };

/** A fragment of markup that is safe to insert as is. */
export class Html {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toString(): string {
    return this.text;
  }
}

/** What may be interpolated: fragments, text, numbers, lists of these; nullish and false are nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** A tagged template: the literal parts are markup, every `${value}` is escaped. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

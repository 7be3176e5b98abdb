/**
 * The setup form's body, `application/x-www-form-urlencoded`, parsed strictly: only the fields
 * the form has (`value`, optional `label`), each at most once, percent-escapes that decode to
 * valid UTF-8, and nothing else. `URLSearchParams` is not used: it passes malformed escapes
 * through as text and keeps duplicate fields, both of which a hostile client would rely on.
 * A refusal names the field, never its content.
 */

export const FORM_FIELDS = ['value', 'label'] as const;
export type FormField = (typeof FORM_FIELDS)[number];

export type FormResult =
  | { readonly ok: true; readonly fields: Partial<Record<FormField, string>> }
  | { readonly ok: false; readonly field: string; readonly problem: string };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** True for `application/x-www-form-urlencoded` (parameters such as charset ok). */
export function isFormContentType(value: string | undefined): boolean {
  const media = value?.split(';', 1)[0]?.trim().toLowerCase();
  return media === 'application/x-www-form-urlencoded';
}

export function parseSetupForm(body: string): FormResult {
  const fields: Partial<Record<FormField, string>> = {};
  if (body.length === 0) return { ok: false, field: 'value', problem: 'is missing' };
  for (const pair of body.split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decode(rawName);
    if (name === undefined || !(FORM_FIELDS as readonly string[]).includes(name)) {
      return { ok: false, field: '(form)', problem: 'has a field the setup form does not have' };
    }
    const field = name as FormField;
    if (fields[field] !== undefined) return { ok: false, field, problem: 'is given twice' };
    const value = decode(eq === -1 ? '' : pair.slice(eq + 1));
    if (value === undefined) {
      return { ok: false, field, problem: 'is not valid percent-encoded UTF-8' };
    }
    fields[field] = value;
  }
  if (fields.value === undefined || fields.value === '') {
    return { ok: false, field: 'value', problem: 'is missing' };
  }
  return { ok: true, fields };
}

/** One urlencoded token decoded, or undefined when its escapes are malformed or not UTF-8. */
function decode(token: string): string | undefined {
  const text = token.replaceAll('+', ' ');
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25) {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (c < 0x80) {
      bytes.push(c);
    } else {
      // A browser escapes every non-ASCII byte; raw ones are re-encoded as UTF-8 as read.
      bytes.push(...Buffer.from(text[i] as string, 'utf8'));
    }
  }
  try {
    return UTF8.decode(new Uint8Array(bytes));
  } catch {
    // Not UTF-8: the caller names the field.
    return undefined;
  }
}

/**
 * Fragments of `.mh` source that the mutation tests insert into valid files: its punctuation,
 * the keywords that open a construct, literals and awkward characters. One list, so both the
 * checker's test (test/unit/lang/fuzz.test.ts) and the served-mutant fuzz
 * (test/fuzz/mh-mutations.test.ts) grow together when the language does; each adds its own.
 */
export const MH_FRAGMENTS: readonly string[] = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '"',
  '"""',
  '${',
  '->',
  ',',
  ':',
  '=',
  '.',
  '?.',
  '\n',
  'step',
  'if',
  'else',
  'goto',
  'var',
  'pipeline',
  '30s',
  '1.5',
  '\\',
  '\u0000',
  '\u{1F600}',
];

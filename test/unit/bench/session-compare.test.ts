/**
 * The side-by-side comparison's one allowance for randomness in hashes: a hash taken over text
 * that names the session index is random per run, and YAML quotes one that reads as a number.
 * The quotes must not count as a difference, in the stub's text or in the batch's character
 * count they add to; any other difference still must.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compareWalks } from '../../../bench/lib/session-compare.mjs';
import type { Walk } from '../../../bench/lib/session-walker.mjs';

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
const stub = (index: string, hash: string) =>
  text(
    `session_index: ${index}\n\nresource_id: r\ndelivery: unchanged\ncontent_hash: ${hash}\nnote: n\n`,
  );
const activity = (index: string, chars: number, extra = '') =>
  text(
    `techniques: {}\n\n---\n\nsession_index: ${index}\n\nid: a${extra}\n\nbatch:\n  delivered_chars: ${chars}\n`,
  );
const walk = (index: string, calls: Walk['calls']): Walk =>
  ({ sessionIndex: index, calls }) as unknown as Walk;

describe('compareWalks and quoted hashes', () => {
  test('a quoted hash and the two characters it adds to the batch are no difference', () => {
    const a = walk('AAAAAA', [
      { name: 'get_resource', args: {}, result: stub('AAAAAA', '"1234567890123456"') },
      { name: 'get_activity', args: {}, result: activity('AAAAAA', 102) },
    ]);
    const b = walk('BBBBBB', [
      { name: 'get_resource', args: {}, result: stub('BBBBBB', '12ab567890123456') },
      { name: 'get_activity', args: {}, result: activity('BBBBBB', 100) },
    ]);
    assert.deepEqual(compareWalks(a, b, []), []);
  });

  test('a count off by more than the quotes, or with no quoted hash, is a difference', () => {
    const quotedA = walk('AAAAAA', [
      { name: 'get_resource', args: {}, result: stub('AAAAAA', '"1234567890123456"') },
      { name: 'get_activity', args: {}, result: activity('AAAAAA', 104) },
    ]);
    const plainB = walk('BBBBBB', [
      { name: 'get_resource', args: {}, result: stub('BBBBBB', '12ab567890123456') },
      { name: 'get_activity', args: {}, result: activity('BBBBBB', 100) },
    ]);
    assert.deepEqual(
      compareWalks(quotedA, plainB, []).map((d) => [d.call, d.part]),
      [[1, 'body']],
    );
    const plainA = walk('AAAAAA', [
      { name: 'get_resource', args: {}, result: stub('AAAAAA', 'ffff567890123456') },
      { name: 'get_activity', args: {}, result: activity('AAAAAA', 102) },
    ]);
    assert.deepEqual(
      compareWalks(plainA, plainB, []).map((d) => [d.call, d.part]),
      [[1, 'body']],
    );
  });

  test('a quoted hash excuses the count only: another change in the same body still shows', () => {
    const a = walk('AAAAAA', [
      { name: 'get_resource', args: {}, result: stub('AAAAAA', '"1234567890123456"') },
      { name: 'get_activity', args: {}, result: activity('AAAAAA', 102, 'x') },
    ]);
    const b = walk('BBBBBB', [
      { name: 'get_resource', args: {}, result: stub('BBBBBB', '12ab567890123456') },
      { name: 'get_activity', args: {}, result: activity('BBBBBB', 100) },
    ]);
    assert.deepEqual(
      compareWalks(a, b, []).map((d) => [d.call, d.part]),
      [[1, 'body']],
    );
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  formatWorkflowsKey,
  newWorkflowsKey,
  PACK_ERROR_CODES,
  PackError,
  parseWorkflowsKey,
  takeWorkflowsKey,
  WORKFLOWS_KEY_ENV,
} from '../../../src/pack/index.js';

const HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

function refusal(text: string | undefined): PackError {
  try {
    parseWorkflowsKey(text);
  } catch (e) {
    assert.ok(e instanceof PackError);
    return e;
  }
  assert.fail(`accepted ${JSON.stringify(text)}`);
}

/** Whether `message` contains any 6-character run of `secret`. */
function echoes(message: string, secret: string): boolean {
  for (let i = 0; i + 6 <= secret.length; i++) {
    if (message.includes(secret.slice(i, i + 6))) return true;
  }
  return false;
}

describe('parseWorkflowsKey', () => {
  it('accepts exactly 64 hex digits in either case', () => {
    const expected = Buffer.from(HEX, 'hex');
    assert.deepEqual(parseWorkflowsKey(HEX), expected);
    assert.deepEqual(parseWorkflowsKey(HEX.toUpperCase()), expected);
    assert.deepEqual(
      parseWorkflowsKey(`${HEX.slice(0, 32).toUpperCase()}${HEX.slice(32)}`),
      expected,
    );
  });

  it('says a missing or empty key is missing', () => {
    assert.equal(refusal(undefined).code, PACK_ERROR_CODES.KEY_MISSING);
    assert.equal(refusal('').code, PACK_ERROR_CODES.KEY_MISSING);
  });

  it('refuses every other spelling without echoing any of it', () => {
    const base64 = Buffer.from(HEX, 'hex').toString('base64');
    const cases: [string, RegExp][] = [
      [HEX.slice(0, 63), /63 characters/],
      [`${HEX}0`, /65 characters/],
      [`${HEX.slice(0, 63)}g`, /not hex digits/],
      [` ${HEX}`, /whitespace/],
      [`${HEX}\n`, /whitespace/],
      [base64, /base64/],
      [Buffer.from(HEX, 'hex').toString('base64url'), /43 characters/],
      [`0x${HEX.slice(2)}`, /not hex digits/],
      [`${HEX.slice(0, 32)} ${HEX.slice(33)}`, /not hex digits/],
      ['x'.repeat(100_000), /100000 characters/],
    ];
    for (const [text, why] of cases) {
      const e = refusal(text);
      assert.equal(e.code, PACK_ERROR_CODES.KEY_MALFORMED, JSON.stringify(text.slice(0, 80)));
      assert.match(e.message, why);
      assert.match(e.message, /MHL_SERVE_WORKFLOWS_KEY/);
      assert.equal(echoes(e.message, text.trim()), false, e.message);
    }
  });
});

describe('newWorkflowsKey / formatWorkflowsKey', () => {
  it('makes distinct 32-byte keys whose text is 64 lower-case hex digits that parse back', () => {
    const a = newWorkflowsKey();
    const b = newWorkflowsKey();
    assert.equal(a.length, 32);
    assert.notDeepEqual(a, b);
    const text = formatWorkflowsKey(a);
    assert.match(text, /^[0-9a-f]{64}$/);
    assert.deepEqual(parseWorkflowsKey(text), a);
  });
});

describe('takeWorkflowsKey', () => {
  it('returns the text and deletes the variable, so children of process.env never see it', () => {
    process.env[WORKFLOWS_KEY_ENV] = HEX;
    assert.equal(takeWorkflowsKey(process.env), HEX);
    assert.equal(process.env[WORKFLOWS_KEY_ENV], undefined);
    assert.equal(Object.hasOwn(process.env, WORKFLOWS_KEY_ENV), false);
    // A child spawned with the default environment reads the C environment, not a JS copy.
    const child = spawnSync('env', [], { encoding: 'utf8' });
    assert.equal(child.status, 0);
    assert.doesNotMatch(child.stdout, new RegExp(WORKFLOWS_KEY_ENV));
    assert.equal(takeWorkflowsKey(process.env), undefined);
  });
});

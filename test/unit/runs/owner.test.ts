import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Session } from '../../../src/protocol/index.js';
import { ANONYMOUS_OWNER, ownerOf } from '../../../src/runs/owner.js';

describe('ownerOf', () => {
  it('prefers the principal over the session', () => {
    const session = new Session({ id: 'sess-1' });
    const a = ownerOf({ principal: 'alice', session });
    assert.equal(a, ownerOf({ principal: 'alice', session: undefined }));
    assert.notEqual(a, ownerOf({ principal: 'bob', session }));
    assert.match(a, /^[0-9a-f]{64}$/);
  });

  it('keys a principal-less caller by its session id', () => {
    const one = ownerOf({ session: new Session({ id: 'x' }) });
    assert.equal(one, ownerOf({ session: new Session({ id: 'x' }) }));
    assert.notEqual(one, ownerOf({ session: new Session({ id: 'y' }) }));
  });

  it('never lets a principal collide with a session id of the same text', () => {
    assert.notEqual(
      ownerOf({ principal: 'same', session: undefined }),
      ownerOf({ session: new Session({ id: 'same' }) }),
    );
  });

  it('gives stateless callers the one shared anonymous owner', () => {
    assert.equal(ownerOf({ session: undefined }), ANONYMOUS_OWNER);
    assert.notEqual(ownerOf({ principal: '', session: undefined }), ANONYMOUS_OWNER);
  });
});

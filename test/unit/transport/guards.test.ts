import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostAllowed, originAllowed } from '../../../src/transport/guards.js';

/** The transport's order: the Host guard first, then the Origin guard. */
function allowed(origin: string | undefined, host: string, bind: string, names: string[] = []) {
  return hostAllowed(host, bind) && originAllowed(origin, host, bind, names);
}

describe('the Origin guard', () => {
  for (const [origin, host, bind] of [
    [undefined, '127.0.0.1:8787', '127.0.0.1'],
    ['http://localhost:8787', '127.0.0.1:8787', '127.0.0.1'],
    ['http://127.0.0.1:9999', '10.0.0.5:8787', '0.0.0.0'],
    // Same origin on a wildcard bind, by IP address: no DNS name to rebind.
    ['http://10.0.0.5:8787', '10.0.0.5:8787', '0.0.0.0'],
    ['http://[fd00::5]:8787', '[fd00::5]:8787', '::'],
    ['HTTP://10.0.0.5:8787', '10.0.0.5:8787', '0.0.0.0'],
    ['http://10.0.0.5', '10.0.0.5:80', '0.0.0.0'],
    ['https://10.0.0.5', '10.0.0.5', '0.0.0.0'],
    // A specific bind: the Host guard pinned the name already.
    ['http://10.0.0.5:8787', '10.0.0.5:8787', '10.0.0.5'],
    ['http://srv.lan:8787', 'srv.lan:8787', 'srv.lan'],
  ] as const) {
    it(`allows ${origin} for Host ${host} on ${bind}`, () => {
      assert.equal(allowed(origin, host, bind), true);
    });
  }
  for (const [origin, host, bind] of [
    ['https://evil.example', '127.0.0.1:8787', '127.0.0.1'],
    ['null', '127.0.0.1:8787', '127.0.0.1'],
    ['not a url', '10.0.0.5:8787', '0.0.0.0'],
    // DNS rebinding on a wildcard bind: the attacker's name is in both headers.
    ['http://evil.example:8787', 'evil.example:8787', '0.0.0.0'],
    ['http://evil.example:8787', 'evil.example:8787', '::'],
    // Rebinding to a loopback bind: the Host guard still refuses first.
    ['http://evil.example:8787', 'evil.example:8787', '127.0.0.1'],
    // Another port or host, or scheme defaults that differ, is another origin.
    ['http://10.0.0.5:9999', '10.0.0.5:8787', '0.0.0.0'],
    ['http://10.0.0.6:8787', '10.0.0.5:8787', '0.0.0.0'],
    ['https://10.0.0.5', '10.0.0.5:80', '0.0.0.0'],
    ['http://10.0.0.5:8787', '10.0.0.5:8787', '10.0.0.6'],
    ['ftp://10.0.0.5:8787', '10.0.0.5:8787', '0.0.0.0'],
    ['http://10.0.0.5:8787', '10.0.0.5:8787/x', '0.0.0.0'],
    ['http://10.0.0.5:8787', 'u@10.0.0.5:8787', '0.0.0.0'],
  ] as const) {
    it(`refuses ${origin} for Host ${host} on ${bind}`, () => {
      assert.equal(allowed(origin, host, bind), false);
    });
  }
  it('allows a name the operator vouched for on a wildcard bind, and only that one', () => {
    assert.equal(
      allowed('https://mhl.example.org', 'mhl.example.org', '0.0.0.0', ['mhl.example.org']),
      true,
    );
    assert.equal(
      allowed('https://evil.example', 'evil.example', '0.0.0.0', ['mhl.example.org']),
      false,
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRoutes, findRoute, type Route } from '../../../src/transport/routes.js';

const row = (path: string, extra: Partial<Route> = {}): Route => ({
  path,
  methods: ['GET'],
  auth: 'public',
  handle: () => {},
  ...extra,
});

describe('the HTTP route table', () => {
  const routes = [
    row('/mcp'),
    row('/mcp/', { prefix: true }),
    row('/mcp/run/', { prefix: true }),
    row('/health/ready'),
  ];

  it('prefers an exact row, then the longest prefix', () => {
    assert.equal(findRoute(routes, '/mcp'), routes[0]);
    assert.equal(findRoute(routes, '/mcp/tools%2Fcall'), routes[1]);
    assert.equal(findRoute(routes, '/mcp/run/status'), routes[2]);
    assert.equal(findRoute(routes, '/health/ready'), routes[3]);
  });

  it('finds no row for other paths', () => {
    for (const path of ['/', '/mc', '/health', '/health/ready/', '/MCP']) {
      assert.equal(findRoute(routes, path), undefined, path);
    }
  });

  it('refuses two rows for one path and a capability row without its check', () => {
    assert.throws(() => checkRoutes([row('/a'), row('/a')]));
    assert.throws(() => checkRoutes([row('/a', { auth: 'capability' })]));
    checkRoutes([
      row('/a'),
      row('/a', { prefix: true }),
      row('/b', { auth: 'capability', capability: () => true }),
    ]);
  });
});

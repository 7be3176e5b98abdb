import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestContext } from '../../../src/protocol/index.js';
import {
  connection,
  errorOf,
  initialize,
  modernMeta,
  notification,
  request,
  resultOf,
  setup,
} from './harness.js';

const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

/** A dispatcher whose `emit` handler logs one entry per level it is given. */
function logging() {
  const made = setup({ legacyCapabilities: { logging: {} } });
  const contexts: RequestContext[] = [];
  made.dispatcher.register('emit', async (params, ctx) => {
    contexts.push(ctx);
    for (const level of params['levels'] as ('info' | 'warning' | 'error')[]) {
      ctx.log?.(level, `a ${level} line`, 'W');
    }
    return {};
  });
  made.dispatcher.register(
    'setLevel',
    async (params, ctx) => {
      ctx.session?.setLogLevel(params['level'] as 'warning');
      return {};
    },
    { eras: ['legacy'] },
  );
  return { ...made, contexts };
}

describe('Dispatcher logging and era-specific methods', () => {
  it('answers a method registered for one era with -32601 in the other', async () => {
    const { dispatcher, conn } = logging();
    const modern = errorOf(
      await dispatcher.handle(request(1, 'setLevel', { _meta: modernMeta() }), conn),
    );
    assert.equal(modern.error.code, -32601);
    await initialize(dispatcher, conn);
    resultOf(await dispatcher.handle(request(2, 'setLevel', { level: 'info' }), conn));
  });

  it('says legacy-only capabilities in initialize and not in server/discover', async () => {
    const { dispatcher, conn } = logging();
    const init = resultOf(
      await dispatcher.handle(
        request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} }),
        conn,
      ),
    );
    assert.deepEqual((init['capabilities'] as Record<string, unknown>)['logging'], {});
    const discover = resultOf(
      await dispatcher.handle(request(2, 'server/discover', { _meta: modernMeta() }), conn),
    );
    assert.equal((discover['capabilities'] as Record<string, unknown>)['logging'], undefined);
  });

  it('sends nothing on a legacy session until a level is set, then entries at or above it', async () => {
    const { dispatcher, conn } = logging();
    await initialize(dispatcher, conn);
    const levels = ['info', 'warning', 'error'];
    resultOf(await dispatcher.handle(request(1, 'emit', { levels }), conn));
    assert.equal(conn.sent.length, 0);
    resultOf(await dispatcher.handle(request(2, 'setLevel', { level: 'warning' }), conn));
    resultOf(await dispatcher.handle(request(3, 'emit', { levels }), conn));
    await Promise.resolve();
    assert.deepEqual(
      conn.sent.map((n) => n.params),
      [
        { level: 'warning', logger: 'W', data: 'a warning line' },
        { level: 'error', logger: 'W', data: 'a error line' },
      ],
    );
    assert.ok(conn.sent.every((n) => n.method === 'notifications/message'));
  });

  it('follows a modern request _meta level, and ignores a malformed one', async () => {
    const { dispatcher, conn, contexts } = logging();
    const levels = ['info', 'error'];
    const meta = (level: unknown) => ({ levels, _meta: modernMeta({ [LOG_LEVEL]: level }) });
    resultOf(await dispatcher.handle(request(1, 'emit', meta('error')), conn));
    resultOf(await dispatcher.handle(request(2, 'emit', meta('loud')), conn));
    await Promise.resolve();
    assert.deepEqual(
      conn.sent.map((n) => (n.params as { data: string }).data),
      ['a error line'],
    );
    assert.equal(contexts[1]?.log, undefined);
  });

  it('drops entries once the request is answered', async () => {
    const { dispatcher, conn, contexts } = logging();
    await initialize(dispatcher, conn);
    resultOf(await dispatcher.handle(request(1, 'setLevel', { level: 'debug' }), conn));
    resultOf(await dispatcher.handle(request(2, 'emit', { levels: [] }), conn));
    contexts[0]?.log?.('error', 'too late');
    await Promise.resolve();
    assert.deepEqual(conn.sent, []);
  });
});

describe('Dispatcher session channels', () => {
  const update = notification('notifications/resources/updated', { uri: 'u' }) as never;

  it('sends through an open channel and holds for a session without one', () => {
    const { dispatcher, conn } = setup();
    const other = connection();
    const sent: unknown[] = [];
    const close = dispatcher.openChannel(conn.session, (n) => sent.push(n));
    assert.equal(dispatcher.notify(conn.session, update), true);
    assert.equal(dispatcher.notify(other.session, update), false);
    assert.equal(dispatcher.notify(other.session, update), false);
    const late: unknown[] = [];
    dispatcher.openChannel(other.session, (n) => late.push(n));
    assert.deepEqual(late, [update], 'held once, sent when the channel opens');
    close();
    assert.equal(dispatcher.notify(conn.session, update), false);
    assert.equal(sent.length, 1);
  });

  it('forgets a closed session, its channel and what it held, and tells the listeners', () => {
    const { dispatcher, conn } = setup();
    const closed: unknown[] = [];
    dispatcher.onSessionClose((session) => closed.push(session));
    dispatcher.notify(conn.session, update);
    dispatcher.closeSession(conn.session);
    assert.deepEqual(closed, [conn.session]);
    const late: unknown[] = [];
    dispatcher.openChannel(conn.session, (n) => late.push(n));
    assert.deepEqual(late, []);
  });
});

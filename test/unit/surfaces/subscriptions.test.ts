import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type JsonRpcNotification,
  type RequestContext,
  RpcError,
  Session,
} from '../../../src/protocol/index.js';
import type { ResourceProvider } from '../../../src/surfaces/resources.js';
import { type SessionNotifier, Subscriptions } from '../../../src/surfaces/subscriptions.js';
import { requestContext } from './request-context.js';

const RUN = 'a'.repeat(32);
const LOGS = `mhl://run/${RUN}/logs`;

/** A notifier that records what it was asked to send, and lets the test close sessions. */
function notifier() {
  const sent: { session: Session; notification: JsonRpcNotification }[] = [];
  const listeners: ((session: Session) => void)[] = [];
  let delivered: () => void = () => {};
  const notify: SessionNotifier = {
    notify: (session, notification) => {
      sent.push({ session, notification });
      delivered();
      return true;
    },
    onSessionClose: (listener) => listeners.push(listener),
  };
  const next = () =>
    new Promise<void>((done) => {
      delivered = done;
    });
  return {
    notify,
    sent,
    next,
    close: (s: Session) => {
      for (const listener of listeners) listener(s);
    },
  };
}

/** The run's logs exist for their owner (principal "ann") only. */
const runs: ResourceProvider = {
  read: (uri, ctx) =>
    uri === LOGS && ctx.principal === 'ann'
      ? { contents: [{ uri, mimeType: 'text/plain', text: '' }] }
      : undefined,
};

function ctx(session: Session, principal?: string): RequestContext {
  return requestContext({ session, ...(principal === undefined ? {} : { principal }) });
}

function methods(subscriptions: Subscriptions) {
  const [subscribe, unsubscribe] = subscriptions.methods();
  assert.deepEqual(
    [subscribe?.method, unsubscribe?.method, subscribe?.eras, unsubscribe?.eras],
    ['resources/subscribe', 'resources/unsubscribe', ['legacy'], ['legacy']],
  );
  return {
    subscribe: (c: RequestContext, uri: unknown) =>
      (subscribe ?? assert.fail()).handler({ uri }, c),
    unsubscribe: (c: RequestContext, uri: unknown) =>
      (unsubscribe ?? assert.fail()).handler({ uri }, c),
  };
}

describe('Subscriptions', () => {
  it('tells a subscribed owner, once per burst, that a run changed', async () => {
    const { notify, sent, next } = notifier();
    const subscriptions = new Subscriptions(notify, [runs]);
    const { subscribe } = methods(subscriptions);
    const ann = new Session();
    assert.deepEqual(await subscribe(ctx(ann, 'ann'), LOGS), {});
    const delivered = next();
    for (let i = 0; i < 5; i++) subscriptions.runChanged(RUN);
    await delivered;
    assert.deepEqual(sent, [
      {
        session: ann,
        notification: {
          jsonrpc: '2.0',
          method: 'notifications/resources/updated',
          params: { uri: LOGS },
        },
      },
    ]);
    subscriptions.close();
  });

  it('refuses a foreign or unknown URI with the resource-not-found error', async () => {
    const { notify } = notifier();
    const { subscribe } = methods(new Subscriptions(notify, [runs]));
    const bob = ctx(new Session(), 'bob');
    for (const uri of [LOGS, 'mhl://run/nope/logs']) {
      await assert.rejects(
        subscribe(bob, uri),
        (e: unknown) => e instanceof RpcError && e.code === -32002,
      );
    }
    await assert.rejects(subscribe(bob, 42), (e: unknown) => e instanceof RpcError);
  });

  it('stops telling a session that unsubscribed or closed', async () => {
    const { notify, sent, close, next } = notifier();
    const subscriptions = new Subscriptions(notify, [runs]);
    const { subscribe, unsubscribe } = methods(subscriptions);
    const [one, two, three] = [new Session(), new Session(), new Session()];
    for (const session of [one, two, three]) await subscribe(ctx(session, 'ann'), LOGS);
    assert.deepEqual(await unsubscribe(ctx(one, 'ann'), LOGS), {});
    assert.deepEqual(await unsubscribe(ctx(one, 'ann'), 'mhl://never'), {});
    close(two);
    const delivered = next();
    subscriptions.changed(LOGS);
    await delivered;
    subscriptions.close();
    assert.deepEqual(
      sent.map((s) => s.session),
      [three],
    );
  });
});

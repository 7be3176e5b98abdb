/**
 * Serves an `MhlServer` on stdio: one JSON-RPC message per line in, answers and notifications
 * out on stdout (logs go to stderr). EOF, SIGINT and SIGTERM enter the one shutdown path:
 * drain, then cancel within the budget; exit status 0, or 1 (`MCP_SHUTDOWN_TIMEOUT`).
 */
import { recoverRequestId, tooLargeResponse } from '../protocol/index.js';
import { MAX_LINE_BYTES, StdioTransport } from '../transport/index.js';
import type { MhlServer } from './create-server.js';
import { withinBudget } from './lifecycle.js';

/** Serves until stdin ends or a signal arrives; resolves to the exit status. */
export async function serveStdio(server: MhlServer): Promise<number> {
  const { dispatcher, logger } = server;
  const session = dispatcher.newSession();
  const transport: StdioTransport = new StdioTransport({
    input: process.stdin,
    output: process.stdout,
    handle: async (line) => {
      const answer = await dispatcher.handleText(line, {
        session,
        send: (n) => transport.send(JSON.stringify(n)),
      });
      return answer === undefined ? undefined : JSON.stringify(answer);
    },
    // The same answer HTTP gives an oversized body: -32600 with data.maxBytes, under the
    // request's own id when the line's edges name it, so the client's call settles.
    tooLong: (head, tail) =>
      JSON.stringify(tooLargeResponse(MAX_LINE_BYTES, recoverRequestId(head, tail))),
    onError: (error) => logger.error({ err: error }, 'stdio handler failed'),
  });
  // The one connection also carries what the server says outside requests (resource updates).
  dispatcher.openChannel(session, (n) => transport.send(JSON.stringify(n)));
  const stop = () => {
    process.stdin.destroy();
  };
  // Before the ready line, so no signal can arrive while Node's default (kill) still applies;
  // kept until the end, so a second signal during shutdown cannot kill it halfway either.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  server.start();
  logger.info(
    { profile: server.config.profile, workflows: server.workflows, root: server.config.root },
    'serving over stdio',
  );
  try {
    const reading = transport.run();
    await Promise.race([
      reading,
      new Promise<void>((done) => process.stdin.once('close', () => done())),
    ]);
    await server.drain();
    if ((await withinBudget(Promise.all([reading, server.stop()]))) === 'timeout') {
      logger.error(
        { code: 'MCP_SHUTDOWN_TIMEOUT' },
        'in-flight calls did not finish within the shutdown budget',
      );
      return 1;
    }
    transport.close();
    return 0;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    server.close();
  }
}

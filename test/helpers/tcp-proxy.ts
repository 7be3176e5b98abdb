/**
 * A TCP proxy for tests that need a network partition: it forwards every connection to
 * `target` until `freeze()`, then holds every socket open and silent (nothing forwarded, nothing
 * refused), as a dropped link looks to both ends. `close()` ends it and every socket.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class FreezableProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #frozen = false;

  constructor(target: { host: string; port: number }) {
    this.#server = createServer((client) => {
      this.#track(client);
      if (this.#frozen) return client.pause();
      const upstream = connect(target.port, target.host);
      this.#track(upstream);
      client.on('data', (data) => {
        if (!this.#frozen) upstream.write(data);
      });
      upstream.on('data', (data) => {
        if (!this.#frozen) client.write(data);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  /** Starts listening on a free loopback port; resolves to it. */
  listen(): Promise<number> {
    return new Promise((resolve) => {
      this.#server.listen(0, '127.0.0.1', () => {
        resolve((this.#server.address() as { port: number }).port);
      });
    });
  }

  /** From now on nothing passes either way, and new connections are accepted and ignored. */
  freeze(): void {
    this.#frozen = true;
    for (const socket of this.#sockets) socket.pause();
  }

  close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    // A reset from either end while frozen or closing is expected.
    socket.on('error', () => {});
    socket.on('close', () => this.#sockets.delete(socket));
  }
}

/**
 * The per-address connection cap: how many connections one remote address (an IPv6 one by its
 * /64) may hold open at once. The total cap is Node's own `server.maxConnections`, which closes an accepted handle
 * before any socket object is made; this one needs the address, so it runs on `connection` and
 * destroys the socket there, before a byte of it is read. Both refuse by closing: a client sees
 * a reset rather than an answer, which costs the server nothing to send.
 *
 * On a loopback bind every local client shares one address, and behind a proxy every client
 * shares the proxy's, so the cap has to leave room for all of them at once.
 */
import type { Socket } from 'node:net';
import { socketBlock } from './client-key.js';

export class AddressCaps {
  readonly #perAddress: number;
  /** Open connections by remote address; an address leaves the map with its last connection. */
  readonly #open = new Map<string, number>();
  #refused = 0;

  constructor(perAddress: number) {
    this.#perAddress = perAddress;
  }

  /** Connections refused so far for their address. */
  get refused(): number {
    return this.#refused;
  }

  /** Counts `socket` against its address; false (and nothing counted) when it is over the cap. */
  admit(socket: Socket): boolean {
    // No address: the peer is already gone. An IPv6 host counts by its /64, as everywhere.
    if (socket.remoteAddress === undefined) return false;
    const address = socketBlock(socket);
    const open = this.#open.get(address) ?? 0;
    if (open >= this.#perAddress) {
      this.#refused++;
      return false;
    }
    this.#open.set(address, open + 1);
    socket.once('close', () => {
      const left = (this.#open.get(address) ?? 1) - 1;
      if (left === 0) this.#open.delete(address);
      else this.#open.set(address, left);
    });
    return true;
  }
}

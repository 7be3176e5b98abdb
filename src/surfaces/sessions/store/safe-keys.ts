/**
 * Keys that come from clients (agent ids, variable names, usage keys) index plain objects in
 * the session file. `__proto__`, `constructor` and `prototype` would reach Object.prototype
 * through those objects (`bag[k] ??= {}` with k = "__proto__" writes into the prototype every
 * object shares), so they are refused at the schema and every write goes through `setOwn`,
 * which defines an own property and never walks the prototype chain.
 */
import { z } from 'zod';

const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

/** True for a name that must never key a session bag. */
export function isReservedKey(key: string): boolean {
  return RESERVED.has(key);
}

/** A client-given key: any string but the three reserved names. */
export function safeKeySchema(what: string) {
  return z
    .string()
    .refine((k) => !isReservedKey(k), `${what} must not be __proto__, constructor or prototype`);
}

/** Sets `bag[key]` as an own, enumerable property (no setter, no prototype walk). */
export function setOwn<T>(bag: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(bag, key, { value, writable: true, enumerable: true, configurable: true });
}

/** `bag[key]` only when it is the bag's own property. */
export function getOwn<T>(
  bag: Readonly<Record<string, T>> | undefined,
  key: string,
): T | undefined {
  return bag !== undefined && Object.hasOwn(bag, key) ? bag[key] : undefined;
}

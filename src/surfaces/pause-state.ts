/**
 * The `requestState` of a paused synchronous call (2026-07-28 `input_required`): the pause's
 * checkpoint, sealed with AES-256-GCM under a key made when the process starts, so the client
 * that carries it can neither read nor change it. The seal is bound to the workflow's name and
 * definition digest and to the caller's principal (as additional authenticated data), expires,
 * and is capped in size. Opening never throws: a tampered, foreign, expired or malformed state
 * is a plain refusal, with a reason code, that the caller turns into a `-32602` error.
 *
 * Knows nothing of workflows or runs beyond the opaque records it carries; a key never leaves
 * the process and is never logged. A restarted server cannot open states an earlier one sealed.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';

/** What one sealed state is bound to: a state sealed for other values does not open. */
export interface PauseBinding {
  readonly workflow: string;
  readonly digest: string;
  readonly principal: string | undefined;
  /**
   * A digest of the call's own arguments and working directory: the steps before the pause ran
   * with them, so a retry with others must not resume from that point.
   */
  readonly call: string;
}

/** The pause checkpoint of a throwaway run: its session and the store records under it. */
export interface PauseCheckpoint {
  readonly session: string;
  /** The `inputRequests` key the pause was asked under (the pausing step's name). */
  readonly key: string;
  /** The pause's reason, as text. */
  readonly reason: string;
  /** `[key, text]` pairs exactly as the run's store held them. */
  readonly records: readonly (readonly [string, string])[];
  /**
   * The inputs the paused run had (the call's arguments with every answer so far merged in):
   * a retry resumes with these, so an earlier round's answer is not lost.
   */
  readonly inputs?: Readonly<Record<string, unknown>>;
  /** When a state sealed for this pause stops opening; kept when the pause is asked again. */
  readonly expiresAt?: number;
}

/** How long a sealed state opens after it was made. */
export const PAUSE_STATE_TTL_MS = 15 * 60_000;
/** Longest sealed state, in characters; a bigger pause is reported instead (see callers). */
export const MAX_PAUSE_STATE_CHARS = 256 * 1024;

const PREFIX = 'mhl1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const SealedSchema = z.object({
  exp: z.number().describe('Expiry, epoch milliseconds'),
  session: z.string().describe('The throwaway session the checkpoint was written under'),
  key: z.string().describe('The inputRequests key the pause was asked under'),
  reason: z.string().describe("The pause's reason"),
  records: z.array(z.tuple([z.string(), z.string()])).describe('The store records to restore'),
  inputs: z.record(z.string(), z.unknown()).optional().describe("The paused run's inputs"),
});

/** Why a state was refused: not ours, cut short, failed verification, unreadable, too old. */
export type RefusedState = 'unknown' | 'truncated' | 'unverified' | 'malformed' | 'expired';

/** The answer to `open`: the checkpoint, or why the state was refused. */
export type Opened =
  | { readonly ok: true; readonly checkpoint: PauseCheckpoint }
  | { readonly ok: false; readonly reason: RefusedState; readonly message: string };

/** Seals and opens pause states with one process-lifetime key. */
export class PauseSealer {
  readonly #key: Buffer;
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(options: { now?: () => number; ttlMs?: number } = {}) {
    this.#key = randomBytes(32);
    this.#now = options.now ?? Date.now;
    this.#ttlMs = options.ttlMs ?? PAUSE_STATE_TTL_MS;
  }

  /** The sealed text, or undefined when it would exceed `MAX_PAUSE_STATE_CHARS`. */
  seal(checkpoint: PauseCheckpoint, binding: PauseBinding): string | undefined {
    // Asking the same pause again keeps its expiry: retrying without answering extends nothing.
    const { expiresAt, ...rest } = checkpoint;
    const body = { exp: expiresAt ?? this.#now() + this.#ttlMs, ...rest };
    // Not compressed: the inputs a client chose would share a window with the run's own values,
    // and the sealed length would then tell something of those values (a CRIME-style oracle).
    const plain = Buffer.from(JSON.stringify(body), 'utf8');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(aad(binding));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    const text = PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
    return text.length > MAX_PAUSE_STATE_CHARS ? undefined : text;
  }

  /** Opens a state `seal` made for the same binding; never throws. */
  open(text: string, binding: PauseBinding): Opened {
    const refused = (reason: RefusedState, message: string): Opened => ({
      ok: false,
      reason,
      message,
    });
    if (text.length > MAX_PAUSE_STATE_CHARS || !text.startsWith(PREFIX)) {
      return refused('unknown', 'requestState is not one this server issued');
    }
    const raw = Buffer.from(text.slice(PREFIX.length), 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) {
      return refused('truncated', 'requestState is truncated');
    }
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(aad(binding));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      plain = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      // A failed tag check: changed, made by another process, or for another workflow or caller.
      return refused(
        'unverified',
        'requestState does not verify (changed, from another server process, or for another workflow or caller); call the tool again without it',
      );
    }
    let parsed: z.infer<typeof SealedSchema>;
    try {
      parsed = SealedSchema.parse(JSON.parse(plain.toString('utf8')));
    } catch {
      // Only this process can seal, so this means a bug, not an attack; refuse all the same.
      return refused('malformed', 'requestState is malformed');
    }
    if (parsed.exp <= this.#now()) {
      return refused('expired', 'requestState expired; call the tool again without it');
    }
    const { session, key, reason, records, inputs, exp } = parsed;
    const checkpoint = { session, key, reason, records, expiresAt: exp };
    return { ok: true, checkpoint: inputs === undefined ? checkpoint : { ...checkpoint, inputs } };
  }
}

/** The additional authenticated data: every binding field, unambiguously separated. */
function aad(binding: PauseBinding): Buffer {
  return Buffer.from(
    JSON.stringify([
      'mhl-pause',
      binding.workflow,
      binding.digest,
      binding.principal ?? null,
      binding.call,
    ]),
    'utf8',
  );
}

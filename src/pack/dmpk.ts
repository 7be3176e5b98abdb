/**
 * The DMPK v2 container, little-endian throughout:
 *
 *   header   "DMPK" · u8 2 · 3 zero bytes · u32 entry count                        (12 bytes)
 *   entry    12-byte random nonce · u32 length · AES-256-GCM ciphertext (length bytes,
 *            16-byte tag appended; AAD = the entry's index as u32) of:
 *              u16 path length · UTF-8 path · content
 *
 * Decoding checks every byte: the header's fixed fields exactly, each entry's tag (pinned to 16
 * bytes, since Node otherwise accepts a truncated tag), the entry count against the bytes
 * present, and each path's shape and uniqueness. Any failure throws a `PackError` naming the
 * check; nothing decrypted from a failed pack is returned. Pure: no file system, no logging.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PACK_ERROR_CODES, PackError } from './errors.js';
import { packPathProblem } from './paths.js';

/** AES-256 key bytes. */
export const KEY_BYTES = 32;
/** The four magic bytes. */
export const DMPK_MAGIC = 'DMPK';
/** The format version this module reads and writes. */
export const DMPK_VERSION = 2;
/** Header bytes: magic, version, three reserved zero bytes, u32 count. */
export const HEADER_BYTES = 12;
/** Per-entry random nonce (the GCM IV). */
export const NONCE_BYTES = 12;
/** GCM tag bytes, appended to each ciphertext. */
export const TAG_BYTES = 16;
/** The smallest valid entry length: a tag and an empty plaintext's u16 path length. */
const MIN_CIPHERTEXT_BYTES = TAG_BYTES + 2;
/** Largest pack read or written (256 MiB): a pack is held in memory whole. */
export const MAX_PACK_BYTES = 256 * 1024 * 1024;

const CIPHER = 'aes-256-gcm';

/** One file of a pack: its relative POSIX path and its bytes. */
export interface PackEntry {
  readonly path: string;
  readonly content: Uint8Array;
}

/**
 * Encrypts `entries`, in the given order, under `key` (32 bytes). Does not sort or deduplicate:
 * the packer does that. Throws `PackError` `PACK_BAD_PATH` for a path the reader would refuse
 * and `PACK_TOO_LARGE` past `MAX_PACK_BYTES`.
 */
export function encodePack(entries: readonly PackEntry[], key: Uint8Array): Buffer {
  checkKeyLength(key);
  const parts: Buffer[] = [header(entries.length)];
  let total = HEADER_BYTES;
  for (const [index, entry] of entries.entries()) {
    const problem = packPathProblem(entry.path);
    if (problem !== undefined) {
      throw new PackError(
        PACK_ERROR_CODES.BAD_PATH,
        `path ${JSON.stringify(entry.path)} ${problem}`,
        {
          entry: index,
        },
      );
    }
    const sealed = sealEntry(index, entry, key);
    total += sealed.length;
    if (total > MAX_PACK_BYTES) {
      throw new PackError(
        PACK_ERROR_CODES.TOO_LARGE,
        `the pack would be larger than ${MAX_PACK_BYTES} bytes (at ${JSON.stringify(entry.path)})`,
        { entry: index },
      );
    }
    parts.push(sealed);
  }
  return Buffer.concat(parts, total);
}

/**
 * Decrypts and checks a whole pack. Returns its entries in pack order; `content` views share
 * one buffer per entry. Throws `PackError` with the code of the first check that fails.
 */
export function decodePack(bytes: Uint8Array, key: Uint8Array): PackEntry[] {
  checkKeyLength(key);
  const pack = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (pack.length > MAX_PACK_BYTES) {
    throw new PackError(PACK_ERROR_CODES.TOO_LARGE, `larger than ${MAX_PACK_BYTES} bytes`);
  }
  const count = readHeader(pack);
  const entries: PackEntry[] = [];
  const seen = new Map<string, number>();
  let offset = HEADER_BYTES;
  for (let index = 0; index < count; index++) {
    const sealed = nextEntry(pack, offset, index, count);
    offset = sealed.end;
    const entry = openEntry(index, sealed.nonce, sealed.ciphertext, key);
    const earlier = seen.get(entry.path);
    if (earlier !== undefined) {
      throw new PackError(
        PACK_ERROR_CODES.DUPLICATE_PATH,
        `entry ${index} repeats the path ${JSON.stringify(entry.path)} of entry ${earlier}`,
        { entry: index },
      );
    }
    seen.set(entry.path, index);
    entries.push(entry);
  }
  if (offset !== pack.length) {
    throw new PackError(
      PACK_ERROR_CODES.COUNT_MISMATCH,
      `the header declares ${count} entries, but ${pack.length - offset} more bytes follow them`,
    );
  }
  return entries;
}

function checkKeyLength(key: Uint8Array): void {
  if (key.length !== KEY_BYTES) {
    throw new PackError(
      PACK_ERROR_CODES.KEY_MALFORMED,
      `a pack key is ${KEY_BYTES} bytes, not ${key.length}`,
    );
  }
}

function header(count: number): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.write(DMPK_MAGIC, 0, 'latin1');
  h.writeUInt8(DMPK_VERSION, 4);
  h.writeUInt32LE(count, 8);
  return h;
}

/** Checks the fixed header fields; returns the declared entry count. */
function readHeader(pack: Buffer): number {
  if (pack.length < HEADER_BYTES) {
    throw new PackError(
      PACK_ERROR_CODES.TRUNCATED,
      `the pack is ${pack.length} bytes, shorter than its ${HEADER_BYTES}-byte header`,
    );
  }
  if (pack.toString('latin1', 0, 4) !== DMPK_MAGIC) {
    throw new PackError(
      PACK_ERROR_CODES.BAD_MAGIC,
      'not a DMPK pack (it does not start with "DMPK")',
    );
  }
  const version = pack.readUInt8(4);
  if (version !== DMPK_VERSION) {
    throw new PackError(
      PACK_ERROR_CODES.UNSUPPORTED_VERSION,
      `DMPK version ${version}; this mhl reads version ${DMPK_VERSION} (rebuild it with mhl pack)`,
    );
  }
  if (pack[5] !== 0 || pack[6] !== 0 || pack[7] !== 0) {
    throw new PackError(PACK_ERROR_CODES.BAD_HEADER, 'the reserved header bytes 5-7 are not zero');
  }
  return pack.readUInt32LE(8);
}

/** The nonce and ciphertext of entry `index` at `offset`, bounds-checked. */
function nextEntry(
  pack: Buffer,
  offset: number,
  index: number,
  count: number,
): { nonce: Buffer; ciphertext: Buffer; end: number } {
  if (offset === pack.length) {
    throw new PackError(
      PACK_ERROR_CODES.TRUNCATED,
      `the header declares ${count} entries, but the pack ends after ${index} (truncated, or a wrong count)`,
      { entry: index },
    );
  }
  if (pack.length - offset < NONCE_BYTES + 4) {
    throw new PackError(
      PACK_ERROR_CODES.TRUNCATED,
      `the pack ends inside entry ${index}'s nonce and length`,
      {
        entry: index,
      },
    );
  }
  const nonce = pack.subarray(offset, offset + NONCE_BYTES);
  const length = pack.readUInt32LE(offset + NONCE_BYTES);
  const start = offset + NONCE_BYTES + 4;
  if (length < MIN_CIPHERTEXT_BYTES) {
    throw new PackError(
      PACK_ERROR_CODES.BAD_ENTRY,
      `entry ${index} is ${length} bytes long; an entry holds at least ${MIN_CIPHERTEXT_BYTES} (tag and path length)`,
      { entry: index },
    );
  }
  if (length > pack.length - start) {
    throw new PackError(
      PACK_ERROR_CODES.TRUNCATED,
      `entry ${index} declares ${length} bytes, but only ${pack.length - start} remain`,
      { entry: index },
    );
  }
  return { nonce, ciphertext: pack.subarray(start, start + length), end: start + length };
}

function indexAad(index: number): Buffer {
  const aad = Buffer.alloc(4);
  aad.writeUInt32LE(index, 0);
  return aad;
}

function sealEntry(index: number, entry: PackEntry, key: Uint8Array): Buffer {
  const path = Buffer.from(entry.path, 'utf8');
  const plainHead = Buffer.alloc(2);
  plainHead.writeUInt16LE(path.length, 0);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(CIPHER, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(indexAad(index));
  const body = [cipher.update(plainHead), cipher.update(path), cipher.update(entry.content)];
  body.push(cipher.final(), cipher.getAuthTag());
  const length = body.reduce((n, b) => n + b.length, 0);
  const lengthField = Buffer.alloc(4);
  lengthField.writeUInt32LE(length, 0);
  return Buffer.concat([nonce, lengthField, ...body]);
}

function openEntry(index: number, nonce: Buffer, ciphertext: Buffer, key: Uint8Array): PackEntry {
  const tag = ciphertext.subarray(ciphertext.length - TAG_BYTES);
  const decipher = createDecipheriv(CIPHER, key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(indexAad(index));
  decipher.setAuthTag(tag);
  let plain: Buffer;
  try {
    const head = decipher.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES));
    plain = Buffer.concat([head, decipher.final()]);
  } catch (cause) {
    throw new PackError(
      PACK_ERROR_CODES.AUTH_FAILED,
      `entry ${index} failed authentication: a wrong key, or the pack was modified`,
      { entry: index, cause },
    );
  }
  return parsePlaintext(index, plain);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function parsePlaintext(index: number, plain: Buffer): PackEntry {
  const pathBytes = plain.readUInt16LE(0);
  if (pathBytes > plain.length - 2) {
    throw new PackError(
      PACK_ERROR_CODES.BAD_ENTRY,
      `entry ${index} declares a ${pathBytes}-byte path, longer than the entry`,
      { entry: index },
    );
  }
  let path: string;
  try {
    path = UTF8.decode(plain.subarray(2, 2 + pathBytes));
  } catch (cause) {
    throw new PackError(PACK_ERROR_CODES.BAD_PATH, `entry ${index}'s path is not valid UTF-8`, {
      entry: index,
      cause,
    });
  }
  const problem = packPathProblem(path);
  if (problem !== undefined) {
    throw new PackError(
      PACK_ERROR_CODES.BAD_PATH,
      `entry ${index}'s path ${JSON.stringify(path)} ${problem}`,
      { entry: index },
    );
  }
  return { path, content: plain.subarray(2 + pathBytes) };
}

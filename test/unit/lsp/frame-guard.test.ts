/**
 * FrameGuard (src/lsp/frame-guard.ts): passes LSP framing through byte for byte, skips a
 * message that declares more than the cap, and leaves malformed headers for the reader, however
 * the bytes are split into chunks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameGuard } from '../../../src/lsp/frame-guard.js';

function frame(body: string, length = Buffer.byteLength(body)): string {
  return `Content-Length: ${length}\r\n\r\n${body}`;
}

/** Feeds `input` in chunks of `size` bytes and returns what came out and what was dropped. */
async function through(
  input: string,
  size: number,
  cap = 100,
): Promise<{ out: string; dropped: number[] }> {
  const dropped: number[] = [];
  const guard = new FrameGuard(cap, (n) => dropped.push(n));
  const parts: Buffer[] = [];
  guard.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((done) => guard.on('end', done));
  const bytes = Buffer.from(input);
  for (let i = 0; i < bytes.length; i += size) guard.write(bytes.subarray(i, i + size));
  guard.end();
  await ended;
  return { out: Buffer.concat(parts).toString(), dropped };
}

describe('FrameGuard', () => {
  const small = frame('{"jsonrpc":"2.0","method":"a","params":{"t":"é"}}');
  const huge = frame(`{"x":"${'y'.repeat(200)}"}`);

  it('passes messages under the cap through unchanged, whatever the chunking', async () => {
    for (const size of [1, 2, 3, 5, 7, 64, 4096]) {
      const r = await through(small + small, size);
      assert.equal(r.out, small + small, `chunks of ${size}`);
      assert.deepEqual(r.dropped, []);
    }
  });

  it('skips a message over the cap, headers and body, and keeps the ones around it', async () => {
    for (const size of [1, 3, 17, 4096]) {
      const r = await through(small + huge + small, size);
      assert.equal(r.out, small + small, `chunks of ${size}`);
      assert.deepEqual(r.dropped, [Buffer.byteLength(huge) - huge.indexOf('{')]);
    }
  });

  it('leaves headers without a length, or too long to be headers, for the reader', async () => {
    const bad = 'Content-Type: x\r\n\r\n';
    assert.equal((await through(bad + small, 4)).out, bad + small);
    const noise = 'z'.repeat(10_000);
    assert.equal((await through(noise, 1000)).out, noise);
  });
});

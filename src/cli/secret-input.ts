/**
 * How `mhl secrets add|edit` reads a value: from standard input, never from argv or the
 * environment (both are visible to other processes and end up in shell history). With
 * `--stdin` or when standard input is not a terminal, all of it is read (at most 64 KiB and one
 * line break, which is dropped: `printf` and `echo` both work). On a terminal, a prompt on
 * stderr reads one line with echo off.
 */
import { MAX_VALUE_BYTES } from '../secrets/index.js';

export class InputError extends Error {
  readonly code: 'SECRET_VALUE_INVALID' | 'CANCELLED';

  constructor(code: InputError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** Reads the value from `stdin` as `--stdin` or a prompt says. */
export async function readSecretValue(name: string, forceStdin: boolean): Promise<string> {
  const stdin = process.stdin;
  if (forceStdin || !stdin.isTTY) return readAll(stdin);
  return prompt(`Value for ${name} (not shown): `);
}

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    // One line break more than the largest value may follow it.
    if (size > MAX_VALUE_BYTES + 2) {
      stream.destroy();
      throw new InputError(
        'SECRET_VALUE_INVALID',
        `standard input holds more than ${MAX_VALUE_BYTES} bytes`,
      );
    }
    chunks.push(bytes);
  }
  return stripLineBreak(Buffer.concat(chunks).toString('utf8'));
}

function stripLineBreak(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

/** One line from the terminal with echo off; Ctrl-C or Ctrl-D before Enter cancels. */
function prompt(question: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off first, then the prompt: a value typed the moment the prompt shows is never echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((done, fail) => {
    let value = '';
    const finish = (error?: InputError) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error === undefined) done(value);
      else fail(error);
    };
    const onData = (text: string) => {
      for (const c of text) {
        if (c === '\r' || c === '\n') return finish();
        if (c === '\u0003' || c === '\u0004')
          return finish(new InputError('CANCELLED', 'cancelled'));
        if (c === '\u007f' || c === '\b') value = [...value].slice(0, -1).join('');
        else value += c;
      }
    };
    stdin.on('data', onData);
  });
}

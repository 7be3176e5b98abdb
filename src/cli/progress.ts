/**
 * What `mhl run` shows while a run goes: plain `session:` and `step:` lines when output is not a
 * terminal, and on a terminal also a live status line on stderr (current step, elapsed time)
 * that program output scrolls above.
 */
import type { RunEvent } from '../runtime/index.js';
import type { Output } from './lint.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export class Progress {
  readonly #live: boolean;
  readonly #io: Output;
  #status = '';
  #timer: NodeJS.Timeout | undefined;
  #stepStarted = Date.now();
  readonly #runStarted = Date.now();
  #frame = 0;

  constructor(live: boolean, io: Output) {
    this.#live = live;
    this.#io = io;
  }

  /** Reports a runner event; `lines` prints the plain `session:`/`step:` lines. */
  event(e: RunEvent, lines: boolean): void {
    if (e.type === 'run_start' && lines) this.line(`session: ${e.session ?? ''}`);
    if (e.type === 'step_start') {
      if (lines) this.line(`step: ${e.step}`);
      this.#stepStarted = Date.now();
      this.#status = `${e.step} (${e.index + 1}/${e.total})`;
      this.#start();
    }
    if (e.type === 'step_skipped' && lines)
      this.line(`step: ${e.step} (skipped: already completed)`);
  }

  /** Prints one line of output above the status line. */
  line(text: string): void {
    this.#clear();
    this.#io.out(text);
    this.#draw();
  }

  done(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#clear();
    this.#status = '';
  }

  #start(): void {
    if (!this.#live || this.#timer) return;
    this.#timer = setInterval(() => this.#draw(), 100);
    this.#timer.unref();
  }

  #clear(): void {
    if (this.#live && this.#status) process.stderr.write('\r\x1b[2K');
  }

  #draw(): void {
    if (!this.#live || !this.#status) return;
    const step = ((Date.now() - this.#stepStarted) / 1000).toFixed(1);
    const total = ((Date.now() - this.#runStarted) / 1000).toFixed(1);
    this.#frame = (this.#frame + 1) % FRAMES.length;
    process.stderr.write(
      `\r\x1b[2K${FRAMES[this.#frame]} ${this.#status} ${step}s (total ${total}s)`,
    );
  }
}

/**
 * A one-line progress display on stderr for long CLI runs (training, eval, bench). Redraws in place
 * on a TTY at most every 100 ms; off a TTY (CI, pipes) prints a plain line every ~10 %.
 */
export interface Progress {
  /** Sets the completed count (and optionally a short status text). */
  update(done: number, status?: string): void;
  /** Prints the final state and a newline. */
  finish(status?: string): void;
}

export function createProgress(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = stream.isTTY === true;
  const started = Date.now();
  let lastDraw = 0;
  let lastDecile = -1;
  let done = 0;
  let status = '';

  const line = (): string => {
    const frac = total > 0 ? Math.min(1, done / total) : 1;
    const elapsed = (Date.now() - started) / 1000;
    const eta = frac > 0 && frac < 1 ? ` eta ${((elapsed / frac) * (1 - frac)).toFixed(0)}s` : '';
    const width = 24;
    const filled = Math.round(frac * width);
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
    return `${label} [${bar}] ${done}/${total} ${(frac * 100).toFixed(0)}% ${elapsed.toFixed(1)}s${eta}${status ? ` ${status}` : ''}`;
  };

  return {
    update(n, s) {
      done = n;
      if (s !== undefined) status = s;
      const now = Date.now();
      if (tty) {
        if (now - lastDraw < 100) return;
        lastDraw = now;
        stream.write(`\r\x1b[2K${line()}`);
      } else {
        const decile = total > 0 ? Math.floor((10 * done) / total) : 10;
        if (decile === lastDecile) return;
        lastDecile = decile;
        stream.write(`${line()}\n`);
      }
    },
    finish(s) {
      if (s !== undefined) status = s;
      done = Math.max(done, total);
      stream.write(tty ? `\r\x1b[2K${line()}\n` : `${line()}\n`);
    },
  };
}

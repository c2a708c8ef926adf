/**
 * The file side of the decision log: appends batches of lines to the current NDJSON file, starts a
 * new file past `maxFileBytes` (each file begins with the policy lines its decisions need, so it
 * replays on its own), and deletes the oldest files beyond `maxFiles`. Any failure throws to the
 * caller, which counts the batch as dropped; the broken file is abandoned so that a line cut short
 * by a full disk never has a later line glued to it.
 */
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';

export const LOG_FILE_PATTERN = /^decisions-.*\.ndjson$/;

/** One line to write, with the policy line its decision needs before it in the same file. */
export interface SinkLine {
  readonly policyHash: string;
  readonly policyLine: string;
  readonly line: string;
}

/** `decisions-20250101T120000123Z-<pid>-0001.ndjson`: names sort in time order across processes. */
function fileName(now: Date, seq: number): string {
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  return `decisions-${stamp}-${process.pid}-${String(seq).padStart(4, '0')}.ndjson`;
}

export class FileSink {
  private handle: FileHandle | undefined;
  private path: string | undefined;
  private fileBytes = 0;
  private seq = 0;
  private policiesInFile = new Set<string>();
  /** The batch being written, encoded (reused: one write at a time). */
  private buffer = Buffer.allocUnsafe(256 * 1024);
  /** Files opened by this sink. */
  files = 0;

  constructor(
    private readonly dir: string,
    private readonly maxFileBytes: number,
    private readonly maxFiles: number,
  ) {}

  /**
   * Appends the lines, starting a new file whenever the next line would take the current one past
   * maxFileBytes (a file holds at least one decision); returns the bytes written. The lines are
   * encoded into one reused buffer and written from it: a batch joined into one string and
   * encoded by the write became a string of megabytes, allocated where only a full GC frees it.
   */
  async write(lines: readonly SinkLine[]): Promise<number> {
    if (this.handle === undefined) await this.rotate();
    let used = 0;
    let written = 0;
    for (const l of lines) {
      const needsPolicy = !this.policiesInFile.has(l.policyHash);
      const policyBytes = needsPolicy ? Buffer.byteLength(l.policyLine) + 1 : 0;
      const lineBytes = Buffer.byteLength(l.line) + 1;
      if (this.fileBytes + used > 0 && this.fileBytes + used + policyBytes + lineBytes > this.maxFileBytes) {
        written += await this.append(used);
        used = 0;
        await this.rotate();
      }
      if (!this.policiesInFile.has(l.policyHash)) {
        used = this.put(l.policyLine, used);
        this.policiesInFile.add(l.policyHash);
      }
      used = this.put(l.line, used);
    }
    return written + (await this.append(used));
  }

  /** Encodes `text` and a newline at `at` of the buffer (grown as needed); returns the end. */
  private put(text: string, at: number): number {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const need = at + text.length * 3 + 1;
    if (need > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, at);
      this.buffer = grown;
    }
    const end = at + this.buffer.write(text, at, 'utf8');
    this.buffer[end] = 0x0a;
    return end + 1;
  }

  /** Writes the first `bytes` of the buffer to the current file. */
  private async append(bytes: number): Promise<number> {
    if (bytes === 0) return 0;
    try {
      let done = 0;
      while (done < bytes) {
        const { bytesWritten } = await (this.handle as FileHandle).write(this.buffer, done, bytes - done);
        if (bytesWritten <= 0) throw new Error('decision log: a write wrote nothing');
        done += bytesWritten;
      }
    } catch (error) {
      await this.abandon();
      throw error;
    }
    this.fileBytes += bytes;
    return bytes;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
  }

  /** Drops the current file so the next write starts a clean one (after an error). */
  async abandon(): Promise<void> {
    await this.close();
    this.fileBytes = 0;
    this.policiesInFile = new Set();
  }

  private async rotate(): Promise<void> {
    await this.close();
    await mkdir(this.dir, { recursive: true });
    this.seq++;
    const path = join(this.dir, fileName(new Date(), this.seq));
    this.handle = await open(path, 'a');
    this.path = path;
    this.files++;
    this.fileBytes = 0;
    this.policiesInFile = new Set();
    await this.prune();
  }

  /** Deletes the oldest log files beyond maxFiles (never the current one); failures are ignored. */
  private async prune(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => LOG_FILE_PATTERN.test(n)).sort();
    } catch {
      return;
    }
    const current = this.path === undefined ? '' : basename(this.path);
    const old = names.filter((n) => n !== current);
    const excess = names.length - this.maxFiles;
    for (let i = 0; i < excess && i < old.length; i++) await unlink(join(this.dir, old[i])).catch(() => undefined);
  }
}

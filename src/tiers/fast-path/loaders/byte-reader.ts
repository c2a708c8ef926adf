/**
 * A little-endian cursor over untrusted bytes. Every read is bounds-checked and throws
 * ModelFormatError naming what was being read, so a truncated or hostile file fails cleanly;
 * counts read from the file are checked against the bytes that remain before anything is
 * allocated, so a forged count cannot make a loader allocate gigabytes or loop for long.
 */
import { ModelFormatError } from '../../../errors.js';

/** A text model given as a string or as its bytes: the text, or ModelFormatError when the bytes are not UTF-8. */
export function modelText(input: string | Uint8Array, where: string): string {
  if (typeof input === 'string') return input;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(input);
  } catch (cause) {
    throw new ModelFormatError(`${where}: not valid UTF-8`, { cause });
  }
}

export class ByteReader {
  private readonly view: DataView;
  private pos = 0;

  constructor(
    readonly bytes: Uint8Array,
    private readonly where: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  fail(message: string): never {
    throw new ModelFormatError(`${this.where}: ${message} (at byte ${this.pos})`);
  }

  /** Ensures `n` more bytes exist; `what` names the field for the error message. */
  need(n: number, what: string): void {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.remaining) {
      this.fail(`truncated or corrupt: ${what} needs ${n} bytes, ${this.remaining} remain`);
    }
  }

  /** Checks that `count` items of `itemSize` bytes each fit in what remains (before allocating). */
  needItems(count: number, itemSize: number, what: string): void {
    if (!Number.isSafeInteger(count) || count < 0 || count > Math.floor(this.remaining / Math.max(1, itemSize))) {
      this.fail(`${what}: count ${count} does not fit in the ${this.remaining} remaining bytes`);
    }
  }

  skip(n: number, what: string): void {
    this.need(n, what);
    this.pos += n;
  }

  peek(n: number): Uint8Array {
    return this.bytes.subarray(this.pos, Math.min(this.bytes.length, this.pos + n));
  }

  u8(what: string): number {
    this.need(1, what);
    return this.view.getUint8(this.pos++);
  }

  i8(what: string): number {
    this.need(1, what);
    return this.view.getInt8(this.pos++);
  }

  i16be(what: string): number {
    this.need(2, what);
    const v = this.view.getInt16(this.pos, false);
    this.pos += 2;
    return v;
  }

  i32(what: string, littleEndian = true): number {
    this.need(4, what);
    const v = this.view.getInt32(this.pos, littleEndian);
    this.pos += 4;
    return v;
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  f32(what: string, littleEndian = true): number {
    this.need(4, what);
    const v = this.view.getFloat32(this.pos, littleEndian);
    this.pos += 4;
    return v;
  }

  f64be(what: string): number {
    this.need(8, what);
    const v = this.view.getFloat64(this.pos, false);
    this.pos += 8;
    return v;
  }

  /** A 64-bit integer as a JS number; values beyond 2^53 are reported as corrupt. */
  i64(what: string, littleEndian = true): number {
    this.need(8, what);
    const v = this.view.getBigInt64(this.pos, littleEndian);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail(`${what} = ${v} is out of range`);
    }
    return Number(v);
  }

  u64(what: string): bigint {
    this.need(8, what);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  bytesView(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  utf8(n: number, what: string): string {
    const raw = this.bytesView(n, what);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(raw);
    } catch {
      return this.fail(`${what} is not valid UTF-8`);
    }
  }
}

/**
 * A small, strict UBJSON (Draft 12) decoder for untrusted model files, as XGBoost writes them:
 * big-endian numbers, objects whose keys are length-prefixed without an `S` marker, and optimized
 * containers (`[$d#L<count>` followed by raw float32s) that decode here to typed arrays.
 *
 * Why not an npm package: the decoders we looked at (e.g. @shelacek/ubjson) trust the `#` count,
 * so `[$Z#L<2^40>` or a huge count allocates or loops before noticing the file is short. Here:
 * - every count is checked against the bytes remaining (zero-width typed containers are refused);
 * - nesting depth is limited (MAX_DEPTH), so the recursion cannot blow the stack;
 * - strings must be valid UTF-8; objects have a null prototype (no `__proto__` games);
 * - 64-bit integers outside ±2^53 are refused instead of silently rounded.
 * Any violation throws ModelFormatError with the byte offset.
 */
import { ModelFormatError } from '../../../errors.js';

export type UbjsonValue =
  | null
  | boolean
  | number
  | string
  | UbjsonValue[]
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Int32Array
  | { [key: string]: UbjsonValue };

const MAX_DEPTH = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Byte width of a typed-container element, per type marker. */
const WIDTH: Readonly<Record<string, number>> = { i: 1, U: 1, C: 1, I: 2, l: 4, d: 4, L: 8, D: 8 };

class Decoder {
  private pos = 0;
  private readonly view: DataView;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly where: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(message: string): never {
    throw new ModelFormatError(`${this.where}: invalid UBJSON: ${message} (at byte ${this.pos})`);
  }

  private need(n: number): void {
    if (n > this.bytes.length - this.pos) this.fail(`truncated: need ${n} more bytes`);
  }

  private marker(): string {
    this.need(1);
    return String.fromCharCode(this.bytes[this.pos++] as number);
  }

  private peekMarker(): string {
    this.need(1);
    return String.fromCharCode(this.bytes[this.pos] as number);
  }

  private int(m: string): number {
    const v = this.view;
    switch (m) {
      case 'i':
        this.need(1);
        return v.getInt8(this.pos++);
      case 'U':
        this.need(1);
        return v.getUint8(this.pos++);
      case 'I': {
        this.need(2);
        const x = v.getInt16(this.pos, false);
        this.pos += 2;
        return x;
      }
      case 'l': {
        this.need(4);
        const x = v.getInt32(this.pos, false);
        this.pos += 4;
        return x;
      }
      case 'L': {
        this.need(8);
        const x = v.getBigInt64(this.pos, false);
        if (x > BigInt(Number.MAX_SAFE_INTEGER) || x < BigInt(Number.MIN_SAFE_INTEGER))
          this.fail(`int64 ${x} is out of range`);
        this.pos += 8;
        return Number(x);
      }
      default:
        return this.fail(`expected an integer marker, got ${JSON.stringify(m)}`);
    }
  }

  private length(what: string): number {
    const n = this.int(this.marker());
    if (n < 0) this.fail(`negative ${what} ${n}`);
    return n;
  }

  private string(): string {
    const n = this.length('string length');
    this.need(n);
    const raw = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    try {
      return utf8.decode(raw);
    } catch {
      return this.fail('string is not valid UTF-8');
    }
  }

  private scalar(m: string): UbjsonValue {
    switch (m) {
      case 'Z':
        return null;
      case 'T':
        return true;
      case 'F':
        return false;
      case 'i':
      case 'U':
      case 'I':
      case 'l':
      case 'L':
        return this.int(m);
      case 'd': {
        this.need(4);
        const x = this.view.getFloat32(this.pos, false);
        this.pos += 4;
        return x;
      }
      case 'D': {
        this.need(8);
        const x = this.view.getFloat64(this.pos, false);
        this.pos += 8;
        return x;
      }
      case 'C':
        this.need(1);
        return String.fromCharCode(this.bytes[this.pos++] as number);
      case 'S':
        return this.string();
      case 'H': {
        const s = this.string();
        const x = Number(s);
        if (s.trim() === '' || Number.isNaN(x))
          this.fail(`high-precision number ${JSON.stringify(s.slice(0, 40))} is not a number`);
        return x;
      }
      default:
        return this.fail(`unknown value marker ${JSON.stringify(m)}`);
    }
  }

  value(depth: number): UbjsonValue {
    let m = this.marker();
    while (m === 'N') m = this.marker(); // no-op padding
    if (m === '[' || m === '{') {
      if (depth >= MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
      return m === '[' ? this.array(depth + 1) : this.object(depth + 1);
    }
    return this.scalar(m);
  }

  /** Reads the optional `$type` and `#count` header of a container. */
  private header(): { type?: string; count?: number } {
    let type: string | undefined;
    if (this.peekMarker() === '$') {
      this.pos++;
      type = this.marker();
      if (this.peekMarker() !== '#') this.fail('a typed container must have a count');
    }
    if (this.peekMarker() === '#') {
      this.pos++;
      const count = this.length('container count');
      return type === undefined ? { count } : { type, count };
    }
    return {};
  }

  private typedArray(type: string, count: number): UbjsonValue {
    const width = WIDTH[type];
    if (width === undefined) {
      // Z/T/F/N (zero bytes each) or containers as element type: never written by XGBoost, and
      // a zero-width element would let a forged count loop without consuming input.
      return this.fail(`unsupported typed container element type ${JSON.stringify(type)}`);
    }
    if (count > Math.floor((this.bytes.length - this.pos) / width)) {
      this.fail(`typed container of ${count} × ${width} bytes exceeds the remaining input`);
    }
    const start = this.pos;
    this.pos += count * width;
    const v = this.view;
    switch (type) {
      case 'U':
        return this.bytes.slice(start, start + count);
      case 'i':
        return new Int8Array(this.bytes.slice(start, start + count).buffer);
      case 'C':
        return this.chars(start, count);
      case 'I': {
        const out = new Int16Array(count);
        for (let i = 0; i < count; i++) out[i] = v.getInt16(start + 2 * i, false);
        return out;
      }
      case 'l': {
        const out = new Int32Array(count);
        for (let i = 0; i < count; i++) out[i] = v.getInt32(start + 4 * i, false);
        return out;
      }
      case 'd': {
        const out = new Float32Array(count);
        for (let i = 0; i < count; i++) out[i] = v.getFloat32(start + 4 * i, false);
        return out;
      }
      case 'D': {
        const out = new Float64Array(count);
        for (let i = 0; i < count; i++) out[i] = v.getFloat64(start + 8 * i, false);
        return out;
      }
      default: {
        // 'L': int64 elements, kept as a Float64Array of exact safe integers.
        const out = new Float64Array(count);
        for (let i = 0; i < count; i++) {
          const x = v.getBigInt64(start + 8 * i, false);
          if (x > BigInt(Number.MAX_SAFE_INTEGER) || x < BigInt(Number.MIN_SAFE_INTEGER)) {
            this.pos = start + 8 * i;
            this.fail(`int64 ${x} is out of range`);
          }
          out[i] = Number(x);
        }
        return out;
      }
    }
  }

  private chars(start: number, count: number): UbjsonValue {
    const out: string[] = [];
    for (let i = 0; i < count; i++) out.push(String.fromCharCode(this.bytes[start + i] as number));
    return out;
  }

  private array(depth: number): UbjsonValue {
    const { type, count } = this.header();
    if (type !== undefined && count !== undefined) return this.typedArray(type, count);
    const out: UbjsonValue[] = [];
    if (count !== undefined) {
      // Every untyped element takes at least one byte.
      if (count > this.bytes.length - this.pos) this.fail(`array count ${count} exceeds the remaining input`);
      for (let i = 0; i < count; i++) out.push(this.value(depth));
      return out;
    }
    for (;;) {
      if (this.peekMarker() === ']') {
        this.pos++;
        return out;
      }
      out.push(this.value(depth));
    }
  }

  private object(depth: number): UbjsonValue {
    const { type, count } = this.header();
    const out = Object.create(null) as { [key: string]: UbjsonValue };
    const entry = (): void => {
      const key = this.string();
      out[key] = type !== undefined ? this.typedValue(type) : this.value(depth);
    };
    if (count !== undefined) {
      // Every entry takes at least two bytes (key length marker + value or key byte).
      if (count > (this.bytes.length - this.pos) / 2) this.fail(`object count ${count} exceeds the remaining input`);
      for (let i = 0; i < count; i++) entry();
      return out;
    }
    for (;;) {
      if (this.peekMarker() === '}') {
        this.pos++;
        return out;
      }
      entry();
    }
  }

  private typedValue(type: string): UbjsonValue {
    if (WIDTH[type] === undefined && type !== 'S' && type !== 'H') {
      return this.fail(`unsupported typed object value type ${JSON.stringify(type)}`);
    }
    return this.scalar(type);
  }

  end(): void {
    if (this.pos !== this.bytes.length) this.fail(`${this.bytes.length - this.pos} trailing bytes after the document`);
  }
}

export function decodeUbjson(bytes: Uint8Array, where = 'UBJSON document'): UbjsonValue {
  const d = new Decoder(bytes, where);
  const v = d.value(0);
  d.end();
  return v;
}

/**
 * A small safetensors reader and writer (https://github.com/huggingface/safetensors, format):
 *
 *   8 bytes   N, unsigned 64-bit little-endian: the header's length
 *   N bytes   JSON object: name → { dtype, shape, data_offsets: [begin, end] } (offsets relative to
 *             the byte after the header), plus an optional "__metadata__": { string: string }
 *   rest      the tensors' raw little-endian bytes, row-major
 *
 * Every entry is checked (dtype known, size = product of the shape × element size, offsets inside
 * the data, no overlap). Float tensors come out as float32: F32 as is (a view when aligned on a
 * little-endian host), F16 and BF16 widened exactly. No pickle, no code: nothing in the file runs.
 */
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { SafetensorsFormatError, UnsupportedDtypeError } from './errors.js';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** Element sizes of the dtypes the format defines. */
const DTYPE_BYTES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
};

/** dtypes read as float32 weights. */
export const FLOAT_DTYPES: readonly string[] = ['F32', 'F16', 'BF16'];

/** A header larger than this is not a model header (the format's own reader caps it at 100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

export interface SafetensorsTensor {
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  /** Absolute byte range in the file. */
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsFile {
  readonly path: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** Tensors in file order (by offset). */
  readonly tensors: ReadonlyMap<string, SafetensorsTensor>;
  readonly bytes: Uint8Array;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a safetensors file already in memory. */
export function parseSafetensors(bytes: Uint8Array, path = '<buffer>'): SafetensorsFile {
  const fail = (why: string, cause?: unknown): never => {
    throw new SafetensorsFormatError(`${path} is not a valid safetensors file: ${why}`, { cause });
  };
  if (bytes.byteLength < 8) fail(`${bytes.byteLength} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength < 2 || headerLength > MAX_HEADER_BYTES || 8 + headerLength > bytes.byteLength) {
    fail(`header length ${headerLength} does not fit the file (${bytes.byteLength} bytes)`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
  } catch (cause) {
    fail(`the header is not UTF-8 JSON (${(cause as Error).message})`, cause);
  }
  if (!isRecord(header)) return fail('the header is not a JSON object');
  const dataStart = 8 + headerLength;
  const dataLength = bytes.byteLength - dataStart;
  const metadata: Record<string, string> = {};
  const entries: SafetensorsTensor[] = [];
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (!isRecord(value)) fail('__metadata__ is not an object');
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (typeof v !== 'string') fail(`__metadata__.${k} is not a string`);
        metadata[k] = v as string;
      }
      continue;
    }
    if (!isRecord(value)) return fail(`entry ${name} is not an object`);
    const { dtype, shape, data_offsets: offsets } = value;
    if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_BYTES, dtype)) {
      return fail(`tensor ${name} has unknown dtype ${JSON.stringify(dtype)}`);
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      return fail(`tensor ${name} has a bad shape ${JSON.stringify(shape)}`);
    }
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
      offsets[1] < offsets[0] ||
      offsets[1] > dataLength
    ) {
      return fail(`tensor ${name} has data_offsets ${JSON.stringify(offsets)} outside the ${dataLength} data bytes`);
    }
    const elements = (shape as number[]).reduce((a, b) => a * b, 1);
    const size = elements * DTYPE_BYTES[dtype]!;
    if (offsets[1] - offsets[0] !== size) {
      fail(
        `tensor ${name} (${dtype} [${shape.join(', ')}]) needs ${size} bytes, its offsets give ${offsets[1] - offsets[0]}`,
      );
    }
    entries.push({ name, dtype, shape: shape as number[], begin: dataStart + offsets[0], end: dataStart + offsets[1] });
  }
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < entries.length; i++) {
    if (entries[i]!.begin < entries[i - 1]!.end)
      fail(`tensors ${entries[i - 1]!.name} and ${entries[i]!.name} overlap`);
  }
  return { path, metadata, tensors: new Map(entries.map((e) => [e.name, e])), bytes };
}

/** Reads and parses a safetensors file. */
export async function readSafetensors(path: string): Promise<SafetensorsFile> {
  const bytes = await readFile(path);
  return parseSafetensors(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), path);
}

/** float16 bits → float32 value (exact: every half is a float). */
function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/**
 * A float tensor as float32 values (F32, F16, BF16; UnsupportedDtypeError otherwise). F32 on a
 * little-endian host at a 4-byte-aligned offset is a view of the file's bytes, not a copy.
 */
export function tensorAsFloat32(file: SafetensorsFile, tensor: SafetensorsTensor): Float32Array {
  const { bytes } = file;
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  const at = bytes.byteOffset + tensor.begin;
  const view = new DataView(bytes.buffer, at, tensor.end - tensor.begin);
  switch (tensor.dtype) {
    case 'F32': {
      if (LITTLE_ENDIAN_HOST && at % 4 === 0) return new Float32Array(bytes.buffer, at, count);
      return Float32Array.from({ length: count }, (_, i) => view.getFloat32(4 * i, true));
    }
    case 'F16': {
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
      return out;
    }
    case 'BF16': {
      // bfloat16 is the upper half of a float32.
      const out = new Float32Array(count);
      const scratch = new DataView(new ArrayBuffer(4));
      for (let i = 0; i < count; i++) {
        scratch.setUint32(0, view.getUint16(2 * i, true) << 16);
        out[i] = scratch.getFloat32(0);
      }
      return out;
    }
    default:
      throw new UnsupportedDtypeError(tensor.name, tensor.dtype, file.path);
  }
}

/** A tensor to write: float32 values in row-major order. */
export interface Float32TensorEntry {
  readonly name: string;
  readonly shape: readonly number[];
  readonly values: Float32Array;
}

/**
 * Serializes float32 tensors as a safetensors file (F32, in the order given, header padded with
 * spaces to a multiple of 8 bytes as the reference writer does).
 */
export function encodeSafetensors(
  tensors: readonly Float32TensorEntry[],
  metadata: Readonly<Record<string, string>> = {},
): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.values.length) {
      throw new RangeError(
        `internal error: tensor ${t.name} has ${t.values.length} values for [${t.shape.join(', ')}]`,
      );
    }
    header[t.name] = { dtype: 'F32', shape: [...t.shape], data_offsets: [offset, offset + 4 * count] };
    offset += 4 * count;
  }
  let json = JSON.stringify(header);
  const encoder = new TextEncoder();
  while (encoder.encode(json).byteLength % 8 !== 0) json += ' ';
  const headerBytes = encoder.encode(json);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.byteLength;
  for (const t of tensors) {
    for (let i = 0; i < t.values.length; i++) view.setFloat32(at + 4 * i, t.values[i]!, true);
    at += 4 * t.values.length;
  }
  return out;
}

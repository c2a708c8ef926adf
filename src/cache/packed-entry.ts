/**
 * An L1 entry as the L1 keeps it: one string. The garbage collector marks a string without looking
 * inside it, while an entry kept as objects is about ten heap objects (the entry, the result, its
 * signal records and every number boxed). A full L1 (hundreds of thousands of entries) made each
 * major collection's marking cost 60–100 ms of the event loop's time within 0.2 s, and answers
 * waiting behind that came late (docs/router.md, "Hard deadline"). Packed, the main thread's
 * marking per major collection fell to a median 14 ms at the same load, and an entry takes half
 * the bytes.
 *
 * Layout: a one-byte string of 8-byte doubles in the host's byte order, one character per byte:
 * the shape, `scoredAt`, then the values in the shape's name order, bit for bit (−0 included). The shape is an index into a table of result shapes (plain record or detailed; the
 * signal names of `probabilities` and `raw`; the tier), interned once per process; the packed form
 * never leaves the process (snapshots and Redis get the entry itself). Past MAX_SHAPES distinct
 * shapes, or with more than MAX_PACKED_VALUES values, an entry is kept as JSON instead (first character `[`, which no shape id starts with), so
 * no input can grow the table without bound.
 */
import { toCacheableResult, type CacheEntry, type CacheableResult } from './entry.js';

/** The L1's stored form of a CacheEntry (see the module doc). */
export type PackedEntry = string;

/** Distinct result shapes interned at most; later shapes are packed as JSON. */
export const MAX_SHAPES = 4096;
/**
 * Values (signals + raw values) packed as doubles at most; a larger result is kept as JSON. Packing
 * spreads the bytes as call arguments, which an unbounded count would overflow, and such a shape
 * is no scorer's regular output worth interning.
 */
export const MAX_PACKED_VALUES = 1024;

interface Shape {
  /** True: `{ probabilities, raw?, tier? }`; false: a plain record of probabilities. */
  readonly detailed: boolean;
  readonly names: readonly string[];
  /** Names of `raw` (detailed only; null when the result has no raw record). */
  readonly rawNames: readonly string[] | null;
  readonly tier: string | undefined;
}

const shapes: Shape[] = [];
const shapeIds = new Map<string, number>();

function shapeId(shape: Shape): number | undefined {
  const signature = JSON.stringify([shape.detailed, shape.names, shape.rawNames, shape.tier ?? null]);
  let id = shapeIds.get(signature);
  if (id === undefined) {
    if (shapes.length >= MAX_SHAPES) return undefined;
    id = shapes.length;
    shapes.push(Object.freeze(shape));
    shapeIds.set(signature, id);
  }
  return id;
}

// One scratch area for packing and unpacking: both are synchronous, so calls never interleave.
let scratchDoubles = new Float64Array(16);
let scratchBytes = new Uint8Array(scratchDoubles.buffer);

function ensureScratch(doubles: number): void {
  if (scratchDoubles.length >= doubles) return;
  scratchDoubles = new Float64Array(Math.max(doubles, 2 * scratchDoubles.length));
  scratchBytes = new Uint8Array(scratchDoubles.buffer);
}

/** Packs an entry whose result passed toCacheableResult (finite numbers only). */
export function packEntry(entry: CacheEntry): PackedEntry {
  const result = entry.result as {
    readonly probabilities?: Readonly<Record<string, number>>;
    readonly raw?: Readonly<Record<string, number>>;
    readonly tier?: string;
  };
  const detailed = typeof result.probabilities === 'object';
  const probabilities = (detailed ? result.probabilities : result) as Readonly<Record<string, number>>;
  const names = Object.keys(probabilities);
  const rawNames = detailed && result.raw !== undefined ? Object.keys(result.raw) : null;
  const values = names.length + (rawNames === null ? 0 : rawNames.length);
  const id =
    values > MAX_PACKED_VALUES
      ? undefined
      : shapeId({ detailed, names, rawNames, tier: detailed ? result.tier : undefined });
  if (id === undefined) return JSON.stringify([entry.scoredAt, entry.result]);
  const count = 2 + values;
  ensureScratch(count);
  const doubles = scratchDoubles;
  doubles[0] = id;
  doubles[1] = entry.scoredAt;
  let at = 2;
  for (const name of names) doubles[at++] = probabilities[name] as number;
  if (rawNames !== null) {
    const raw = result.raw as Readonly<Record<string, number>>;
    for (const name of rawNames) doubles[at++] = raw[name] as number;
  }
  return String.fromCharCode.apply(null, scratchBytes.subarray(0, 8 * count) as unknown as number[]);
}

/** The entry a packed string holds: a fresh, frozen result (no two readers share one). */
export function unpackEntry(packed: PackedEntry): CacheEntry {
  // A packed shape id never starts with '[': its first byte is 0 (little-endian: the low mantissa
  // byte of a small integer) or 0x3f / 0x40 (big-endian: the exponent).
  if (isJsonPacked(packed.charCodeAt(0))) return unpackJson(packed);
  const count = packed.length >> 3;
  ensureScratch(count);
  const bytes = scratchBytes;
  for (let i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
  return unpackScratch();
}

/**
 * The entry whose packed characters are the `length` bytes at `offset` of `source` (one byte a
 * character, as an L1 shard keeps a Latin-1 string), without making the string. The JSON form
 * (first byte '[') is for the caller to read as a string.
 */
export function unpackEntryBytes(source: Uint8Array, offset: number, length: number): CacheEntry {
  ensureScratch(length >> 3);
  const bytes = scratchBytes;
  for (let i = 0; i < length; i++) bytes[i] = source[offset + i];
  return unpackScratch();
}

/** Whether packed characters starting with `firstChar` are the JSON form. */
export function isJsonPacked(firstChar: number): boolean {
  return firstChar === 0x5b; /* [ */
}

function unpackScratch(): CacheEntry {
  const doubles = scratchDoubles;
  const shape = shapes[doubles[0] as number] as Shape;
  let at = 2;
  const probabilities: Record<string, number> = {};
  for (const name of shape.names) probabilities[name] = doubles[at++] as number;
  Object.freeze(probabilities);
  let result: CacheableResult;
  if (!shape.detailed) result = probabilities;
  else {
    const detailed: { probabilities: Record<string, number>; raw?: Record<string, number>; tier?: string } = {
      probabilities,
    };
    if (shape.rawNames !== null) {
      const raw: Record<string, number> = {};
      for (const name of shape.rawNames) raw[name] = doubles[at++] as number;
      detailed.raw = Object.freeze(raw);
    }
    if (shape.tier !== undefined) detailed.tier = shape.tier;
    result = Object.freeze(detailed) as CacheableResult;
  }
  return { result, scoredAt: doubles[1] as number };
}

/** The JSON form: the result was valid when packed, so toCacheableResult gives back its frozen copy. */
function unpackJson(packed: string): CacheEntry {
  const [scoredAt, result] = JSON.parse(packed) as [number, unknown];
  return { result: toCacheableResult(result) as CacheableResult, scoredAt };
}

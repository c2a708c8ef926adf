/**
 * What the cache stores per pair: the scorer's result (every signal it returned: probabilities,
 * raw values, tier) as an immutable copy, plus when it was scored. Also validates results that
 * come back from outside the process (Redis, snapshot files) and estimates entry sizes.
 */
import type { DetailedPairScore, ScorerPairResult, SignalProbabilities } from '../types.js';

export type CacheableResult = Exclude<ScorerPairResult, null>;

export interface CacheEntry {
  readonly result: CacheableResult;
  /** Date.now()-clock milliseconds at which the scorer produced the result. */
  readonly scoredAt: number;
}

/**
 * A frozen copy of `value` if it is a well-formed pair result (probabilities in [0, 1], finite raw
 * values, string tier), else undefined. The same rule applies to what a scorer returns and to what
 * comes back from Redis or a snapshot file: nothing the gate would refuse is ever stored. Copying drops fields outside the ScorerPairResult shape and makes the cached
 * object safe to hand to many callers: nobody can change another request's scores through it.
 */
export function toCacheableResult(value: unknown): CacheableResult | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const detailed = value as { probabilities?: unknown; raw?: unknown; tier?: unknown };
  if (detailed.probabilities !== undefined && typeof detailed.probabilities === 'object') {
    const probabilities = numberRecord(detailed.probabilities, true);
    if (probabilities === undefined) return undefined;
    let raw: Readonly<Record<string, number>> | undefined;
    if (detailed.raw !== undefined) {
      raw = numberRecord(detailed.raw, false);
      if (raw === undefined) return undefined;
    }
    if (detailed.tier !== undefined && typeof detailed.tier !== 'string') return undefined;
    const out: { probabilities: SignalProbabilities; raw?: Readonly<Record<string, number>>; tier?: string } = {
      probabilities,
    };
    if (raw !== undefined) out.raw = raw;
    if (detailed.tier !== undefined) out.tier = detailed.tier as string;
    return Object.freeze(out) as DetailedPairScore;
  }
  return numberRecord(value, true);
}

/** Whether `result` carries at least one of `signals` (an empty list accepts any result). */
export function hasAnySignal(result: CacheableResult, signals: readonly string[]): boolean {
  if (signals.length === 0) return true;
  const probabilities = (result as { probabilities?: unknown }).probabilities;
  const record = (typeof probabilities === 'object' && probabilities !== null ? probabilities : result) as Readonly<
    Record<string, number>
  >;
  for (const name of signals) if (Object.hasOwn(record, name)) return true;
  return false;
}

function numberRecord(value: unknown, probabilities: boolean): Readonly<Record<string, number>> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value))
    return undefined;
  const out: Record<string, number> = {};
  let count = 0;
  for (const name of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    if (probabilities && !(v >= 0 && v <= 1)) return undefined;
    out[name] = v;
    count++;
  }
  return count === 0 ? undefined : Object.freeze(out);
}

// Size model of one L1 entry on V8 (64-bit, no pointer compression, as Node 20 ships), checked
// against measured heap growth by `npx tsx bench/cache-memory.ts`. Constants are per object /
// per field; they deliberately round up.
const LRU_SLOT_BYTES = 96; // lru-cache: Map entry + key/value list slots + next/prev/size typed-array slots
const OBJECT_HEADER_BYTES = 32;
const FIELD_BYTES = 8;
const HEAP_NUMBER_BYTES = 16;
const STRING_HEADER_BYTES = 24;

// V8 stores a string with only Latin-1 characters one byte per character, any other two.
const WIDE_CHAR = /[\u0100-\uffff]/;

export function estimateStringBytes(s: string): number {
  return STRING_HEADER_BYTES + roundUp8(s.length * (WIDE_CHAR.test(s) ? 2 : 1));
}

function recordBytes(record: Readonly<Record<string, number>>): number {
  let bytes = OBJECT_HEADER_BYTES;
  // Property names are internalised and shared by every record with the same signals: not counted.
  for (const _name in record) bytes += FIELD_BYTES + HEAP_NUMBER_BYTES;
  return bytes;
}

/** Estimated heap bytes of one entry, key included. Always ≥ 1 (lru-cache requires it). */
export function estimateEntryBytes(key: string, entry: CacheEntry): number {
  let bytes = LRU_SLOT_BYTES + estimateStringBytes(key) + OBJECT_HEADER_BYTES + 2 * FIELD_BYTES + HEAP_NUMBER_BYTES;
  const result = entry.result as Partial<DetailedPairScore>;
  if (typeof result.probabilities === 'object' && result.probabilities !== null) {
    bytes += OBJECT_HEADER_BYTES + 3 * FIELD_BYTES + recordBytes(result.probabilities);
    if (result.raw !== undefined) bytes += recordBytes(result.raw);
    if (result.tier !== undefined) bytes += estimateStringBytes(result.tier);
  } else {
    bytes += recordBytes(entry.result as Readonly<Record<string, number>>);
  }
  return bytes;
}

function roundUp8(n: number): number {
  return (n + 7) & ~7;
}

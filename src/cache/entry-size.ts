/**
 * The size model of one L1 entry as the L1 keeps it (packed, packed-entry.ts): what `maxBytes`
 * bounds. 64-bit V8 without pointer compression, as Node ships: the key and the packed entry as
 * strings plus lru-cache's slot. Checked against measured heap growth by `npx tsx
 * bench/cache-memory.ts`; the constants deliberately round up.
 */
import type { CacheEntry } from './entry.js';
import { packEntry, type PackedEntry } from './packed-entry.js';

const LRU_SLOT_BYTES = 96; // lru-cache: Map entry + key/value list slots + next/prev/size typed-array slots
const STRING_HEADER_BYTES = 24;

// V8 stores a string with only Latin-1 characters one byte per character, any other two.
const WIDE_CHAR = /[\u0100-\uffff]/;

export function estimateStringBytes(s: string): number {
  return STRING_HEADER_BYTES + roundUp8(s.length * (WIDE_CHAR.test(s) ? 2 : 1));
}

/** Estimated heap bytes of one packed L1 entry, key included. Always ≥ 1 (lru-cache requires it). */
export function estimatePackedBytes(key: string, packed: PackedEntry): number {
  return LRU_SLOT_BYTES + estimateStringBytes(key) + estimateStringBytes(packed);
}

/** Estimated heap bytes of one entry as the L1 keeps it (packed), key included. */
export function estimateEntryBytes(key: string, entry: CacheEntry): number {
  return estimatePackedBytes(key, packEntry(entry));
}

function roundUp8(n: number): number {
  return (n + 7) & ~7;
}

/**
 * The size of one L1 entry as the L1 keeps it (packed, packed-entry.ts, in an off-heap shard,
 * l1-shard.ts): what `maxBytes` bounds. The key's and the packed entry's characters at one byte
 * each (two when a string holds a character past Latin-1) plus the shard's slot and index overhead.
 * `npx tsx bench/cache-memory.ts` compares it with the memory the process gains per entry.
 */
import type { CacheEntry } from './entry.js';
import { entryBytes } from './l1-shard.js';
import { packEntry, type PackedEntry } from './packed-entry.js';

/** Bytes one packed L1 entry counts against maxBytes, key included. */
export function estimatePackedBytes(key: string, packed: PackedEntry): number {
  return entryBytes(key, packed);
}

/** Bytes one entry counts against maxBytes as the L1 keeps it (packed), key included. */
export function estimateEntryBytes(key: string, entry: CacheEntry): number {
  return entryBytes(key, packEntry(entry));
}

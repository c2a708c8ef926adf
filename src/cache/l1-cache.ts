/**
 * The L1 as the cache uses it: the byte-bounded store (l1-store.ts) of entries, each kept packed
 * as one string (packed-entry.ts), which drops expired entries on sight and counts what it stores,
 * evicts and expires.
 */
import type { CacheEntry } from './entry.js';
import type { EntryPolicy } from './entry-policy.js';
import { readChars } from './l1-shard.js';
import { L1Store } from './l1-store.js';
import { isJsonPacked, packEntry, unpackEntry, unpackEntryBytes, type PackedEntry } from './packed-entry.js';
import type { CacheCounters } from './stats.js';

export class L1Cache {
  /** The store itself (packed entries), for bulk reads and loads (snapshots); reads through it neither expire nor count. */
  readonly store: L1Store;

  constructor(
    readonly maxBytes: number,
    private readonly policy: EntryPolicy,
    private readonly counters: CacheCounters,
  ) {
    this.store = new L1Store({
      maxBytes,
      onEvict: () => {
        counters.evictions++;
      },
    });
  }

  /** Bytes of the entries held (≤ maxBytes). */
  get bytes(): number {
    return this.store.bytes;
  }

  get entries(): number {
    return this.store.size;
  }

  /** The unexpired entry of `key` (refreshing its recency); an expired one is dropped and counted. */
  get(key: string, now: number): CacheEntry | undefined {
    const entry = this.store.read(key, true, unpackStored);
    if (entry === undefined) return undefined;
    if (this.policy.isExpired(entry, now)) {
      this.store.delete(key);
      this.counters.expired++;
      return undefined;
    }
    return entry;
  }

  /** The entry of `key` without refreshing its recency, expiring or counting (snapshots). */
  peek(key: string): CacheEntry | undefined {
    return this.store.read(key, false, unpackStored);
  }

  /** Every entry with its key, least to most recently used (l1-store.ts), without expiring, counting or touching. */
  entriesOldestFirst(): Generator<[string, CacheEntry]> {
    return this.store.entriesOldestFirst(unpackStored);
  }

  set(key: string, entry: CacheEntry): void {
    this.setPacked(key, packEntry(entry));
  }

  /** Stores an entry already packed (a warm start sizes it packed, then stores that same string). */
  setPacked(key: string, packed: PackedEntry): void {
    this.store.set(key, packed);
    this.counters.stores++;
  }

  clear(): void {
    this.store.clear();
  }
}

/** The entry a shard holds packed, read where it lies (the JSON form through its string). */
function unpackStored(arena: Uint8Array, offset: number, length: number, wide: boolean): CacheEntry {
  if (wide || isJsonPacked(arena[offset])) return unpackEntry(readChars(arena, offset, length, wide));
  return unpackEntryBytes(arena, offset, length);
}

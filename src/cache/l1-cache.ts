/**
 * The L1 as the cache uses it: the byte-bounded store (l1-store.ts) of entries, which drops
 * expired entries on sight and counts what it stores, evicts and expires.
 */
import { estimateEntryBytes, type CacheEntry } from './entry.js';
import type { EntryPolicy } from './entry-policy.js';
import { L1Store } from './l1-store.js';
import type { CacheCounters } from './stats.js';

export class L1Cache {
  /** The store itself, for bulk reads and loads (snapshots); reads through it neither expire nor count. */
  readonly store: L1Store<CacheEntry>;

  constructor(
    readonly maxBytes: number,
    private readonly policy: EntryPolicy,
    private readonly counters: CacheCounters,
  ) {
    this.store = new L1Store<CacheEntry>({
      maxBytes,
      sizeOf: (entry, key) => estimateEntryBytes(key, entry),
      onEvict: () => {
        counters.evictions++;
      },
    });
  }

  /** Current estimated bytes (≤ maxBytes). */
  get bytes(): number {
    return this.store.calculatedSize;
  }

  get entries(): number {
    return this.store.size;
  }

  /** The unexpired entry of `key` (refreshing its recency); an expired one is dropped and counted. */
  get(key: string, now: number): CacheEntry | undefined {
    const entry = this.store.get(key);
    if (entry === undefined) return undefined;
    if (this.policy.isExpired(entry, now)) {
      this.store.delete(key);
      this.counters.expired++;
      return undefined;
    }
    return entry;
  }

  set(key: string, entry: CacheEntry): void {
    this.store.set(key, entry);
    this.counters.stores++;
  }

  clear(): void {
    this.store.clear();
  }
}

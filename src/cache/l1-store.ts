/**
 * The L1's storage: a byte-bounded LRU of strings, kept off the V8 heap (l1-shard.ts), split into
 * shards by the key's content hash.
 *
 * Why shards: a table rehashes or copies all of its entries, synchronously, when it grows; a
 * single table for a 256 MB L1 (1.5 million entries) would do that inside whichever request stored
 * the entry that crossed the size. With shards of about SHARD_TARGET_BYTES each, every table stays
 * near ten thousand entries and growing one costs well under 1 ms. `npx tsx bench/cache.ts
 * --scenario growth` measures the longest single store.
 *
 * Eviction is least-recently-used within a shard; the content hash spreads keys uniformly, so
 * this approximates one global LRU, and a cache small enough for one shard behaves exactly as one.
 */
import { L1Shard, type ValueReader } from './l1-shard.js';

/** Bytes per shard the shard count aims for (≈ 14k packed entries of a single-signal score). */
export const SHARD_TARGET_BYTES = 2 * 1024 * 1024;
/** Shards at most (a power of two; the shard index reads 10 bits of the key's content hash). */
export const MAX_SHARDS = 1024;

// Key layout (keys.ts): 32 hex scope + 16 hex content hash + id. The shard index reads the last
// three hex digits of the content hash: uniform, and independent of the scope, so one popular
// query's pairs still spread over every shard.
const HASH_END = 48;

export interface L1StoreOptions {
  /** Bound on the entries' bytes (l1-shard.ts entryBytes, summed). */
  readonly maxBytes: number;
  /** Called once per entry evicted to make room (not for deletes, replacements or clear()). */
  readonly onEvict: () => void;
}

/** Power-of-two shard count for a byte bound: 1 for small caches (exact LRU), ≤ MAX_SHARDS. */
export function shardCountFor(maxBytes: number): number {
  let shards = 1;
  while (shards < MAX_SHARDS && maxBytes / shards > SHARD_TARGET_BYTES) shards *= 2;
  return shards;
}

export class L1Store {
  private readonly shards: L1Shard[];
  private readonly mask: number;

  constructor(options: L1StoreOptions) {
    const count = shardCountFor(options.maxBytes);
    // The bound is split evenly, so the shards' sum never exceeds maxBytes.
    const shardBytes = Math.floor(options.maxBytes / count);
    this.mask = count - 1;
    this.shards = Array.from({ length: count }, () => new L1Shard(shardBytes, options.onEvict));
  }

  get shardCount(): number {
    return this.shards.length;
  }

  /** Entries of the fullest shard (what bounds a single Map rehash). */
  get largestShardSize(): number {
    let max = 0;
    for (const shard of this.shards) max = Math.max(max, shard.size);
    return max;
  }

  get size(): number {
    let n = 0;
    for (const shard of this.shards) n += shard.size;
    return n;
  }

  /** Bytes of the entries held (≤ maxBytes). */
  get bytes(): number {
    let n = 0;
    for (const shard of this.shards) n += shard.bytes;
    return n;
  }

  /** What `reader` makes of the value of `key` where it lies (l1-shard.ts read()). */
  read<T>(key: string, touch: boolean, reader: ValueReader<T>): T | undefined {
    return this.shardOf(key).read(key, touch, reader);
  }

  set(key: string, value: string): void {
    this.shardOf(key).set(key, value);
  }

  delete(key: string): void {
    this.shardOf(key).delete(key);
  }

  clear(): void {
    for (const shard of this.shards) shard.clear();
  }

  /**
   * Each key with what `reader` makes of its value, least to most recently used: exact within a
   * shard, the shards interleaved, so the tail holds every shard's most recent entries (what a
   * warm start loads first). Recency is unchanged.
   */
  entriesOldestFirst<T>(reader: ValueReader<T>): Generator<[string, T]> {
    return interleave(this.shards.map((shard) => shard.entriesOldestFirst(reader)));
  }

  /** Free bytes of each shard, by shard index (what a bulk load may still add without evicting). */
  freeBytesPerShard(): number[] {
    return this.shards.map((shard) => shard.maxBytes - shard.bytes);
  }

  shardIndexOf(key: string): number {
    if (this.mask === 0) return 0;
    let index: number;
    if (key.length >= HASH_END) {
      index = (hexValue(key, HASH_END - 3) << 8) | (hexValue(key, HASH_END - 2) << 4) | hexValue(key, HASH_END - 1);
    } else {
      // Not a pairKey (never built by the cache itself): any stable spread will do.
      index = 0;
      for (let i = 0; i < key.length; i++) index = (Math.imul(index, 31) + key.charCodeAt(i)) | 0;
    }
    return index & this.mask;
  }

  private shardOf(key: string): L1Shard {
    return this.shards[this.shardIndexOf(key)];
  }
}

/** Value of the hex digit at `at` ('0'–'9', 'a'–'f'); anything else still maps into 0–15. */
function hexValue(s: string, at: number): number {
  const c = s.charCodeAt(at);
  return (c <= 57 ? c - 48 : (c | 32) - 87) & 15;
}

/** One item of each generator in turn until all are done. */
function* interleave<T>(iterators: Generator<T>[]): Generator<T> {
  let live = iterators.length;
  const done = new Array<boolean>(iterators.length).fill(false);
  while (live > 0) {
    for (let i = 0; i < iterators.length; i++) {
      if (done[i]) continue;
      const next = iterators[i].next();
      if (next.done === true) {
        done[i] = true;
        live--;
      } else yield next.value;
    }
  }
}

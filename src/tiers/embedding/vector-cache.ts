/**
 * The embedding tier's L1: an LRU of unit vectors keyed by SHA-256(model id, text), bounded in
 * bytes. A passage (or query) whose text was embedded before by the same model is not embedded
 * again. Keys are hashes, so the cache holds no text. In process only: the score cache's Redis L2
 * stores pair scores, not vectors (and sits in a layer above the tiers); scores of this tier go
 * through it like any scorer's when the router or the gate is given a score cache.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** Heap bytes of one entry beyond its vector: key string, Map and list slots, the typed-array object. */
const ENTRY_OVERHEAD_BYTES = 96 + 64 + 2 * 43;

export interface VectorCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
  /** Estimated heap bytes held. */
  readonly bytes: number;
  readonly maxBytes: number;
}

export class VectorCache {
  private readonly lru: LRUCache<string, Float32Array> | null;
  private hits = 0;
  private misses = 0;

  /** `maxBytes` 0 turns the cache off (every lookup misses, nothing is stored). */
  constructor(
    private readonly modelId: string,
    readonly maxBytes: number,
  ) {
    const bytes = Math.floor(maxBytes);
    this.lru =
      bytes > 0
        ? new LRUCache<string, Float32Array>({
            maxSize: bytes,
            sizeCalculation: (vector) => vector.byteLength + ENTRY_OVERHEAD_BYTES,
          })
        : null;
  }

  /** The key of a text: SHA-256 over the model id and the text (base64url). */
  key(text: string): string {
    return createHash('sha256').update(this.modelId).update('\u0000').update(text).digest('base64url');
  }

  get(key: string): Float32Array | undefined {
    const hit = this.lru?.get(key);
    if (hit === undefined) this.misses++;
    else this.hits++;
    return hit;
  }

  set(key: string, vector: Float32Array): void {
    this.lru?.set(key, vector);
  }

  clear(): void {
    this.lru?.clear();
  }

  stats(): VectorCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      entries: this.lru?.size ?? 0,
      bytes: this.lru?.calculatedSize ?? 0,
      maxBytes: this.maxBytes,
    };
  }
}

/**
 * The approximate query index: per partition (scorer, metadata keys, the caller's approximate
 * scope, embedding model and dimension), recent queries' unit embeddings and the passages whose
 * scores the exact cache holds under each of them. `find` returns the remembered queries whose
 * cosine with a new query's embedding reaches a threshold, most similar first.
 *
 * Candidates come from random-hyperplane LSH (SimHash): `bands` groups of `bitsPerBand` sign bits
 * of the embedding's projections on seeded Gaussian hyperplanes; two queries are candidates when
 * any band agrees in every bit. A bit agrees with probability 1 − θ/π for the angle θ between the
 * two vectors, so at cosine 0.9 (θ ≈ 26°) a band of 8 bits agrees with probability 0.29 and one of
 * 16 bands with probability 0.996; the exact cosine of each candidate then decides, so the bands
 * only cost recall (a near query missed), never a wrong match. The hyperplanes depend only on the
 * seed and the dimension: two processes with the same seed hash alike.
 *
 * Bounded by remembered queries and estimated bytes (least recently used first out); each
 * query keeps at most `maxPassagesPerQuery` passage keys.
 */
import { InvalidArgumentError } from '../../errors.js';
import { mulberry32 } from '../../util/seeded-random.js';
import { integerInRange, positiveInteger } from '../../util/validate-options.js';

export interface QueryIndexOptions {
  /** Remembered queries at most (all partitions together). Default 10,000. */
  readonly maxQueries?: number;
  /** Estimated bytes at most (vectors, passage keys, buckets). Default 32 MiB. */
  readonly maxBytes?: number;
  /** Passage keys kept per remembered query (later ones are not added). Default 1,000. */
  readonly maxPassagesPerQuery?: number;
  /** LSH bands (a candidate shares all bits of one band). Default 16. */
  readonly bands?: number;
  /** Sign bits per band, 1–24. Default 8. */
  readonly bitsPerBand?: number;
  /** Seed of the hyperplanes. Default 0x5eed. */
  readonly seed?: number;
  /** Candidates returned at most by one find() (the most similar). Default 8. */
  readonly maxMatches?: number;
}

export const DEFAULT_INDEX_MAX_QUERIES = 10_000;
export const DEFAULT_INDEX_MAX_BYTES = 32 * 1024 * 1024;
export const DEFAULT_INDEX_MAX_PASSAGES = 1000;
export const DEFAULT_INDEX_BANDS = 16;
export const DEFAULT_INDEX_BITS_PER_BAND = 8;
export const DEFAULT_INDEX_SEED = 0x5eed;

/** A remembered query: the exact cache's key scope of its query, and the passage keys (content hash + id) it holds. */
export interface RememberedQuery {
  readonly scope: string;
  readonly passages: ReadonlySet<string>;
  /** The query's content terms (stemmed, stop words out), when the cache compares them. */
  readonly terms: ReadonlySet<string> | undefined;
}

export interface QueryMatch {
  readonly query: RememberedQuery;
  readonly cosine: number;
}

export interface QueryIndexStats {
  readonly queries: number;
  readonly bytes: number;
  readonly evictions: number;
}

/** Longest embedding accepted (the embedding tier's limit). */
export const MAX_DIMENSION = 16_384;
/** Hyperplane sets (one per dimension) kept at once. */
const MAX_PLANE_SETS = 4;
/** Fixed cost of one remembered query besides its vector and keys (objects, maps, LRU slot). */
const ENTRY_OVERHEAD_BYTES = 320;
/** One passage key in a Set: the string (2 bytes a character, header) and the set's slot. */
const PASSAGE_OVERHEAD_BYTES = 72;
/** One bucket membership (a Set slot in a bucket, the bucket's share of a Map slot). */
const BUCKET_SLOT_BYTES = 40;

/** Estimated bytes of a remembered query's term set. */
function termBytes(terms: ReadonlySet<string> | undefined): number {
  if (terms === undefined) return 0;
  let bytes = 0;
  for (const t of terms) bytes += PASSAGE_OVERHEAD_BYTES + 2 * t.length;
  return bytes;
}

interface Entry {
  readonly id: string;
  readonly partition: Partition;
  readonly scope: string;
  readonly vector: Float32Array;
  readonly buckets: readonly number[];
  readonly passages: Set<string>;
  readonly terms: ReadonlySet<string> | undefined;
  bytes: number;
}

interface Partition {
  readonly key: string;
  readonly buckets: Map<number, Set<Entry>>;
  size: number;
}

/**
 * A copy of `values` scaled to unit length, or undefined when it is not a usable direction (empty,
 * a value that is not a finite number, the zero vector).
 */
export function unitVector(values: unknown): Float32Array | undefined {
  if (!(values instanceof Float32Array || values instanceof Float64Array || Array.isArray(values))) return undefined;
  const n = values.length;
  if (n === 0 || n > MAX_DIMENSION) return undefined;
  const out = new Float32Array(n);
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const v: unknown = values[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    out[i] = v;
    norm += v * v;
  }
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < n; i++) out[i] *= scale;
  return out;
}

export class QueryIndex {
  private readonly maxQueries: number;
  private readonly maxBytes: number;
  private readonly maxPassages: number;
  private readonly bands: number;
  private readonly bitsPerBand: number;
  private readonly seed: number;
  private readonly maxMatches: number;
  /** Insertion order is recency order: a used entry is deleted and set again. */
  private readonly entries = new Map<string, Entry>();
  private readonly partitions = new Map<string, Partition>();
  /** Hyperplanes per dimension (bands × bitsPerBand rows of `dimension` Gaussians). */
  private readonly planes = new Map<number, Float32Array>();
  private bytesUsed = 0;
  private evicted = 0;

  constructor(options: QueryIndexOptions = {}) {
    this.maxQueries = positiveInteger('approximate.maxQueries', options.maxQueries ?? DEFAULT_INDEX_MAX_QUERIES);
    this.maxBytes = positiveInteger('approximate.maxBytes', options.maxBytes ?? DEFAULT_INDEX_MAX_BYTES);
    this.maxPassages = positiveInteger(
      'approximate.maxPassagesPerQuery',
      options.maxPassagesPerQuery ?? DEFAULT_INDEX_MAX_PASSAGES,
    );
    this.bands = integerInRange('approximate.bands', options.bands ?? DEFAULT_INDEX_BANDS, 1, 64);
    this.bitsPerBand = integerInRange(
      'approximate.bitsPerBand',
      options.bitsPerBand ?? DEFAULT_INDEX_BITS_PER_BAND,
      1,
      24,
    );
    this.seed = integerInRange('approximate.seed', options.seed ?? DEFAULT_INDEX_SEED, 0, 0xffffffff);
    this.maxMatches = positiveInteger('approximate.maxMatches', options.maxMatches ?? 8);
  }

  stats(): QueryIndexStats {
    return { queries: this.entries.size, bytes: this.bytesUsed, evictions: this.evicted };
  }

  /**
   * Remembers (or refreshes) the query of `scope` in `partition` with its unit `vector` and adds
   * `passages` (keys without the scope) to what it holds. The vector must be unit length (unitVector).
   */
  remember(
    partition: string,
    scope: string,
    vector: Float32Array,
    passages: Iterable<string>,
    terms?: ReadonlySet<string>,
  ): void {
    const id = `${partition}\u0000${scope}`;
    let entry = this.entries.get(id);
    if (entry !== undefined) {
      this.entries.delete(id);
      this.entries.set(id, entry);
    } else {
      let part = this.partitions.get(partition);
      if (part === undefined) {
        part = { key: partition, buckets: new Map(), size: 0 };
        this.partitions.set(partition, part);
      }
      const buckets = this.bucketsOf(vector);
      entry = {
        id,
        partition: part,
        scope,
        vector,
        buckets,
        passages: new Set(),
        terms,
        bytes:
          ENTRY_OVERHEAD_BYTES +
          2 * id.length +
          4 * vector.length +
          buckets.length * BUCKET_SLOT_BYTES +
          termBytes(terms),
      };
      for (const b of buckets) {
        let members = part.buckets.get(b);
        if (members === undefined) {
          members = new Set();
          part.buckets.set(b, members);
        }
        members.add(entry);
      }
      part.size++;
      this.entries.set(id, entry);
      this.bytesUsed += entry.bytes;
    }
    for (const key of passages) {
      if (entry.passages.size >= this.maxPassages) break;
      if (entry.passages.has(key)) continue;
      entry.passages.add(key);
      const bytes = PASSAGE_OVERHEAD_BYTES + 2 * key.length;
      entry.bytes += bytes;
      this.bytesUsed += bytes;
    }
    this.evictOver();
  }

  /**
   * Remembered queries of `partition` whose cosine with the unit `vector` is ≥ `threshold`, other
   * than `excludeScope` (the query itself), most similar first, at most maxMatches.
   */
  find(partition: string, vector: Float32Array, threshold: number, excludeScope?: string): QueryMatch[] {
    const part = this.partitions.get(partition);
    if (part === undefined) return [];
    const seen = new Set<Entry>();
    const matches: { entry: Entry; cosine: number }[] = [];
    for (const b of this.bucketsOf(vector)) {
      const members = part.buckets.get(b);
      if (members === undefined) continue;
      for (const entry of members) {
        if (seen.has(entry)) continue;
        seen.add(entry);
        if (entry.scope === excludeScope || entry.vector.length !== vector.length) continue;
        const cosine = dot(entry.vector, vector);
        if (cosine >= threshold) matches.push({ entry, cosine });
      }
    }
    matches.sort((a, b) => b.cosine - a.cosine);
    if (matches.length > this.maxMatches) matches.length = this.maxMatches;
    return matches.map((m) => ({ query: m.entry, cosine: m.cosine }));
  }

  /** Marks a remembered query as just used (LRU). */
  touch(partition: string, query: RememberedQuery): void {
    const id = `${partition}\u0000${query.scope}`;
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.entries.set(id, entry);
  }

  /** Drops one passage key of a remembered query (its score has left the exact cache). */
  forgetPassage(partition: string, query: RememberedQuery, key: string): void {
    const entry = this.entries.get(`${partition}\u0000${query.scope}`);
    if (entry === undefined || !entry.passages.delete(key)) return;
    const bytes = PASSAGE_OVERHEAD_BYTES + 2 * key.length;
    entry.bytes -= bytes;
    this.bytesUsed -= bytes;
  }

  clear(): void {
    this.entries.clear();
    this.partitions.clear();
    this.bytesUsed = 0;
  }

  private evictOver(): void {
    while (this.entries.size > this.maxQueries || (this.bytesUsed > this.maxBytes && this.entries.size > 0)) {
      const oldest = this.entries.values().next().value as Entry;
      this.remove(oldest);
      this.evicted++;
    }
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry.id);
    this.bytesUsed -= entry.bytes;
    const part = entry.partition;
    for (const b of entry.buckets) {
      const members = part.buckets.get(b);
      if (members === undefined) continue;
      members.delete(entry);
      if (members.size === 0) part.buckets.delete(b);
    }
    if (--part.size === 0) this.partitions.delete(part.key);
  }

  /** The band keys of a vector: band × 2^bitsPerBand + that band's sign bits. */
  private bucketsOf(vector: Float32Array): number[] {
    const dim = vector.length;
    const planes = this.planesFor(dim);
    const out = new Array<number>(this.bands);
    const span = 2 ** this.bitsPerBand;
    let row = 0;
    for (let band = 0; band < this.bands; band++) {
      let code = 0;
      for (let bit = 0; bit < this.bitsPerBand; bit++, row++) {
        let s = 0;
        const base = row * dim;
        for (let i = 0; i < dim; i++) s += planes[base + i] * vector[i];
        code = code * 2 + (s >= 0 ? 1 : 0);
      }
      out[band] = band * span + code;
    }
    return out;
  }

  private planesFor(dim: number): Float32Array {
    let planes = this.planes.get(dim);
    if (planes === undefined) {
      if (!Number.isInteger(dim) || dim < 1 || dim > MAX_DIMENSION)
        throw new InvalidArgumentError(`embedding dimension must be 1..${MAX_DIMENSION}, got ${dim}`);
      // A few models at most share one cache: keep the planes of the last ones used.
      if (this.planes.size >= MAX_PLANE_SETS) this.planes.delete(this.planes.keys().next().value as number);
      const random = mulberry32((this.seed ^ Math.imul(dim, 0x9e3779b1)) >>> 0);
      planes = new Float32Array(this.bands * this.bitsPerBand * dim);
      // Box–Muller: Gaussian rows make the hyperplanes' normals uniform on the sphere.
      for (let i = 0; i < planes.length; i += 2) {
        const u = 1 - random();
        const v = random();
        const r = Math.sqrt(-2 * Math.log(u));
        planes[i] = r * Math.cos(2 * Math.PI * v);
        if (i + 1 < planes.length) planes[i + 1] = r * Math.sin(2 * Math.PI * v);
      }
      this.planes.set(dim, planes);
    }
    return planes;
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * The bench workload: queries of a real collection with their BM25 top-k passages (the eval
 * module's first stage), drawn uniformly or by a Zipf law over `distinct` queries.
 *
 * More distinct queries than the collection has: variants are synthesised deterministically as
 * COMBINATIONS of two real queries ("<query a> <query b>", a ≠ b, pairs drawn from a seeded PRNG,
 * duplicates skipped), each with its OWN BM25 top-k retrieved for the combined text. So a variant
 * is a new query string with a genuinely different candidate list: every (variant, passage) pair
 * is a distinct cache key and nothing is served from another query's scores. The collection's own
 * queries come first (ids 0..Q−1), variants after; which query gets which Zipf rank is a seeded
 * permutation, so popular queries are a mix of both.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { toPassage } from '../eval/candidates.js';
import type { Collection } from '../eval/collection.js';
import { createBm25FirstStage } from '../eval/first-stage.js';
import type { Passage } from '../../types.js';
import { createRng, permutation, ZipfSampler } from './random.js';

export interface WorkloadQuery {
  readonly text: string;
  /** BM25 top-k of the query text (fewer when fewer documents match). */
  readonly passages: readonly Passage[];
  /** True for a synthesised combination of two collection queries. */
  readonly synthetic: boolean;
}

export interface WorkloadOptions {
  readonly k: number;
  /** Distinct queries to draw from; default: the collection's queries. */
  readonly distinct?: number;
  /** Zipf exponent over the distinct queries; undefined = uniform. */
  readonly zipf?: number;
  readonly seed?: number;
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Folder for retrieved candidate lists, keyed by collection fingerprint, k and the query texts,
   * so repeated runs skip the BM25 pass (thousands of long synthesised queries take a minute).
   */
  readonly cacheDir?: string;
}

/** What a bench run says about its workload (in-process and over HTTP alike). */
export interface BenchWorkloadOptions {
  readonly k: number;
  readonly distinct?: number;
  readonly zipf?: number;
  readonly seed?: number;
  readonly onWorkloadProgress?: (done: number, total: number) => void;
}

/** The workload of a bench run, its candidate lists cached under the system temp folder. */
export function buildBenchWorkload(collection: Collection, options: BenchWorkloadOptions): Workload {
  return buildWorkload(collection, {
    k: options.k,
    distinct: options.distinct,
    zipf: options.zipf,
    seed: options.seed,
    cacheDir: join(tmpdir(), 'relevance-gate-bench'),
    onProgress: options.onWorkloadProgress,
  });
}

/** BM25 top-k doc ids per text, from the on-disk cache when it has exactly these inputs. */
function retrieve(collection: Collection, texts: readonly string[], k: number, options: WorkloadOptions): string[][] {
  const key = createHash('sha256')
    .update(`workload-v1\0${collection.fingerprint}\0${k}\0`)
    .update(texts.join('\0'))
    .digest('hex')
    .slice(0, 32);
  const file =
    options.cacheDir === undefined ? undefined : join(options.cacheDir, `candidates-${collection.name}-${key}.json`);
  if (file !== undefined && existsSync(file)) {
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (
        Array.isArray(parsed) &&
        parsed.length === texts.length &&
        parsed.every(
          (ids) => Array.isArray(ids) && ids.every((id) => typeof id === 'string' && collection.docById.has(id)),
        )
      ) {
        return parsed as string[][];
      }
    } catch {
      // unreadable cache: rebuild below
    }
  }
  const firstStage = createBm25FirstStage(collection);
  const out: string[][] = [];
  for (let i = 0; i < texts.length; i++) {
    out.push(firstStage.search(texts[i], k).map((c) => c.docId));
    if (options.onProgress !== undefined && (i % 250 === 0 || i === texts.length - 1))
      options.onProgress(i + 1, texts.length);
  }
  if (file !== undefined) {
    try {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(out));
      renameSync(`${file}.tmp`, file);
    } catch {
      // best effort
    }
  }
  return out;
}

export interface Workload {
  readonly queries: readonly WorkloadQuery[];
  readonly collectionQueries: number;
  readonly syntheticQueries: number;
  readonly k: number;
  readonly zipf: number | undefined;
  /** Mean passages per query (≤ k). */
  readonly meanPassages: number;
  /** A query drawn by the workload's distribution (its own seeded stream). */
  next(): WorkloadQuery;
  /** A fresh, identically seeded draw stream (so every phase sees the same sequence). */
  restart(seed?: number): void;
}

export function buildWorkload(collection: Collection, options: WorkloadOptions): Workload {
  const { k } = options;
  if (!Number.isInteger(k) || k < 1) throw new InvalidArgumentError(`k must be a positive integer, got ${k}`);
  const base = collection.queries.filter((q) => q.text.trim().length > 0);
  if (base.length === 0) throw new InvalidArgumentError(`collection ${collection.name} has no non-empty queries`);
  const distinct = options.distinct ?? base.length;
  if (!Number.isInteger(distinct) || distinct < 1)
    throw new InvalidArgumentError(`distinct must be a positive integer, got ${distinct}`);
  const seed = options.seed ?? 1;
  const texts: string[] = base.slice(0, distinct).map((q) => q.text);
  const seen = new Set(texts);
  if (distinct > base.length && base.length < 2)
    throw new InvalidArgumentError('synthesising variants needs at least two collection queries');
  const rng = createRng(seed ^ 0x5eed);
  let guard = 0;
  while (texts.length < distinct) {
    const a = Math.floor(rng() * base.length);
    let b = Math.floor(rng() * (base.length - 1));
    if (b >= a) b++;
    const text = `${base[a].text} ${base[b].text}`;
    if (!seen.has(text)) {
      seen.add(text);
      texts.push(text);
    } else if (++guard > distinct * 20)
      throw new InvalidArgumentError(`cannot synthesise ${distinct} distinct queries from ${base.length}`);
  }
  const docIds = retrieve(collection, texts, k, options);
  const queries: WorkloadQuery[] = [];
  let passagesTotal = 0;
  for (let i = 0; i < texts.length; i++) {
    const passages = docIds[i].map((id) => toPassage(collection.docById.get(id) as (typeof collection.docs)[number]));
    passagesTotal += passages.length;
    queries.push({ text: texts[i], passages, synthetic: i >= base.length });
  }
  // Queries with no BM25 match would be empty requests: keep them out of the draw.
  const usable = queries.filter((q) => q.passages.length > 0);
  if (usable.length === 0) throw new InvalidArgumentError('no query retrieved any passage');
  const rankToQuery = permutation(usable.length, createRng(seed ^ 0xa11ce));
  let draw: () => number;
  const restart = (s = seed): void => {
    const r = createRng(s);
    if (options.zipf === undefined) draw = () => Math.floor(r() * usable.length);
    else {
      const zipf = new ZipfSampler(usable.length, options.zipf, r);
      draw = () => zipf.next();
    }
  };
  restart();
  return {
    queries: usable,
    collectionQueries: Math.min(base.length, distinct),
    syntheticQueries: Math.max(0, distinct - base.length),
    k,
    zipf: options.zipf,
    meanPassages: passagesTotal / queries.length,
    next: () => usable[rankToQuery[draw()]],
    restart,
  };
}

/**
 * Learning-to-rank datasets: BM25 candidate lists of the chosen queries of each collection, one row
 * of lexical features per (query, candidate) pair, the qrels grade as the label, and query groups.
 * Row order is deterministic: collections in the order given, queries in split order (sorted ids),
 * candidates in first-stage rank order.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { Passage } from '../../types.js';
import { type CandidateList, buildCandidateLists, toPassage } from '../eval/candidates.js';
import type { Collection } from '../eval/collection.js';
import type { FirstStage } from '../eval/first-stage.js';

/** Lexical features for a batch of pairs sharing one query: row-major rows × featureNames.length, NaN = missing. */
export interface PairFeaturizer {
  readonly featureNames: readonly string[];
  featurize(query: string, passages: readonly Passage[]): Float32Array | Promise<Float32Array>;
}

export interface DatasetSource {
  readonly collection: Collection;
  readonly firstStage: FirstStage;
  /** Built with this collection's corpus statistics. */
  readonly featurizer: PairFeaturizer;
  readonly queryIds: readonly string[];
  /**
   * Caller-supplied (passthrough) features per candidate, e.g. `{ retrieval_rank }`; undefined = none.
   * Called once per candidate in row order.
   */
  readonly passthrough?: (list: CandidateList, index: number) => Readonly<Record<string, number>> | undefined;
}

export interface QueryGroup {
  readonly collection: string;
  readonly list: CandidateList;
  /** First row of this query in the dataset. */
  readonly offset: number;
}

export interface RankingDataset {
  readonly featureNames: readonly string[];
  readonly numRows: number;
  /** numRows × featureNames.length, row-major, NaN = missing. */
  readonly features: Float32Array;
  /** qrels grade per row (0 = not relevant or unjudged). */
  readonly grades: Int32Array;
  readonly groups: readonly QueryGroup[];
}

export async function buildRankingDataset(
  sources: readonly DatasetSource[],
  k: number,
  onQuery?: (done: number, total: number) => void,
): Promise<RankingDataset> {
  if (sources.length === 0) throw new InvalidArgumentError('no dataset sources');
  const featureNames = sources[0]!.featurizer.featureNames;
  for (const s of sources) {
    if (s.featurizer.featureNames.join('\u0000') !== featureNames.join('\u0000')) {
      throw new InvalidArgumentError(`featurizer of ${s.collection.name} has a different feature schema`);
    }
  }
  const nf = featureNames.length;
  const total = sources.reduce((n, s) => n + s.queryIds.length, 0);
  const chunks: Float32Array[] = [];
  const grades: number[] = [];
  const groups: QueryGroup[] = [];
  let rows = 0;
  let done = 0;
  for (const source of sources) {
    const lists = buildCandidateLists(source.collection, source.firstStage, source.queryIds, k);
    for (const list of lists) {
      const passages = list.candidates.map((c, i) => {
        const p = toPassage(source.collection.docById.get(c.docId)!);
        const extra = source.passthrough?.(list, i);
        return extra ? { ...p, features: extra } : p;
      });
      const feats =
        passages.length === 0 ? new Float32Array(0) : await source.featurizer.featurize(list.queryText, passages);
      if (feats.length !== passages.length * nf) {
        throw new InvalidArgumentError(
          `featurizer returned ${feats.length} values for ${passages.length} pairs × ${nf} features`,
        );
      }
      groups.push({ collection: source.collection.name, list, offset: rows });
      chunks.push(feats);
      for (const c of list.candidates) grades.push(c.grade);
      rows += passages.length;
      onQuery?.(++done, total);
    }
  }
  const features = new Float32Array(rows * nf);
  let at = 0;
  for (const c of chunks) {
    features.set(c, at);
    at += c.length;
  }
  return { featureNames, numRows: rows, features, grades: Int32Array.from(grades), groups };
}

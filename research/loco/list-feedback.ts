/**
 * Measurement, not a shipped path: the feedback centroid cosine of docs/eval.md ("Pseudo-relevance
 * feedback over the candidate list"), shared by scripts/loco-base.ts (`--extra prf`, `prf-centroid`),
 * which trains on it, and scripts/feedback-cost.ts, which times it. Terms are interned to integer ids
 * once per passage (as a native extractor holds term hashes), so one list costs its passages' terms.
 */
import { tokenize } from '../../src/features/tokenize.js';

/**
 * The terms a document or passage enters the JS-side measurement features with (feedback, latent
 * cosine): title and body as one field, the extractor's tokenizer.
 */
export function passageTokens(d: { readonly title?: string; readonly text: string }): string[] {
  return tokenize(`${d.title ?? ''} ${d.text}`);
}

/** BM25 IDF of a term from corpus statistics (either-field document frequency), as the extractor's Idf(). */
export function corpusIdf(stats: {
  readonly docCount: number;
  documentFrequency(term: string): { readonly any: number };
}): (term: string) => number {
  const n = stats.docCount;
  return (term) => {
    const df = stats.documentFrequency(term).any;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };
}

/** The feedback set of a list: the indices of its `size` highest BM25 scores (ties: the earlier index). */
export function feedbackSet(bm25: ArrayLike<number>, size: number): number[] {
  const order = Array.from({ length: bm25.length }, (_, i) => i).sort((a, b) => bm25[b]! - bm25[a]! || a - b);
  return order.slice(0, Math.min(size, order.length));
}

export class FeedbackCentroid {
  readonly #ids = new Map<string, number>();
  readonly #idfOf: (term: string) => number;
  #idf = new Float64Array(1024);
  // Scratch indexed by term id, zero between calls.
  #count = new Float64Array(1024);
  #sum = new Float64Array(1024);
  #seen = new Uint8Array(1024);

  constructor(idfOf: (term: string) => number) {
    this.#idfOf = idfOf;
  }

  /** A passage's tokens as term ids (new terms get the next id and their IDF). */
  intern(tokens: readonly string[]): Int32Array {
    const out = new Int32Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) {
      const term = tokens[i]!;
      let id = this.#ids.get(term);
      if (id === undefined) {
        id = this.#ids.size;
        this.#ids.set(term, id);
        if (id >= this.#idf.length) this.#grow(2 * this.#idf.length);
        this.#idf[id] = this.#idfOf(term);
      }
      out[i] = id;
    }
    return out;
  }

  /**
   * Per passage of a list: the cosine of its unit tf-idf vector ((1 + ln tf) × idf) to the mean of the
   * feedback set's unit vectors, the passage itself left out of that mean; 0 when the mean is empty.
   */
  cosines(terms: readonly Int32Array[], feedback: readonly number[]): Float64Array {
    const n = terms.length;
    const count = this.#count;
    const sum = this.#sum;
    const seen = this.#seen;
    const member = new Uint8Array(n);
    for (const i of feedback) member[i] = 1;
    const vecIds: Int32Array[] = [];
    const vecVals: Float64Array[] = [];
    for (let i = 0; i < n; i++) {
      const t = terms[i]!;
      const distinct: number[] = [];
      for (let j = 0; j < t.length; j++) {
        const id = t[j]!;
        if (count[id] === 0) distinct.push(id);
        count[id]! += 1;
      }
      const vals = new Float64Array(distinct.length);
      let norm = 0;
      for (let j = 0; j < distinct.length; j++) {
        const id = distinct[j]!;
        const x = (1 + Math.log(count[id]!)) * this.#idf[id]!;
        vals[j] = x;
        norm += x * x;
        count[id] = 0;
      }
      norm = Math.sqrt(norm) || 1;
      for (let j = 0; j < vals.length; j++) vals[j]! /= norm;
      vecIds.push(Int32Array.from(distinct));
      vecVals.push(vals);
    }
    for (const i of feedback) {
      const vi = vecIds[i]!;
      const vv = vecVals[i]!;
      for (let j = 0; j < vi.length; j++) sum[vi[j]!]! += vv[j]!;
    }
    // |sum|², each term once.
    let sumNorm2 = 0;
    for (const i of feedback) {
      for (const id of vecIds[i]!) {
        if (seen[id] === 1) continue;
        seen[id] = 1;
        sumNorm2 += sum[id]! * sum[id]!;
      }
    }
    // cos(v, (sum − δv) / m) for a unit v, δ = 1 in the feedback set: (sum·v − δ|v|²) / |sum − δv|.
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const d = member[i]!;
      const vi = vecIds[i]!;
      const vv = vecVals[i]!;
      let sv = 0;
      let vn = 0;
      for (let j = 0; j < vi.length; j++) {
        sv += sum[vi[j]!]! * vv[j]!;
        vn += vv[j]! * vv[j]!;
      }
      const n2 = sumNorm2 - 2 * d * sv + d * vn;
      out[i] = feedback.length - d === 0 || n2 <= 0 ? 0 : (sv - d * vn) / Math.sqrt(n2);
    }
    for (const i of feedback) {
      for (const id of vecIds[i]!) {
        sum[id] = 0;
        seen[id] = 0;
      }
    }
    return out;
  }

  #grow(size: number): void {
    const idf = new Float64Array(size);
    idf.set(this.#idf);
    this.#idf = idf;
    this.#count = new Float64Array(size);
    this.#sum = new Float64Array(size);
    this.#seen = new Uint8Array(size);
  }
}

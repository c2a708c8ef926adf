/**
 * Measurement, not a shipped path: latent semantic indexing built from a collection's own documents
 * (no labels), for docs/eval.md ("Latent semantics from the corpus"). scripts/loco-base.ts
 * (`--extra lsi`) trains on the cosine it gives; scripts/lsi-cost.ts times the per-passage fold-in.
 *
 * The term-document matrix A (terms × documents) holds each document's unit tf-idf vector
 * ((1 + ln tf) × idf, the extractor's IDF); a truncated SVD A ≈ U Σ Vᵀ of rank R is found by a seeded
 * randomized range finder (Halko, Martinsson & Tropp 2011) with power iterations, and any text is
 * folded in as Uᵀ a (for a corpus document that is its row of V Σ). Only U (terms × R) is kept: what a
 * stats file would carry.
 */
import { passageTokens } from './list-feedback.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

export interface LsiModel {
  readonly rank: number;
  /** The singular values, largest first. */
  readonly singularValues: Float64Array;
  /** Term → row of `basis`. */
  readonly termRow: ReadonlyMap<string, number>;
  /** U, row-major (terms × rank). */
  readonly basis: Float32Array;
}

export interface LsiOptions {
  readonly rank: number;
  /** Extra range-finder columns beyond `rank` (default `rank`). */
  readonly oversample?: number;
  /**
   * Power iterations (default 8). A tf-idf spectrum decays slowly, so few iterations shrink the tail of
   * the basis: on CISI at rank 64, σ₆₄ is 1.52 with 2 iterations and 16 extra columns, 1.675 with 8 and
   * 64, against 1.678 from an exact sparse SVD (scipy svds).
   */
  readonly powerIterations?: number;
  readonly seed?: number;
}

/** A text's terms as (row, weight) of its unit tf-idf vector; terms outside the model are left out. */
function unitTfIdf(
  tokens: readonly string[],
  row: (term: string) => number | undefined,
  idf: (term: string) => number,
): { rows: Int32Array; weights: Float64Array } {
  const counts = new Map<string, number>();
  for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  const rows: number[] = [];
  const weights: number[] = [];
  let norm = 0;
  for (const [term, tf] of counts) {
    const r = row(term);
    if (r === undefined) continue;
    const w = (1 + Math.log(tf)) * idf(term);
    if (w <= 0) continue;
    rows.push(r);
    weights.push(w);
    norm += w * w;
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return { rows: Int32Array.from(rows), weights: Float64Array.from(weights, (w) => w * scale) };
}

/** Box–Muller normals from the project's seeded uniform PRNG: a seeded Gaussian test matrix. */
function gaussian(seed: number): () => number {
  const uniform = mulberry32(seed);
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** Y ← orthonormal basis of Y's columns (row-major rows × cols), by Cholesky QR run twice. */
function orthonormalize(y: Float64Array, rows: number, cols: number): void {
  for (let pass = 0; pass < 2; pass++) {
    const g = new Float64Array(cols * cols);
    for (let r = 0; r < rows; r++) {
      const o = r * cols;
      for (let i = 0; i < cols; i++) {
        const v = y[o + i]!;
        if (v === 0) continue;
        for (let j = i; j < cols; j++) g[i * cols + j]! += v * y[o + j]!;
      }
    }
    // G = Lᵀ L with L upper triangular (Cholesky); a rank-deficient column gets a unit pivot.
    const l = new Float64Array(cols * cols);
    const scale = Math.max(1e-300, g[0]!);
    for (let i = 0; i < cols; i++) {
      let d = g[i * cols + i]!;
      for (let k = 0; k < i; k++) d -= l[k * cols + i]! ** 2;
      const pivot = d > 1e-14 * scale ? Math.sqrt(d) : 1;
      l[i * cols + i] = pivot;
      for (let j = i + 1; j < cols; j++) {
        let s = g[i * cols + j]!;
        for (let k = 0; k < i; k++) s -= l[k * cols + i]! * l[k * cols + j]!;
        l[i * cols + j] = d > 1e-14 * scale ? s / pivot : 0;
      }
    }
    // Y ← Y L⁻¹, row by row (forward substitution on each row).
    for (let r = 0; r < rows; r++) {
      const o = r * cols;
      for (let j = 0; j < cols; j++) {
        let s = y[o + j]!;
        for (let k = 0; k < j; k++) s -= y[o + k]! * l[k * cols + j]!;
        y[o + j] = s / l[j * cols + j]!;
      }
    }
  }
}

/** Eigen-decomposition of a symmetric n × n matrix by cyclic Jacobi: values and column eigenvectors. */
function symmetricEigen(a: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const m = Float64Array.from(a);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  let diagonal = 0;
  for (let i = 0; i < n; i++) diagonal += m[i * n + i]! ** 2;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += m[p * n + q]! ** 2;
    if (off <= 1e-24 * diagonal) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (m[q * n + q]! - m[p * n + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const mkp = m[k * n + p]!;
          const mkq = m[k * n + q]!;
          m[k * n + p] = c * mkp - s * mkq;
          m[k * n + q] = s * mkp + c * mkq;
        }
        for (let k = 0; k < n; k++) {
          const mpk = m[p * n + k]!;
          const mqk = m[q * n + k]!;
          m[p * n + k] = c * mpk - s * mqk;
          m[q * n + k] = s * mpk + c * mqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p]!;
          const vkq = v[k * n + q]!;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = m[i * n + i]!;
  return { values, vectors: v };
}

/** The rank-R LSI basis of documents given as token lists, weighted by `idf`. */
export function buildLsi(
  docs: readonly (readonly string[])[],
  idf: (term: string) => number,
  options: LsiOptions,
): LsiModel {
  const termRow = new Map<string, number>();
  for (const tokens of docs) for (const t of tokens) if (!termRow.has(t)) termRow.set(t, termRow.size);
  const terms = termRow.size;
  const columns = docs.map((tokens) => unitTfIdf(tokens, (t) => termRow.get(t), idf));
  const rank = Math.min(options.rank, docs.length, terms);
  const l = Math.min(rank + (options.oversample ?? options.rank), docs.length, terms);
  const normal = gaussian(options.seed ?? 1);
  // Y = A Ω (terms × l), Ω Gaussian (documents × l).
  const omega = Float64Array.from({ length: docs.length * l }, normal);
  const y = new Float64Array(terms * l);
  const z = new Float64Array(docs.length * l);
  const multiplyA = (from: Float64Array) => {
    y.fill(0);
    columns.forEach((col, j) => {
      for (let e = 0; e < col.rows.length; e++) {
        const o = col.rows[e]! * l;
        const w = col.weights[e]!;
        for (let c = 0; c < l; c++) y[o + c]! += w * from[j * l + c]!;
      }
    });
  };
  const multiplyAt = () => {
    z.fill(0);
    columns.forEach((col, j) => {
      for (let e = 0; e < col.rows.length; e++) {
        const o = col.rows[e]! * l;
        const w = col.weights[e]!;
        for (let c = 0; c < l; c++) z[j * l + c]! += w * y[o + c]!;
      }
    });
  };
  multiplyA(omega);
  orthonormalize(y, terms, l);
  for (let it = 0; it < (options.powerIterations ?? 8); it++) {
    multiplyAt();
    orthonormalize(z, docs.length, l);
    multiplyA(z);
    orthonormalize(y, terms, l);
  }
  // Q = y; B = Qᵀ A, held as Z = Bᵀ (documents × l); B Bᵀ = Zᵀ Z = W Λ Wᵀ; U = Q W.
  multiplyAt();
  const gram = new Float64Array(l * l);
  for (let j = 0; j < docs.length; j++)
    for (let a = 0; a < l; a++) {
      const za = z[j * l + a]!;
      for (let b = 0; b < l; b++) gram[a * l + b]! += za * z[j * l + b]!;
    }
  const { values, vectors } = symmetricEigen(gram, l);
  const order = Array.from({ length: l }, (_, i) => i).sort((a, b) => values[b]! - values[a]!);
  const keep = order.slice(0, rank);
  const basis = new Float32Array(terms * rank);
  for (let r = 0; r < terms; r++)
    for (let k = 0; k < rank; k++) {
      const w = keep[k]!;
      let s = 0;
      for (let c = 0; c < l; c++) s += y[r * l + c]! * vectors[c * l + w]!;
      basis[r * rank + k] = s;
    }
  const singularValues = Float64Array.from(keep, (w) => Math.sqrt(Math.max(0, values[w]!)));
  return { rank, singularValues, termRow, basis };
}

/** The rank-R LSI basis of a collection's documents (title and body), weighted by `idf`. */
export function buildCollectionLsi(
  docs: readonly { readonly title?: string; readonly text: string }[],
  idf: (term: string) => number,
  options: LsiOptions,
): LsiModel {
  return buildLsi(docs.map(passageTokens), idf, options);
}

/** A text folded into the latent space (Uᵀ a of its unit tf-idf vector), scaled to unit length (zero if none of its terms are known). */
export function foldIn(model: LsiModel, tokens: readonly string[], idf: (term: string) => number): Float32Array {
  const { rows, weights } = unitTfIdf(tokens, (t) => model.termRow.get(t), idf);
  const out = new Float32Array(model.rank);
  const acc = new Float64Array(model.rank);
  for (let e = 0; e < rows.length; e++) {
    const o = rows[e]! * model.rank;
    const w = weights[e]!;
    for (let k = 0; k < model.rank; k++) acc[k]! += w * model.basis[o + k]!;
  }
  let norm = 0;
  for (let k = 0; k < model.rank; k++) norm += acc[k]! * acc[k]!;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let k = 0; k < model.rank; k++) out[k] = acc[k]! * scale;
  return out;
}

/** The cosine of two folded-in unit vectors (0 when either is empty). */
export function latentCosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

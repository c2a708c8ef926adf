import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BM25_PARAMETERS, FEATURE_NAMES, NUM_FEATURES } from '../../src/features/schema.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { extractFeatures } from '../../src/features/extract.js';
import { tokenize } from '../../src/features/tokenize.js';

// The extractor's hot path (in-place ASCII tokens, stem cache, match pre-filter) must agree with
// the plain tokenizer on real text: recompute coverage, lengths and BM25 from tokenize() output
// and the statistics' document frequencies, in TypeScript, for real queries and documents.
const dataDir = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');
const col = (n: string): number => FEATURE_NAMES.indexOf(n);

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T);
}

describe.each(['cranfield', 'scifact', 'nfcorpus'])('extractor agrees with tokenize() on %s', (name) => {
  it('coverage, lengths and BM25 body match a TypeScript recomputation', async () => {
    const docs = readJsonl<{ id: string; title: string; text: string }>(join(dataDir, name, 'docs.jsonl'));
    const queries = readJsonl<{ id: string; text: string }>(join(dataDir, name, 'queries.jsonl')).slice(0, 40);
    const stats = await buildCorpusStats(docs);
    const postings = new Map<string, number[]>();
    docs.forEach((d, i) => {
      for (const t of new Set(tokenize(d.text))) {
        const list = postings.get(t);
        if (list) list.push(i);
        else postings.set(t, [i]);
      }
    });
    const { k1, b } = BM25_PARAMETERS;
    let checked = 0;
    let matchedRows = 0;
    for (const [qi, q] of queries.entries()) {
      // 5 arbitrary documents and 5 that share a term with the query.
      const sharing = [...new Set(tokenize(q.text).flatMap((t) => postings.get(t) ?? []))];
      const picked = [
        ...Array.from({ length: 5 }, (_, j) => docs[(qi * 37 + j * 101) % docs.length]!),
        ...Array.from({ length: 5 }, (_, j) => docs[sharing.length > 0 ? sharing[(j * 7919) % sharing.length]! : j]!),
      ];
      const passages = picked.map((d) => ({ title: d.title, text: d.text }));
      const rows = extractFeatures(stats, q.text, passages);
      const qTerms = tokenize(q.text);
      const unique = [...new Set(qTerms)];
      passages.forEach((p, i) => {
        const body = tokenize(p.text);
        const title = tokenize(p.title);
        const row = rows.subarray(i * NUM_FEATURES, (i + 1) * NUM_FEATURES);
        expect(row[col('body_length')]).toBe(body.length);
        expect(row[col('title_length')]).toBe(title.length);
        expect(row[col('query_length')]).toBe(qTerms.length);
        const bodySet = new Set(body);
        const anySet = new Set([...body, ...title]);
        const denom = Math.max(1, unique.length);
        expect(row[col('body_coverage')]).toBeCloseTo(unique.filter((t) => bodySet.has(t)).length / denom, 6);
        expect(row[col('query_coverage')]).toBeCloseTo(unique.filter((t) => anySet.has(t)).length / denom, 6);
        let bm25 = 0;
        for (const t of unique) {
          const tf = body.filter((x) => x === t).length;
          if (tf === 0) continue;
          const qtf = qTerms.filter((x) => x === t).length;
          const df = Math.min(stats.documentFrequency(t).body, stats.docCount);
          const idf = Math.log(1 + (stats.docCount - df + 0.5) / (df + 0.5));
          bm25 += (qtf * idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * body.length) / stats.avgBodyLength));
        }
        expect(row[col('bm25_body')]).toBeCloseTo(bm25, 3);
        if (bm25 > 0) matchedRows++;
        checked++;
      });
    }
    expect(checked).toBe(queries.length * 10);
    // The sample must exercise matching, not only empty intersections.
    expect(matchedRows).toBeGreaterThan(checked / 4);
  });
});

// The match pre-filter (native/src/features/extractor.h, QueryPlan::MayMatch) skips a token unless
// it starts like a query term: with the term's first 3 bytes when the term has 4 or more, its first
// 2 when it has 3, its first byte otherwise. That is only sound if Porter stemming never changes
// those leading characters of a word; check it on every a-z word of two collections and every
// a-z word of up to 4 letters.
describe('Porter stems keep the leading characters the match pre-filter keys on', () => {
  it('stem s of word w: w starts with s[0..3) if |s| >= 4, s[0..2) if |s| = 3, s[0] otherwise', () => {
    const words = new Set<string>();
    for (const name of ['scifact', 'nfcorpus']) {
      for (const d of readJsonl<{ title: string; text: string }>(join(dataDir, name, 'docs.jsonl'))) {
        for (const w of `${d.title} ${d.text}`.toLowerCase().match(/[a-z]+/g) ?? []) words.add(w);
      }
    }
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    let short = [''];
    for (let len = 1; len <= 4; len++) {
      short = short.flatMap((p) => [...letters].map((c) => p + c));
      for (const w of short) words.add(w);
    }
    const violations: string[] = [];
    let stemmed = 0;
    for (const w of words) {
      const terms = tokenize(w);
      if (terms.length === 0) continue; // a stop word
      const s = terms[0]!;
      const keep = s.length >= 4 ? 3 : s.length === 3 ? 2 : 1;
      if (w.slice(0, keep) !== s.slice(0, keep)) violations.push(`${w} -> ${s}`);
      if (s !== w) stemmed++;
    }
    expect(violations).toEqual([]);
    expect(stemmed).toBeGreaterThan(10_000); // the sample exercises the stemmer
  });
});

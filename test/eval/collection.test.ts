import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CollectionFormatError,
  compareIds,
  docPassage,
  judgedQueryIds,
  loadCollection,
} from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { splitQueries } from '../../src/tooling/eval/splits.js';

const root = mkdtempSync(join(tmpdir(), 'rg-eval-coll-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function makeCollection(files: Record<string, string>): string {
  const dir = join(root, `c${n++}`);
  const base: Record<string, string> = {
    'docs.jsonl': [
      { id: 'd1', title: 'Wing flutter', text: 'flutter of swept wings at transonic speed' },
      { id: 'd2', title: '', text: 'boundary layer transition on a flat plate' },
      { id: 'd3', title: 'Heat', text: 'heat conduction in composite slabs' },
    ]
      .map((d) => JSON.stringify(d))
      .join('\n'),
    'queries.jsonl': [
      '{"id":"1","text":"wing flutter"}',
      '{"id":"2","text":"heat conduction slabs"}',
      '{"id":"3","text":"unjudged"}',
    ].join('\n'),
    'qrels.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t2\n2\td3\t1\n2\td2\t0\n',
  };
  const merged = { ...base, ...files };
  mkdirSync(dir);
  for (const [name, content] of Object.entries(merged))
    if (content !== '<absent>') writeFileSync(join(dir, name), content);
  return dir;
}

describe('loadCollection', () => {
  it('loads a valid collection', () => {
    const c = loadCollection(makeCollection({}));
    expect(c.docs).toHaveLength(3);
    expect(c.queries).toHaveLength(3);
    expect(c.qrels.get('2')!.get('d3')).toBe(1);
    expect(c.trainQrels).toBeNull();
    expect(judgedQueryIds(c.qrels)).toEqual(['1', '2']);
    expect(docPassage(c.docById.get('d2')!)).toBe('boundary layer transition on a flat plate');
    expect(docPassage(c.docById.get('d1')!)).toBe('Wing flutter flutter of swept wings at transonic speed');
    expect(c.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['missing folder', null, /collection folder not found/],
    ['missing docs', { 'docs.jsonl': '<absent>' }, /missing file .*docs\.jsonl/],
    ['bad JSON', { 'docs.jsonl': '{"id":"d1","text":"x"}\n{oops' }, /docs\.jsonl:2: invalid JSON/],
    ['non-string id', { 'docs.jsonl': '{"id":7,"text":"x"}' }, /docs\.jsonl:1: field "id" must be a string/],
    ['duplicate doc', { 'docs.jsonl': '{"id":"d1","text":"x"}\n{"id":"d1","text":"y"}' }, /duplicate document id "d1"/],
    ['duplicate query', { 'queries.jsonl': '{"id":"1","text":"x"}\n{"id":"1","text":"y"}' }, /duplicate query id "1"/],
    ['no header', { 'qrels.tsv': '1\td1\t1\n' }, /qrels\.tsv:1: missing header/],
    [
      'unknown doc',
      { 'qrels.tsv': 'query-id\tcorpus-id\tscore\n1\tzz\t1\n' },
      /qrels\.tsv:2: unknown document id "zz"/,
    ],
    ['unknown query', { 'qrels.tsv': 'query-id\tcorpus-id\tscore\n9\td1\t1\n' }, /unknown query id "9"/],
    ['bad score', { 'qrels.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t0.5\n' }, /score "0.5" is not an integer/],
    ['duplicate pair', { 'qrels.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t1\n1\td1\t2\n' }, /duplicate pair \(1, d1\)/],
    ['no relevant', { 'qrels.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t0\n' }, /no query has a relevant/],
  ])('rejects %s with a clear error', (_name, files, message) => {
    const dir = files === null ? join(root, 'does-not-exist') : makeCollection(files);
    expect(() => loadCollection(dir)).toThrow(CollectionFormatError);
    expect(() => loadCollection(dir)).toThrow(message);
  });

  it('reads the optional official training qrels', () => {
    const c = loadCollection(makeCollection({ 'qrels_train.tsv': 'query-id\tcorpus-id\tscore\n3\td2\t1\n' }));
    expect(c.trainQrels!.get('3')!.get('d2')).toBe(1);
  });

  it('orders ids numerically when numeric', () => {
    expect(['10', '9', 'b', '100', 'a'].sort(compareIds)).toEqual(['9', '10', '100', 'a', 'b']);
  });
});

describe('BM25 first stage', () => {
  it('ranks the judged relevant document first on a tiny collection and is deterministic', () => {
    const c = loadCollection(makeCollection({}));
    const fs = createBm25FirstStage(c);
    const r1 = fs.search('wing flutter', 10);
    expect(r1[0]).toMatchObject({ docId: 'd1', rank: 1 });
    expect(r1.every((r, i) => i === 0 || r.score <= r1[i - 1]!.score)).toBe(true);
    expect(fs.search('heat conduction in slabs', 1).map((r) => r.docId)).toEqual(['d3']);
    // stop words alone match nothing
    expect(fs.search('the of in', 5)).toEqual([]);
    expect(fs.search('wing flutter', 10)).toEqual(r1);
  });

  it('computes classic BM25 (k1 = 1.2, b = 0.75, no coordination bonus)', () => {
    const c = loadCollection(makeCollection({}));
    const [top] = createBm25FirstStage(c).search('wing flutter', 1);
    // d1 passage "Wing flutter flutter of swept wings at transonic speed": tokens without stop words:
    // wing flutter flutter swept wings transonic speed → length 7. Lengths: d2 "boundary layer transition flat plate" 5,
    // d3 "heat heat conduction composite slabs" 5 → avg 17/3. "flutter" occurs in 1 of N = 3 docs, tf 2; "wing" tf 1.
    const N = 3;
    const idf = Math.log(1 + (N - 1 + 0.5) / (1 + 0.5));
    const norm = 1 - 0.75 + (0.75 * 7) / (17 / 3);
    const term = (tf: number): number => idf * ((tf * 2.2) / (tf + 1.2 * norm));
    expect(top!.score).toBeCloseTo(term(1) + term(2), 9);
  });
});

describe('query splits', () => {
  it('splits judged queries deterministically and disjointly, never documents', () => {
    const docs = Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: `d${i}`, title: '', text: `doc ${i}` })).join(
      '\n',
    );
    const queries = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: String(i + 1), text: `q ${i}` })).join(
      '\n',
    );
    const qrels = `query-id\tcorpus-id\tscore\n${Array.from({ length: 50 }, (_, i) => `${i + 1}\td${i % 5}\t1`).join('\n')}\n`;
    const c = loadCollection(makeCollection({ 'docs.jsonl': docs, 'queries.jsonl': queries, 'qrels.tsv': qrels }));
    const s = splitQueries(c, { seed: 7 });
    expect([s.train.length, s.validation.length, s.test.length]).toEqual([30, 10, 10]);
    const all = [...s.train, ...s.validation, ...s.test];
    expect(new Set(all).size).toBe(50);
    expect(splitQueries(c, { seed: 7 })).toEqual(s);
    expect(splitQueries(c, { seed: 8 }).test).not.toEqual(s.test);
  });

  it('uses the official split when qrels_train.tsv exists', () => {
    const c = loadCollection(makeCollection({ 'qrels_train.tsv': 'query-id\tcorpus-id\tscore\n3\td2\t1\n' }));
    const s = splitQueries(c, { seed: 1, validationShareOfTrain: 0 });
    expect(s.test).toEqual(['1', '2']);
    expect(s.train).toEqual(['3']);
    expect(s.validation).toEqual([]);
  });
});

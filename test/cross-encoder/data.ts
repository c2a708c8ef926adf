/**
 * Real (query, passage) pairs from ../shared/data for cross-encoder tests and benchmarks:
 * judged documents of each query, several collections mixed, passage = title + ' ' + text, trimmed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';
import {
  BENCHMARK_PRESETS,
  CROSS_ENCODER_PRESETS,
  type CrossEncoderPresetName,
} from '../../src/tooling/model-gen/index.js';

export interface TextPair {
  readonly collection: string;
  readonly query: string;
  readonly passage: string;
}

export const SHARED_DATA = join(packageRoot(), '..', 'shared', 'data');
export const BERT_TOKENIZER_JSON = join(SHARED_DATA, 'bert-base-uncased', 'tokenizer.json');
/** The tiny generated models the tests load: every preset except the benchmark-sized ones. */
export const TINY_PRESETS: readonly CrossEncoderPresetName[] = (
  Object.keys(CROSS_ENCODER_PRESETS) as CrossEncoderPresetName[]
).filter((name) => !BENCHMARK_PRESETS.includes(name));
export const COLLECTIONS = ['cranfield', 'cisi', 'med', 'scifact', 'nfcorpus'] as const;

function readJsonl(path: string): Array<Record<string, string>> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l) as Record<string, string>);
}

export interface CollectionData {
  readonly name: string;
  readonly queries: Map<string, string>;
  readonly docs: Map<string, string>;
  /** query id → judged doc ids, file order. */
  readonly judged: Map<string, string[]>;
}

const cache = new Map<string, CollectionData>();

export function loadCollection(name: string): CollectionData {
  const hit = cache.get(name);
  if (hit) return hit;
  const dir = join(SHARED_DATA, name);
  if (!existsSync(dir)) throw new Error(`shared data not found at ${dir}`);
  const queries = new Map(readJsonl(join(dir, 'queries.jsonl')).map((q) => [q.id, q.text]));
  const docs = new Map(
    readJsonl(join(dir, 'docs.jsonl')).map((d) => [d.id, `${d.title ?? ''} ${d.text ?? ''}`.trim()]),
  );
  const judged = new Map<string, string[]>();
  const lines = readFileSync(join(dir, 'qrels.tsv'), 'utf8').split('\n').slice(1);
  for (const line of lines) {
    const [qid, did] = line.split('\t');
    if (!qid || !did || !docs.has(did) || !queries.has(qid)) continue;
    let list = judged.get(qid);
    if (!list) {
      list = [];
      judged.set(qid, list);
    }
    list.push(did);
  }
  const data = { name, queries, docs, judged };
  cache.set(name, data);
  return data;
}

/** Up to `perCollection` judged pairs from each collection, round-robin over queries (deterministic). */
export function judgedPairs(perCollection: number, collections: readonly string[] = COLLECTIONS): TextPair[] {
  const out: TextPair[] = [];
  for (const name of collections) {
    const c = loadCollection(name);
    const lists = [...c.judged.entries()];
    let taken = 0;
    for (let round = 0; taken < perCollection; round++) {
      let any = false;
      for (const [qid, dids] of lists) {
        if (round >= dids.length) continue;
        any = true;
        out.push({ collection: name, query: c.queries.get(qid)!, passage: c.docs.get(dids[round])! });
        if (++taken >= perCollection) break;
      }
      if (!any) break;
    }
  }
  return out;
}

/** Requests of `size` passages: a query with its judged docs, topped up with other docs of the collection. */
export function realRequests(
  count: number,
  size: number,
  collections: readonly string[] = COLLECTIONS,
): Array<{ query: string; passages: string[] }> {
  const out: Array<{ query: string; passages: string[] }> = [];
  const datas = collections.map(loadCollection);
  const iters = datas.map((c) => ({ c, qids: [...c.judged.keys()], docIds: [...c.docs.keys()], next: 0 }));
  for (let r = 0; out.length < count; r++) {
    const it = iters[r % iters.length];
    const qid = it.qids[Math.floor(r / iters.length) % it.qids.length];
    const passages = (it.c.judged.get(qid) ?? []).slice(0, size).map((d) => it.c.docs.get(d)!);
    while (passages.length < size) passages.push(it.c.docs.get(it.docIds[it.next++ % it.docIds.length])!);
    out.push({ query: it.c.queries.get(qid)!, passages });
  }
  return out;
}

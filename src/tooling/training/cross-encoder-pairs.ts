/**
 * Training pairs of a cross-encoder: for each training query of each collection, its judged
 * relevant documents (up to `positives`, seeded draw) and hard negatives drawn from the BM25 first
 * stage's top `negativePool` (up to `negatives`, seeded draw of the unjudged or grade-0 documents)
 * and random negatives from the whole corpus (`randomNegatives`).
 * The same first stage and the same passage text (title + body) as evaluation, so the model trains
 * on the input shape it is measured on.
 *
 * Which queries train: every judged query of a collection, except SciFact-style collections that
 * ship an official training split (`qrels_train.tsv`): there only the training split's queries, so
 * the collection's test queries stay unseen by every model.
 *
 * Evidence labels (SciFact's evidence_labels.tsv: SUPPORT / CONTRADICT / NOINFO per judged pair)
 * become two more targets: `evidence` (the passage holds rationale: SUPPORT or CONTRADICT) and
 * `contradicts_premise` (CONTRADICT). A hard negative of a collection that has evidence labels is
 * 0 on both; rows of collections without them carry null (masked out of those heads' losses).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { mulberry32, fnv1a } from '../../util/seeded-random.js';
import { type Collection, docPassage, judgedQueryIds } from '../eval/collection.js';
import { createBm25FirstStage } from '../eval/first-stage.js';
import { shuffled } from '../eval/splits.js';

export type EvidenceLabel = 'SUPPORT' | 'CONTRADICT' | 'NOINFO';

export interface CrossEncoderPair {
  readonly collection: string;
  readonly queryId: string;
  readonly docId: string;
  readonly query: string;
  readonly passage: string;
  /** 1 = judged relevant, 0 = hard negative. */
  readonly relevant: 0 | 1;
  /** null where the collection has no evidence labels. */
  readonly evidence: 0 | 1 | null;
  readonly contradictsPremise: 0 | 1 | null;
}

export interface CrossEncoderPairOptions {
  /** Judged relevant documents per query at most (default 4). */
  readonly positives?: number;
  /** Hard negatives per query (default 3). */
  readonly negatives?: number;
  /** Negatives are drawn from this many BM25 candidates (default 30). */
  readonly negativePool?: number;
  /**
   * Random negatives per query (default 2): documents drawn uniformly from the rest of the corpus,
   * unjudged. They teach what an off-topic passage looks like, the gate's case of a list that holds
   * nothing relevant, which hard negatives alone never show.
   */
  readonly randomNegatives?: number;
  readonly seed?: number;
}

export const EVIDENCE_LABELS_FILE = 'evidence_labels.tsv';

/** query id → doc id → label, from a collection's evidence_labels.tsv; null when it has none. */
export function readEvidenceLabels(collection: Collection): Map<string, Map<string, EvidenceLabel>> | null {
  const file = join(collection.dir, EVIDENCE_LABELS_FILE);
  if (!existsSync(file)) return null;
  const out = new Map<string, Map<string, EvidenceLabel>>();
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const [queryId, docId, , label] = line.split('\t');
    if (label !== 'SUPPORT' && label !== 'CONTRADICT' && label !== 'NOINFO')
      throw new InvalidArgumentError(`${file}:${i + 1}: label must be SUPPORT, CONTRADICT or NOINFO, got ${label}`);
    const byDoc = out.get(queryId) ?? new Map<string, EvidenceLabel>();
    out.set(queryId, byDoc);
    byDoc.set(docId, label);
  }
  return out;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0)
    throw new InvalidArgumentError(`${name} must be an integer ≥ 0, got ${value}`);
  return value;
}

/** The queries a collection trains on (its official training split when it ships one). */
export function trainingQueryIds(collection: Collection): string[] {
  return judgedQueryIds(collection.trainQrels ?? collection.qrels);
}

export function buildCrossEncoderPairs(
  collection: Collection,
  options: CrossEncoderPairOptions = {},
): CrossEncoderPair[] {
  const positives = nonNegativeInteger('positives', options.positives ?? 4);
  const negatives = nonNegativeInteger('negatives', options.negatives ?? 3);
  const pool = nonNegativeInteger('negativePool', options.negativePool ?? 30);
  const randomNegatives = nonNegativeInteger('randomNegatives', options.randomNegatives ?? 2);
  const seed = options.seed ?? 1;
  const qrels = collection.trainQrels ?? collection.qrels;
  const evidence = readEvidenceLabels(collection);
  const firstStage = createBm25FirstStage(collection);
  const out: CrossEncoderPair[] = [];
  for (const queryId of trainingQueryIds(collection)) {
    const query = collection.queryById.get(queryId);
    if (query === undefined) continue;
    const judged = qrels.get(queryId) ?? new Map<string, number>();
    const random = mulberry32((seed ^ fnv1a(`${collection.name}\0${queryId}`)) >>> 0);
    const relevantIds = [...judged].filter(([, g]) => g > 0).map(([id]) => id);
    const positiveIds = shuffled(relevantIds.sort(), random).slice(0, positives);
    const negativeIds: string[] = shuffled(
      firstStage
        .search(query.text, Math.max(1, pool))
        .map((c) => c.docId)
        .filter((id) => (judged.get(id) ?? 0) <= 0),
      random,
    ).slice(0, negatives);
    const taken = new Set([...judged.keys(), ...negativeIds]);
    for (let tries = 0, added = 0; added < randomNegatives && tries < randomNegatives * 20; tries++) {
      const doc = collection.docs[Math.floor(random() * collection.docs.length)];
      if (taken.has(doc.id)) continue;
      taken.add(doc.id);
      negativeIds.push(doc.id);
      added++;
    }
    const labels = evidence?.get(queryId);
    const row = (docId: string, relevant: 0 | 1): CrossEncoderPair | undefined => {
      const doc = collection.docById.get(docId);
      if (doc === undefined) return undefined;
      const label = labels?.get(docId);
      return {
        collection: collection.name,
        queryId,
        docId,
        query: query.text,
        passage: docPassage(doc),
        relevant,
        evidence: evidence === null ? null : label === 'SUPPORT' || label === 'CONTRADICT' ? 1 : 0,
        contradictsPremise: evidence === null ? null : label === 'CONTRADICT' ? 1 : 0,
      };
    };
    for (const id of positiveIds) {
      const r = row(id, 1);
      if (r !== undefined) out.push(r);
    }
    for (const id of negativeIds) {
      const r = row(id, 0);
      if (r !== undefined) out.push(r);
    }
  }
  return out;
}

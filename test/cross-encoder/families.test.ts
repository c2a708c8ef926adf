/**
 * createCrossEncoder on every common family's contract (generated SPEED/SHAPE graphs: random
 * weights, NOT relevance models): BERT, RoBERTa and ModernBERT with their real tokenizer files;
 * XLM-R and DeBERTa-v3 by contract only, with a RoBERTa / BERT tokenizer.json standing in (their
 * own tokenizer files are too large to obtain here). Scores are compared with an independent
 * reference (tokenizers' own `encode(query, passage)` + one plain onnxruntime session per
 * sequence) on 500 real judged pairs, many of them truncated; plus batch independence, int32
 * inputs and `position_ids` inputs filled the way each family's export expects.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrossEncoder, createCrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import { ModelContractError } from '../../src/tiers/cross-encoder/errors.js';
import { type TextPair, judgedPairs } from './data.js';
import { FAMILY_CASES, type FamilyCase, Reference, requestsOf, softmax, writeFamily } from './family-models.js';

const MAX_LENGTH = 128;
let root: string;
const dirs = new Map<string, string>();
/** 100 judged pairs from each of 5 collections. */
const PAIRS: readonly TextPair[] = judgedPairs(100);

const familyCase = (name: string): FamilyCase => {
  const c = FAMILY_CASES.find((f) => f.name === name);
  if (c === undefined) throw new Error(`no family ${name}`);
  return c;
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-ce-families-'));
  for (const c of FAMILY_CASES) dirs.set(c.name, await writeFamily(join(root, c.name), c));
}, 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Scores every pair through the tier, requests fired together (so batches mix requests), input order. */
async function tierLogits(ce: CrossEncoder, pairs: readonly TextPair[]): Promise<number[][]> {
  const out: number[][] = new Array(pairs.length);
  await Promise.all(
    requestsOf(pairs).map(async (r) => {
      const s = await ce.score(r.query, r.passages);
      const k = s.signals?.names.length ?? 1;
      r.index.forEach((at, j) => {
        out[at] = s.signals === undefined ? [s.logits[j]] : Array.from(s.signals.logits.subarray(j * k, (j + 1) * k));
      });
    }),
  );
  return out;
}

/** The loader's logit columns for a reference output row (binary relevance heads report l1 − l0). */
function expectedColumns(ce: CrossEncoder, row: readonly number[]): number[] {
  return ce.info.contract.head.kind === 'binary' ? [row[1] - row[0]] : [...row];
}

describe.each(FAMILY_CASES.map((c) => c.name))('family %s', (name) => {
  let ce: CrossEncoder;
  let ref: Reference;
  beforeAll(async () => {
    const dir = dirs.get(name)!;
    ce = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength: MAX_LENGTH });
    ref = await Reference.open(dir, MAX_LENGTH);
  }, 60_000);
  afterAll(async () => {
    await ce?.close();
    await ref?.close();
  });

  it('scores 500 real pairs (truncated ones included) as the tokenizers + onnxruntime reference (≤ 1e-4)', async () => {
    const got = await tierLogits(ce, PAIRS);
    let truncated = 0;
    let maxDiff = 0;
    let maxProbDiff = 0;
    for (let i = 0; i < PAIRS.length; i++) {
      const enc = await ref.encode(PAIRS[i].query, PAIRS[i].passage, 'query-passage');
      if (enc.ids.length === MAX_LENGTH) truncated++;
      const want = expectedColumns(ce, await ref.run(enc.ids, enc.typeIds));
      expect(got[i].length).toBe(want.length);
      for (let c = 0; c < want.length; c++) maxDiff = Math.max(maxDiff, Math.abs(got[i][c] - want[c]));
    }
    expect(PAIRS.length).toBe(500);
    expect(truncated).toBeGreaterThan(100);
    expect(maxDiff).toBeLessThanOrEqual(1e-4);
    // Probabilities follow the head: softmax over labels for multi-class heads, sigmoid otherwise.
    const sample = PAIRS.slice(0, 20);
    const s = await ce.score(
      sample[0].query,
      sample.map((p) => p.passage),
    );
    for (let j = 0; j < sample.length; j++) {
      const row = await ref.score(sample[0].query, sample[j].passage);
      if (ce.info.contract.activation === 'softmax') {
        const k = row.length;
        const want = softmax(row);
        for (let c = 0; c < k; c++) {
          maxProbDiff = Math.max(maxProbDiff, Math.abs(s.signals!.probabilities[j * k + c] - want[c]));
        }
      } else {
        const x = expectedColumns(ce, row)[0];
        maxProbDiff = Math.max(maxProbDiff, Math.abs(s.probabilities[j] - 1 / (1 + Math.exp(-x))));
      }
    }
    expect(maxProbDiff).toBeLessThan(1e-5);
  }, 120_000);

  it("a pair's scores do not depend on its batch mates", async () => {
    const pairs = PAIRS.filter((_, i) => i % 17 === 0).slice(0, 24);
    const alone: number[][] = [];
    for (const p of pairs) alone.push((await tierLogits(ce, [p]))[0]);
    // One request holding all of them (short and long mates in the same batches) and the same pairs
    // spread over concurrent requests with other traffic.
    const query = pairs[0].query;
    const together = await ce.score(query, ['x', ...pairs.map((p) => p.passage), PAIRS[1].passage]);
    const mixed = await tierLogits(ce, [...PAIRS.slice(100, 140), ...pairs]);
    const k = alone[0].length;
    for (let i = 0; i < pairs.length; i++) {
      for (let c = 0; c < k; c++) expect(Math.abs(mixed[40 + i][c] - alone[i][c])).toBeLessThan(1e-5);
    }
    const first = (await tierLogits(ce, [{ ...pairs[0], query }]))[0];
    const got =
      together.signals === undefined ? [together.logits[1]] : Array.from(together.signals.logits.slice(k, 2 * k));
    for (let c = 0; c < k; c++) expect(Math.abs(got[c] - first[c])).toBeLessThan(1e-5);
  }, 60_000);
});

describe('integer input types and position_ids', () => {
  it.each(['bert', 'roberta'])(
    'an int32 %s graph is fed int32 and scores as the int64 graph',
    async (name) => {
      const c = familyCase(name);
      const dir = await writeFamily(join(root, `${name}-int32`), c, { inputDtype: 'int32' });
      const ce = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength: MAX_LENGTH });
      const ref = await Reference.open(dirs.get(name)!, MAX_LENGTH);
      try {
        expect(Object.values(ce.info.contract.inputTypes).every((t) => t === 'int32')).toBe(true);
        const pairs = PAIRS.slice(0, 60);
        const got = await tierLogits(ce, pairs);
        for (let i = 0; i < pairs.length; i++) {
          const want = expectedColumns(ce, await ref.score(pairs[i].query, pairs[i].passage));
          for (const [col, w] of want.entries()) expect(Math.abs(got[i][col] - w)).toBeLessThan(1e-4);
        }
      } finally {
        await ce.close();
        await ref.close();
      }
    },
    60_000,
  );

  it.each([
    ['bert', 'sequential'],
    ['roberta', 'padding-offset'],
    ['modernbert', 'sequential'],
    ['xlm-roberta', 'padding-offset'],
  ] as const)(
    'a %s graph with a position_ids input gets %s positions (scores = the graph without it)',
    async (name, scheme) => {
      const c = familyCase(name);
      const dir = await writeFamily(join(root, `${name}-positions`), c, { extraInputs: ['position_ids'] });
      const ce = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength: MAX_LENGTH });
      // The reference is the same seed's graph WITHOUT position_ids (positions computed inside it).
      const plain = await Reference.open(dirs.get(name)!, MAX_LENGTH);
      try {
        expect(ce.info.contract.positionIds).toBe('position_ids');
        expect(ce.info.contract.positionScheme).toBe(scheme);
        const pairs = PAIRS.slice(200, 260);
        const got = await tierLogits(ce, pairs);
        for (let i = 0; i < pairs.length; i++) {
          const want = expectedColumns(ce, await plain.score(pairs[i].query, pairs[i].passage));
          for (const [col, w] of want.entries()) expect(Math.abs(got[i][col] - w)).toBeLessThan(1e-4);
        }
      } finally {
        await ce.close();
        await plain.close();
      }
    },
    60_000,
  );

  it('an input the loader cannot fill is refused by name', async () => {
    const dir = await writeFamily(join(root, 'bert-other-input'), familyCase('bert'), {
      extraInputs: ['visual_embeds'],
    });
    const err = await createCrossEncoder({ modelDir: dir, workers: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelContractError);
    expect((err as Error).message).toMatch(/unexpected input "visual_embeds"/);
  }, 60_000);
});

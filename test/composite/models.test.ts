/**
 * A composite tier of three generated SPEED/SHAPE graphs (seeded random weights: the numbers mean
 * nothing as relevance, but each graph has its family's real contract and its real model's labels):
 * a BERT relevance reranker (MiniLM-L6 contract), an NLI graph with roberta-large-mnli's labels
 * (CONTRADICTION / NEUTRAL / ENTAILMENT, read premise = passage), and a prompt-injection classifier
 * with deberta-v3-base-injection-finetune's labels (safe / prompt_injection, reading the passage
 * alone). Their signals drive the default routing rules end to end through createGate, checked
 * pair by pair against the rules applied to each model's own probabilities; a failing model
 * (hung, throwing, closed mid-way) fails only its signals closed; the cache keeps each model's
 * entries apart.
 */
import { copyFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CompositeMember,
  type CompositeScorer,
  createCompositeScorer,
  crossEncoderMember,
} from '../../src/composite/index.js';
import {
  createGate,
  createScoreCache,
  DEFAULT_ROUTING_RULES,
  type GateItem,
  type GateResult,
  type Passage,
} from '../../src/index.js';
import { CONTRADICTS_PREMISE, EVIDENCE, INJECTION, RELEVANT } from '../../src/signals.js';
import { createCrossEncoder, type CrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import type { Scorer } from '../../src/types.js';
import { realRequests } from '../cross-encoder/data.js';
import {
  expectedDefaultDecision,
  fakeMember,
  INJECTION_LABELS,
  NLI_LABELS,
  nearBoundary,
  type ProductSignals,
  passagesOf,
} from './helpers.js';

const TOKENIZERS = join(import.meta.dirname, '..', '..', '..', 'shared', 'tokenizers');
/** Test sizes: one layer, hidden 32 (the vocabularies, windows and heads stay real). */
const SIZE = { layers: 1, hidden: 32 } as const;

type Kind = 'relevance' | 'nli' | 'injection';
const encoders = new Map<string, CrossEncoder>();
let root: string;

async function makeEncoder(kind: Kind, seed: number, folder = `${kind}-${seed}`): Promise<CrossEncoder> {
  const dir = join(root, folder);
  if (kind === 'relevance') {
    await writeCrossEncoderModelDir(dir, 'minilm-l6', {
      ...SIZE,
      seed,
      tokenizerDir: join(TOKENIZERS, 'ms-marco-MiniLM-L-6-v2'),
    });
    return createCrossEncoder({ modelDir: dir, workers: 1 });
  }
  if (kind === 'nli') {
    await writeCrossEncoderModelDir(dir, 'roberta-nli', {
      ...SIZE,
      seed,
      tokenizerDir: join(TOKENIZERS, 'roberta-large-mnli'),
    });
    return createCrossEncoder({ modelDir: dir, workers: 1, pairInput: 'passage-query' });
  }
  await writeCrossEncoderModelDir(dir, 'deberta-injection', {
    ...SIZE,
    seed,
    tokenizerDir: join(TOKENIZERS, 'deberta-v3-base-injection-finetune'),
  });
  // No DeBERTa-v3 tokenizer.json exists here: ModernBERT's BPE ids (< 50368) are valid ids of its 128100 vocabulary.
  copyFileSync(join(TOKENIZERS, 'modernbert-large', 'tokenizer.json'), join(dir, 'tokenizer.json'));
  return createCrossEncoder({ modelDir: dir, workers: 1, pairInput: 'passage' });
}

function encoder(kind: Kind, seed: number): CrossEncoder {
  const e = encoders.get(`${kind}-${seed}`);
  if (e === undefined) throw new Error(`no ${kind} encoder with seed ${seed}`);
  return e;
}

const RELEVANCE_SIGNALS = { [RELEVANT]: RELEVANT };
const NLI_SIGNALS = { [EVIDENCE]: 'ENTAILMENT', [CONTRADICTS_PREMISE]: 'CONTRADICTION' };
const INJECTION_SIGNALS = { [INJECTION]: 'prompt_injection' };

function threeModels(seeds: { relevance: number; nli: number; injection: number }, extra = {}): CompositeScorer {
  return createCompositeScorer({
    members: [
      crossEncoderMember(encoder('relevance', seeds.relevance), RELEVANCE_SIGNALS, { id: 'relevance' }),
      crossEncoderMember(encoder('nli', seeds.nli), NLI_SIGNALS, { id: 'nli' }),
      crossEncoderMember(encoder('injection', seeds.injection), INJECTION_SIGNALS, { id: 'injection' }),
    ],
    ...extra,
  });
}

/** Each model's own probabilities for the pairs, scored by the encoder alone, as product signals. */
async function independentSignals(
  query: string,
  passages: readonly Passage[],
  seeds: Partial<Record<Kind, number>>,
): Promise<ProductSignals[]> {
  const texts = passages.map((p) => p.text);
  const out: ProductSignals[] = passages.map(() => ({}));
  if (seeds.relevance !== undefined) {
    const s = await encoder('relevance', seeds.relevance).score(query, texts);
    for (let i = 0; i < texts.length; i++) out[i][RELEVANT] = s.probabilities[i];
  }
  if (seeds.nli !== undefined) {
    const s = await encoder('nli', seeds.nli).score(query, texts);
    const names = s.signals?.names ?? [];
    const k = names.length;
    texts.forEach((_, i) => {
      out[i][EVIDENCE] = s.signals?.probabilities[i * k + names.indexOf('ENTAILMENT')];
      out[i][CONTRADICTS_PREMISE] = s.signals?.probabilities[i * k + names.indexOf('CONTRADICTION')];
    });
  }
  if (seeds.injection !== undefined) {
    const s = await encoder('injection', seeds.injection).score(query, texts);
    const names = s.signals?.names ?? [];
    for (let i = 0; i < texts.length; i++)
      out[i][INJECTION] = s.signals?.probabilities[i * names.length + names.indexOf('prompt_injection')];
  }
  return out;
}

function allItems(r: GateResult<Passage>): GateItem<Passage>[] {
  return [...r.included, ...r.conflicting, ...r.excluded].sort((a, b) => a.rank - b.rank);
}

/** Checks every item's signals against the independent ones and its route against the rules on them. */
function expectRoutesFollowRules(items: readonly GateItem<Passage>[], expected: readonly ProductSignals[]): string[] {
  const rules: string[] = [];
  expect(items).toHaveLength(expected.length);
  items.forEach((item, i) => {
    const want = expected[i];
    expect(Object.keys(item.signals ?? {}).sort()).toEqual(Object.keys(want).sort());
    for (const [name, value] of Object.entries(want)) expect(item.signals?.[name]).toBeCloseTo(value as number, 5);
    if (nearBoundary(want)) return;
    const decision = expectedDefaultDecision(want);
    expect({ id: item.id, route: item.route, rule: item.rule }).toEqual({ id: item.id, ...decision });
    rules.push(item.rule);
  });
  return rules;
}

const REQUESTS = realRequests(3, 8).map((r, q) => ({ query: r.query, passages: passagesOf(r.passages, `r${q}-`) }));

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-composite-'));
  const wanted: Array<[Kind, number]> = [
    ['relevance', 2],
    ['relevance', 3],
    ['nli', 1],
    ['nli', 2],
    ['nli', 3],
    ['injection', 1],
    ['injection', 2],
  ];
  for (const [kind, seed] of wanted) encoders.set(`${kind}-${seed}`, await makeEncoder(kind, seed));
});

afterAll(async () => {
  await Promise.all([...encoders.values()].map((e) => e.close()));
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

describe('three generated models composed into one tier', () => {
  it("the models' heads carry their real configs' labels and the pair layouts they read", () => {
    expect(encoder('nli', 1).info.contract.signalNames).toEqual([...NLI_LABELS]);
    expect(encoder('nli', 1).info.pairInput).toBe('passage-query');
    // Softmax heads: entailment and contradiction compete for one unit of probability.
    expect(encoder('nli', 1).info.contract.activation).toBe('softmax');
    expect(encoder('injection', 1).info.contract.activation).toBe('softmax');
    expect(encoder('injection', 1).info.contract.signalNames).toEqual([...INJECTION_LABELS]);
    expect(encoder('injection', 1).info.pairInput).toBe('passage');
    expect(encoder('relevance', 2).info.contract.signalNames).toEqual([RELEVANT]);
    const composite = threeModels({ relevance: 2, nli: 1, injection: 1 });
    expect(composite.signals).toEqual([RELEVANT, EVIDENCE, CONTRADICTS_PREMISE, INJECTION]);
    // A label spelt differently from config.json is refused at construction.
    expect(() =>
      createCompositeScorer({ members: [crossEncoderMember(encoder('nli', 1), { evidence: 'entailment' })] }),
    ).toThrow(/did you mean "ENTAILMENT"/);
  });

  it("drive the default routing rules through createGate: every route is what the rules give on the models' own probabilities", async () => {
    // Random weights bias each graph to a narrow range, so several seed combinations are needed
    // for every rule to fire: between them they cover all four rules and the default route.
    const combos = [
      { relevance: 2, nli: 2, injection: 1 },
      { relevance: 2, nli: 1, injection: 1 },
      { relevance: 3, nli: 3, injection: 1 },
      { relevance: 2, nli: 3, injection: 2 },
      { relevance: 2, nli: 3, injection: 1 },
    ];
    const fired = new Set<string>();
    let checked = 0;
    for (const seeds of combos) {
      const gate = createGate({ scorer: threeModels(seeds), policy: { rules: DEFAULT_ROUTING_RULES } });
      for (const { query, passages } of REQUESTS) {
        const [r, expected] = await Promise.all([
          gate.filter(query, passages),
          independentSignals(query, passages, seeds),
        ]);
        expect(r.errors).toEqual([]);
        expect(r.stats.scored).toBe(passages.length);
        const rules = expectRoutesFollowRules(allItems(r), expected);
        for (const rule of rules) fired.add(rule);
        checked += rules.length;
        for (const item of allItems(r)) expect(item.tier).toBe('composite[relevance,nli,injection]');
      }
    }
    expect([...fired].sort()).toEqual(['contradicts-premise', 'default', 'evidence', 'injection', 'relevance-floor']);
    expect(checked).toBeGreaterThanOrEqual(combos.length * REQUESTS.length * 8 - 4);
  });

  it('the NLI member reads premise = passage, hypothesis = query', async () => {
    const nli = encoder('nli', 1);
    const { query, passages } = REQUESTS[0];
    const texts = passages.slice(0, 3).map((p) => p.text);
    const composite = threeModels({ relevance: 2, nli: 1, injection: 1 });
    const results = await composite.score(query, passages.slice(0, 3));
    // The same graph read query-first, fed (passage, query) explicitly, gives the same entailment.
    const swapped = await createCrossEncoder({
      modelDir: nli.info.modelPath.replace(/\/onnx\/model\.onnx$/, ''),
      workers: 1,
    });
    try {
      for (let i = 0; i < texts.length; i++) {
        const s = await swapped.score(texts[i], [query]);
        expect(results[i]?.probabilities[EVIDENCE]).toBeCloseTo(s.signals?.probabilities[2] as number, 6);
        expect(results[i]?.probabilities[CONTRADICTS_PREMISE]).toBeCloseTo(s.signals?.probabilities[0] as number, 6);
      }
    } finally {
      await swapped.close();
    }
  });

  it('a member hung past the deadline fails only its signals closed; the models keep theirs', async () => {
    const hung = fakeMember('hung-injection', INJECTION_LABELS, {
      before: () => new Promise<void>((resolve) => setTimeout(resolve, 5000).unref()),
    });
    const composite = createCompositeScorer({
      members: [
        crossEncoderMember(encoder('relevance', 2), RELEVANCE_SIGNALS, { id: 'relevance' }),
        crossEncoderMember(encoder('nli', 1), NLI_SIGNALS, { id: 'nli' }),
        { scorer: hung, signals: INJECTION_SIGNALS, id: 'injection' },
      ],
    });
    const gate = createGate({ scorer: composite, policy: { rules: DEFAULT_ROUTING_RULES } });
    const { query, passages } = REQUESTS[1];
    const started = Date.now();
    const r = await gate.filter(query, passages, { budgetMs: 400 });
    expect(Date.now() - started).toBeLessThan(1000);
    const expected = await independentSignals(query, passages, { relevance: 2, nli: 1 });
    const items = allItems(r);
    items.forEach((item, i) => {
      expect({ rule: item.rule, reason: item.reason }).toEqual({ rule: 'fail-closed', reason: 'missing-signal' });
      expect(item.signals?.[INJECTION]).toBeUndefined();
      for (const [name, value] of Object.entries(expected[i]))
        expect(item.signals?.[name]).toBeCloseTo(value as number, 5);
      expect(item.tier).toBe('composite[relevance,nli]');
    });
    expect(composite.stats().members[2].timeouts).toBe(1);
  });

  it('a real encoder closed mid-way fails its signals closed without touching the others', async () => {
    const doomed = await makeEncoder('nli', 1, 'nli-1-closed');
    // The encoder is closed as soon as it has answered its first request: requests still queued
    // behind it, and every later one, find it closed.
    const nliMember = crossEncoderMember(doomed, NLI_SIGNALS, { id: 'nli' });
    let closing: Promise<void> | undefined;
    const closingAfterFirst: Scorer = {
      id: nliMember.scorer.id,
      signals: nliMember.scorer.signals,
      score: async (query, passages, options) => {
        const results = await nliMember.scorer.score(query, passages, options);
        closing ??= doomed.close();
        return results;
      },
    };
    const composite = createCompositeScorer({
      members: [
        crossEncoderMember(encoder('relevance', 2), RELEVANCE_SIGNALS, { id: 'relevance' }),
        { ...nliMember, scorer: closingAfterFirst },
        crossEncoderMember(encoder('injection', 1), INJECTION_SIGNALS, { id: 'injection' }),
      ],
    });
    const gate = createGate({ scorer: composite, policy: { rules: DEFAULT_ROUTING_RULES } });
    const requests = realRequests(6, 16).map((q, k) => ({
      query: q.query,
      passages: passagesOf(q.passages, `c${k}-`),
    }));
    const results = await Promise.all(requests.map((q) => gate.filter(q.query, q.passages)));
    await closing;
    const after = await gate.filter(requests[0].query, requests[0].passages);
    const withNli: number[] = [];
    for (const [k, r] of [...results, after].entries()) {
      const q = requests[k % requests.length];
      const items = allItems(r);
      const full = await independentSignals(q.query, q.passages, { relevance: 2, injection: 1 });
      const nliOnly = await independentSignals(q.query, q.passages, { nli: 1 });
      let present = 0;
      items.forEach((item, i) => {
        // relevance and injection are always there and exact; the NLI signals are all there or none.
        for (const [name, value] of Object.entries(full[i]))
          expect(item.signals?.[name]).toBeCloseTo(value as number, 5);
        const hasNli = item.signals?.[EVIDENCE] !== undefined;
        expect(item.signals?.[CONTRADICTS_PREMISE] !== undefined).toBe(hasNli);
        const seen = hasNli ? { ...full[i], ...nliOnly[i] } : full[i];
        if (hasNli) {
          present++;
          expect(item.signals?.[EVIDENCE]).toBeCloseTo(nliOnly[i][EVIDENCE] as number, 5);
        }
        expect(item.tier).toBe(hasNli ? 'composite[relevance,nli,injection]' : 'composite[relevance,injection]');
        if (!nearBoundary(seen)) expect({ route: item.route, rule: item.rule }).toEqual(expectedDefaultDecision(seen));
      });
      withNli.push(present);
    }
    // The first answered request has its NLI signals; the call after close() has none, and the
    // member's failures are counted.
    expect(Math.max(...withNli)).toBe(16);
    expect(withNli[withNli.length - 1]).toBe(0);
    expect(composite.stats().members[1].failures).toBeGreaterThanOrEqual(1);
    expect(composite.stats().members[1].lastError).toMatch(/disposed/);
    console.log('[composite] NLI signals per request around close():', withNli.join(' '));
  });
});

/** A member whose scorer counts the passages it is asked to score. */
function counting(member: CompositeMember): { member: CompositeMember; asked: number[] } {
  const asked: number[] = [];
  const inner = member.scorer;
  const scorer: Scorer = {
    id: inner.id,
    signals: inner.signals,
    score: (query, passages, options) => {
      asked.push(passages.length);
      return inner.score(query, passages, options);
    },
  };
  return { member: { ...member, scorer }, asked };
}

describe('per-member caching of the composed models', () => {
  it('a second call calls no model; adding a fourth model leaves the other three cached', async () => {
    const cache = createScoreCache({ maxBytes: 4 << 20 });
    const rel = counting(crossEncoderMember(encoder('relevance', 2), RELEVANCE_SIGNALS, { id: 'relevance' }));
    const nli = counting(crossEncoderMember(encoder('nli', 1), NLI_SIGNALS, { id: 'nli' }));
    const inj = counting(crossEncoderMember(encoder('injection', 1), INJECTION_SIGNALS, { id: 'injection' }));
    const three = createCompositeScorer({ members: [rel.member, nli.member, inj.member], cache });
    const gate = createGate({ scorer: three, policy: { rules: DEFAULT_ROUTING_RULES } });
    const { query, passages } = REQUESTS[2];
    const first = await gate.filter(query, passages);
    const second = await gate.filter(query, passages);
    expect([rel.asked, nli.asked, inj.asked]).toEqual([[passages.length], [passages.length], [passages.length]]);
    const routes = (r: typeof first) => allItems(r).map((i) => [i.id, i.route, i.rule, i.signals]);
    expect(routes(second)).toEqual(routes(first));
    expectRoutesFollowRules(
      allItems(second),
      await independentSignals(query, passages, { relevance: 2, nli: 1, injection: 1 }),
    );

    // A fourth model (a second injection classifier feeding its own signal) joins: the three are
    // still answered from the cache, only the new one runs.
    const extra = counting(
      crossEncoderMember(encoder('injection', 2), { injection_secondary: 'prompt_injection' }, { id: 'injection-2' }),
    );
    const four = createCompositeScorer({ members: [rel.member, nli.member, inj.member, extra.member], cache });
    expect(four.id).not.toBe(three.id);
    const r4 = await createGate({ scorer: four, policy: { rules: DEFAULT_ROUTING_RULES } }).filter(query, passages);
    expect([rel.asked, nli.asked, inj.asked, extra.asked]).toEqual([
      [passages.length],
      [passages.length],
      [passages.length],
      [passages.length],
    ]);
    expect(routes(r4).map((row) => row.slice(0, 3))).toEqual(routes(first).map((row) => row.slice(0, 3)));
    const secondary = await independentSignals(query, passages, { injection: 2 });
    for (const [i, item] of allItems(r4).entries())
      expect(item.signals?.injection_secondary).toBeCloseTo(secondary[i][INJECTION] as number, 5);
    expect(four.stats().members.map((m) => m.cacheHits)).toEqual([
      passages.length,
      passages.length,
      passages.length,
      0,
    ]);
  });
});

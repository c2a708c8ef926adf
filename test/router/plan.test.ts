import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type PairCacheState,
  type Plan,
  type PlanInput,
  type PlanReason,
  type PlanTier,
  planRouting,
} from '../../src/router/plan.js';
import type { RoutingMode } from '../../src/router/types.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

/** A tier whose cost model is overheadMs + msPerPair × (outstanding + pairs). */
interface TierRow {
  readonly name: string;
  readonly inline?: boolean;
  readonly msPerPair?: number;
  readonly overheadMs?: number;
  readonly maxQueuedPairs?: number;
  readonly outstandingPairs?: number;
  readonly mayProbe?: boolean;
}

function tier(row: TierRow): PlanTier {
  const outstanding = row.outstandingPairs ?? 0;
  const msPerPair = row.msPerPair ?? 1;
  const overhead = row.overheadMs ?? 0;
  return {
    name: row.name,
    inline: row.inline === true,
    maxQueuedPairs: row.maxQueuedPairs ?? 512,
    outstandingPairs: outstanding,
    predictMs: (pairs) => overhead + (outstanding + pairs) * msPerPair,
    mayProbe: row.mayProbe === true,
  };
}

const NOW = 1_000_000;
const FAST_PATH: TierRow = { name: 'fast-path', inline: true, msPerPair: 0.01 };

interface Row {
  readonly name: string;
  readonly mode: RoutingMode;
  /** Tiers best first; default cross-encoder (10 ms/pair) over fast-path. */
  readonly tiers?: readonly TierRow[];
  readonly fixedTier?: string;
  readonly cascadeTier?: string;
  /** Cache state per pair; a number n means n misses. */
  readonly cache: readonly PairCacheState[] | number;
  readonly relevance?: readonly number[];
  readonly threshold?: number;
  /** ms left until the answer time; null: no deadline. Default 100. */
  readonly remainingMs?: number | null;
  readonly headroom?: number;
  readonly expected: Partial<Plan>;
}

const CE = (extra: Partial<TierRow> = {}): TierRow => ({ name: 'cross-encoder', msPerPair: 10, ...extra });

function input(row: Row): PlanInput {
  const cache = typeof row.cache === 'number' ? Array<PairCacheState>(row.cache).fill('miss') : row.cache;
  const remaining = row.remainingMs === undefined ? 100 : row.remainingMs;
  return {
    mode: row.mode,
    tiers: (row.tiers ?? [CE(), FAST_PATH]).map(tier),
    fixedTier: row.fixedTier ?? 'cross-encoder',
    ...(row.cascadeTier !== undefined ? { cascadeTier: row.cascadeTier } : {}),
    cache,
    relevance: row.relevance,
    threshold: row.threshold ?? 0.5,
    answerBy: remaining === null ? undefined : NOW + remaining,
    now: NOW,
    headroom: row.headroom ?? 1,
  };
}

/** The full expected plan: unlisted fields are empty. */
function full(expected: Partial<Plan>): Plan {
  return {
    reason: 'fits',
    submissions: [],
    submissionDegraded: undefined,
    inlineScore: [],
    inlineAnswer: [],
    inlineDegraded: undefined,
    shed: [],
    probe: undefined,
    ...expected,
  };
}

/** The pair indices 0 … n − 1. */
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Budget mode: every listed pair kept off the slow tiers, scored and answered by the inline tier. */
function shedInline(reason: PlanReason, indices: readonly number[]): Partial<Plan> {
  return { reason, inlineScore: indices, inlineAnswer: indices, inlineDegraded: 'shed', shed: indices };
}

/** Cascade mode: `sent` go to the best tier in that order; `kept` are answered by their inline score, shed. */
function cascadeShed(reason: PlanReason, sent: readonly number[], kept: readonly number[]): Partial<Plan> {
  return {
    reason,
    submissions: sent.length === 0 ? [] : [{ tier: 'cross-encoder', indices: sent }],
    inlineAnswer: kept,
    inlineDegraded: 'shed',
    shed: kept,
  };
}

/** A lower tier takes every listed pair, labelled shed. */
function shedTo(tier: string, indices: readonly number[]): Partial<Plan> {
  return { reason: 'over-budget', submissions: [{ tier, indices }], submissionDegraded: 'shed', shed: indices };
}

const ALL4 = range(4);
// Distances to 0.5: p5 0, p1 .02, p3 .03, p9 .06, p7 .11, p6 .17, p4 .2, p2 .4, p0 .45, p8 .48.
const SPREAD = [0.95, 0.52, 0.1, 0.47, 0.7, 0.5, 0.33, 0.61, 0.02, 0.44];

const FIXED_ROWS: Row[] = [
  {
    name: 'every miss on the fixed slow tier',
    mode: 'fixed',
    cache: 4,
    expected: { reason: 'fixed', submissions: [{ tier: 'cross-encoder', indices: ALL4 }] },
  },
  {
    name: 'fixed inline tier: scored and answered inline, undegraded',
    mode: 'fixed',
    fixedTier: 'fast-path',
    cache: 4,
    expected: { reason: 'fixed', inlineScore: ALL4, inlineAnswer: ALL4 },
  },
  {
    name: 'final cached pairs are not resent',
    mode: 'fixed',
    cache: ['final', 'miss', 'final', 'miss'],
    expected: { reason: 'fixed', submissions: [{ tier: 'cross-encoder', indices: [1, 3] }] },
  },
  {
    name: 'all cached: nothing to do',
    mode: 'fixed',
    cache: ['final', 'final', 'final'],
    expected: { reason: 'all-cached' },
  },
  {
    name: 'zero budget does not shed in fixed mode',
    mode: 'fixed',
    cache: 4,
    remainingMs: 0,
    expected: { reason: 'fixed', submissions: [{ tier: 'cross-encoder', indices: ALL4 }] },
  },
  {
    name: 'a full queue does not shed in fixed mode',
    mode: 'fixed',
    tiers: [CE({ maxQueuedPairs: 4, outstandingPairs: 4 }), FAST_PATH],
    cache: 4,
    expected: { reason: 'fixed', submissions: [{ tier: 'cross-encoder', indices: ALL4 }] },
  },
  {
    name: 'no pairs at all',
    mode: 'fixed',
    cache: 0,
    expected: { reason: 'all-cached' },
  },
];

const BUDGET_ROWS: Row[] = [
  {
    name: 'the best tier fits every pair',
    mode: 'budget',
    cache: 4, // 40 ms of 100
    expected: { reason: 'fits', submissions: [{ tier: 'cross-encoder', indices: ALL4 }] },
  },
  {
    name: 'exactly at the limit still fits',
    mode: 'budget',
    cache: 10, // 100 ms of 100
    expected: {
      reason: 'fits',
      submissions: [{ tier: 'cross-encoder', indices: range(10) }],
    },
  },
  {
    name: 'too slow: every pair shed to the inline tier',
    mode: 'budget',
    cache: 11, // 110 ms of 100
    expected: shedInline('over-budget', range(11)),
  },
  {
    name: 'headroom scales the time a prediction may fill',
    mode: 'budget',
    cache: 4, // 40 ms > 0.3 × 100
    headroom: 0.3,
    expected: shedInline('over-budget', ALL4),
  },
  {
    name: 'zero budget: shed, and no probe even when the tier may probe',
    mode: 'budget',
    tiers: [CE({ mayProbe: true }), FAST_PATH],
    cache: 4,
    remainingMs: 0,
    expected: shedInline('over-budget', ALL4),
  },
  {
    name: 'deadline already passed: shed',
    mode: 'budget',
    cache: 2,
    remainingMs: -50,
    expected: shedInline('over-budget', [0, 1]),
  },
  {
    name: 'queue full: shed although the time would fit',
    mode: 'budget',
    tiers: [CE({ msPerPair: 0.1, maxQueuedPairs: 30, outstandingPairs: 30 }), FAST_PATH],
    cache: 4,
    expected: shedInline('queue-full', ALL4),
  },
  {
    name: 'queue room for only part of the request: budget sends none',
    mode: 'budget',
    tiers: [CE({ msPerPair: 0.1, maxQueuedPairs: 30, outstandingPairs: 28 }), FAST_PATH],
    cache: 4,
    expected: shedInline('queue-full', ALL4),
  },
  {
    name: 'pairs outstanding make the prediction longer',
    mode: 'budget',
    tiers: [CE({ outstandingPairs: 7 }), FAST_PATH], // (7 + 4) × 10 = 110 ms
    cache: 4,
    expected: shedInline('over-budget', ALL4),
  },
  {
    name: 'three tiers: the best is too slow, the middle one fits (labelled shed)',
    mode: 'budget',
    tiers: [{ name: 'bigCe', msPerPair: 50 }, { name: 'smallCe', msPerPair: 10 }, FAST_PATH],
    cache: 3,
    expected: shedTo('smallCe', [0, 1, 2]),
  },
  {
    name: 'three tiers: both slow tiers too slow, inline',
    mode: 'budget',
    tiers: [{ name: 'bigCe', msPerPair: 50 }, { name: 'smallCe', msPerPair: 50 }, FAST_PATH],
    cache: 3,
    expected: shedInline('over-budget', [0, 1, 2]),
  },
  {
    name: 'no inline tier and nothing fits: the lowest tier takes the work',
    mode: 'budget',
    tiers: [
      { name: 'bigCe', msPerPair: 50 },
      { name: 'smallCe', msPerPair: 50 },
    ],
    cache: 3,
    expected: shedTo('smallCe', [0, 1, 2]),
  },
  {
    name: 'a lone slow tier takes the work even when it does not fit (nothing lower)',
    mode: 'budget',
    tiers: [CE()],
    cache: 11,
    expected: {
      reason: 'over-budget',
      submissions: [{ tier: 'cross-encoder', indices: range(11) }],
    },
  },
  {
    name: 'an idle tier with a stale model gets the request as a probe',
    mode: 'budget',
    tiers: [CE({ msPerPair: 1000, mayProbe: true }), FAST_PATH],
    cache: 2,
    expected: { reason: 'probe', submissions: [{ tier: 'cross-encoder', indices: [0, 1] }], probe: 'cross-encoder' },
  },
  {
    name: 'no probe when the queue cannot take the whole request',
    mode: 'budget',
    tiers: [CE({ msPerPair: 1000, mayProbe: true, maxQueuedPairs: 1 }), FAST_PATH],
    cache: 2,
    expected: shedInline('queue-full', [0, 1]),
  },
  {
    name: 'no deadline: only the queue bound applies',
    mode: 'budget',
    tiers: [CE({ msPerPair: 1e6 }), FAST_PATH],
    cache: 3,
    remainingMs: null,
    expected: { reason: 'fits', submissions: [{ tier: 'cross-encoder', indices: [0, 1, 2] }] },
  },
  {
    name: 'all cached',
    mode: 'budget',
    cache: ['final', 'final'],
    expected: { reason: 'all-cached' },
  },
  {
    name: 'cached inline scores stay candidates; final ones do not',
    mode: 'budget',
    cache: ['fallback', 'final', 'miss', 'fallback'],
    expected: { reason: 'fits', submissions: [{ tier: 'cross-encoder', indices: [0, 2, 3] }] },
  },
  {
    name: 'a single inline tier: answered inline, undegraded',
    mode: 'budget',
    tiers: [FAST_PATH],
    cache: 3,
    expected: { reason: 'inline-only', inlineScore: [0, 1, 2], inlineAnswer: [0, 1, 2] },
  },
];

const JUDGE: TierRow = { name: 'llm-judge', msPerPair: 50 };

const CASCADE_ROWS: Row[] = [
  {
    name: 'three tiers, cascadeTier cross-encoder: the judge is skipped, the nearest pairs go to the cross-encoder',
    mode: 'cascade',
    tiers: [JUDGE, CE(), FAST_PATH],
    cascadeTier: 'cross-encoder',
    cache: 10,
    relevance: SPREAD,
    remainingMs: 55,
    expected: cascadeShed('over-budget', [5, 1, 3, 9, 7], [6, 4, 2, 0, 8]),
  },
  {
    name: 'three tiers, default cascade tier: the best (the judge) takes what fits',
    mode: 'cascade',
    tiers: [JUDGE, CE(), FAST_PATH],
    cache: 10,
    relevance: SPREAD,
    remainingMs: 105, // 2 × 50 ms fit
    expected: {
      reason: 'over-budget',
      submissions: [{ tier: 'llm-judge', indices: [5, 1] }],
      inlineAnswer: [3, 9, 7, 6, 4, 2, 0, 8],
      inlineDegraded: 'shed',
      shed: [3, 9, 7, 6, 4, 2, 0, 8],
    },
  },
  {
    name: 'the pairs nearest the threshold go up, as many as fit',
    mode: 'cascade',
    cache: 10,
    relevance: SPREAD,
    remainingMs: 55, // 5 × 10 ms fit, 6 do not
    expected: cascadeShed('over-budget', [5, 1, 3, 9, 7], [6, 4, 2, 0, 8]),
  },
  {
    name: 'another threshold reorders the same pairs',
    mode: 'cascade',
    cache: 10,
    relevance: SPREAD,
    threshold: 0.1, // p2 0, p8 .08, p6 .23, p5/p9 .4/.34 ...
    remainingMs: 30,
    expected: cascadeShed('over-budget', [2, 8, 6], [9, 3, 5, 1, 7, 4, 0]),
  },
  {
    name: 'ties keep input order',
    mode: 'cascade',
    cache: 4,
    relevance: [0.75, 0.25, 0.75, 0.25],
    remainingMs: 25,
    expected: cascadeShed('over-budget', [0, 1], [2, 3]),
  },
  {
    name: 'pairs without an inline relevance go last',
    mode: 'cascade',
    cache: 4,
    relevance: [Number.NaN, 0.9, Number.NaN, 0.5],
    remainingMs: 20,
    expected: cascadeShed('over-budget', [3, 1], [0, 2]),
  },
  {
    name: 'everything fits: nothing shed',
    mode: 'cascade',
    cache: 4,
    relevance: [0.1, 0.9, 0.5, 0.4],
    expected: { reason: 'fits', submissions: [{ tier: 'cross-encoder', indices: [2, 3, 0, 1] }] },
  },
  {
    name: 'zero budget: every pair stays inline, no probe',
    mode: 'cascade',
    tiers: [CE({ mayProbe: true }), FAST_PATH],
    cache: 3,
    relevance: [0.5, 0.5, 0.5],
    remainingMs: 0,
    expected: cascadeShed('over-budget', [], [0, 1, 2]),
  },
  {
    name: 'queue full: every pair stays inline',
    mode: 'cascade',
    tiers: [CE({ msPerPair: 0.1, maxQueuedPairs: 512, outstandingPairs: 512 }), FAST_PATH],
    cache: 3,
    relevance: [0.2, 0.5, 0.8],
    expected: cascadeShed('queue-full', [], [1, 0, 2]),
  },
  {
    name: 'queue room for two: the two nearest go up',
    mode: 'cascade',
    tiers: [CE({ msPerPair: 0.1, maxQueuedPairs: 30, outstandingPairs: 28 }), FAST_PATH],
    cache: 5,
    relevance: [0.1, 0.45, 0.9, 0.6, 0.52],
    expected: cascadeShed('queue-full', [4, 1], [3, 0, 2]),
  },
  {
    name: 'nothing fits on an idle stale tier: a one-pair probe, the nearest',
    mode: 'cascade',
    tiers: [CE({ msPerPair: 1000, mayProbe: true }), FAST_PATH],
    cache: 4,
    relevance: [0.9, 0.1, 0.49, 0.3],
    expected: { ...cascadeShed('probe', [2], [3, 0, 1]), probe: 'cross-encoder' },
  },
  {
    name: 'no probe when one pair fits anyway',
    mode: 'cascade',
    tiers: [CE({ msPerPair: 40, mayProbe: true }), FAST_PATH],
    cache: 4,
    relevance: [0.9, 0.1, 0.49, 0.3],
    expected: cascadeShed('over-budget', [2, 3], [0, 1]),
  },
  {
    name: 'all cached',
    mode: 'cascade',
    cache: ['final', 'final', 'final'],
    relevance: [0.5, 0.5, 0.5],
    expected: { reason: 'all-cached' },
  },
  {
    name: 'final cached pairs are never rescored; cached inline scores are candidates',
    mode: 'cascade',
    cache: ['final', 'fallback', 'miss', 'final'],
    relevance: [0.5, 0.9, 0.6, 0.5],
    remainingMs: 10,
    expected: cascadeShed('over-budget', [2], [1]),
  },
  {
    name: 'a single inline tier: answered inline (already scored), undegraded',
    mode: 'cascade',
    tiers: [FAST_PATH],
    cache: 3,
    relevance: [0.1, 0.2, 0.3],
    expected: { reason: 'inline-only', inlineAnswer: [0, 1, 2] },
  },
  {
    name: 'no inline tier: no relevance, input order',
    mode: 'cascade',
    tiers: [CE(), { name: 'smallCe', msPerPair: 1 }],
    cache: 4,
    remainingMs: 20,
    expected: cascadeShed('over-budget', [0, 1], [2, 3]),
  },
];

describe('planRouting (table)', () => {
  for (const [mode, rows] of [
    ['fixed', FIXED_ROWS],
    ['budget', BUDGET_ROWS],
    ['cascade', CASCADE_ROWS],
  ] as const) {
    describe(mode, () => {
      it.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
        expect(planRouting(input(row))).toEqual(full(row.expected));
      });
    });
  }
});

describe('planRouting (properties)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reads no clock and leaves its input untouched', () => {
    vi.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('the planner read Date.now');
    });
    vi.spyOn(performance, 'now').mockImplementation(() => {
      throw new Error('the planner read performance.now');
    });
    for (const row of [...FIXED_ROWS, ...BUDGET_ROWS, ...CASCADE_ROWS]) {
      const given = input(row);
      const cacheBefore = [...given.cache];
      const relevanceBefore = given.relevance === undefined ? undefined : Array.from(given.relevance);
      const first = planRouting(given);
      expect(planRouting(given)).toEqual(first);
      expect([...given.cache]).toEqual(cacheBefore);
      expect(given.relevance === undefined ? undefined : Array.from(given.relevance)).toEqual(relevanceBefore);
    }
  });

  it('answers every open pair exactly once and never touches final cached pairs (random inputs)', () => {
    const random = mulberry32(20261201);
    const modes: RoutingMode[] = ['fixed', 'budget', 'cascade'];
    const states: PairCacheState[] = ['miss', 'fallback', 'final'];
    for (let trial = 0; trial < 500; trial++) {
      const n = Math.floor(random() * 12);
      const cache = Array.from({ length: n }, () => states[Math.floor(random() * 3)]);
      const withInline = random() < 0.8;
      const tiers: TierRow[] = [
        {
          name: 'cross-encoder',
          msPerPair: random() * 30,
          overheadMs: random() * 20,
          maxQueuedPairs: 1 + Math.floor(random() * 20),
          outstandingPairs: Math.floor(random() * 20),
          mayProbe: random() < 0.3,
        },
        ...(random() < 0.5 ? [{ name: 'smallCe', msPerPair: random() * 5 }] : []),
        ...(withInline ? [FAST_PATH] : []),
      ];
      const mode = modes[Math.floor(random() * 3)];
      const row: Row = {
        name: `random ${trial}`,
        mode,
        tiers,
        fixedTier: tiers[Math.floor(random() * tiers.length)].name,
        cache,
        relevance: Array.from({ length: n }, () => (random() < 0.1 ? Number.NaN : random())),
        remainingMs: random() < 0.1 ? null : random() * 150 - 20,
        headroom: 0.5 + random() * 0.5,
        expected: {},
      };
      const plan = planRouting(input(row));
      const open = cache.flatMap((s, i) => (s === 'final' ? [] : [i]));
      const sent = plan.submissions.flatMap((s) => [...s.indices]);
      const answered = [...sent, ...plan.inlineAnswer].sort((a, b) => a - b);
      expect(answered).toEqual(open);
      // Shed pairs are exactly the open pairs kept off the best tier (fixed mode never sheds).
      const best = tiers[0].name;
      const offBest = open.filter((i) => !plan.submissions.some((s) => s.tier === best && s.indices.includes(i)));
      if (mode === 'fixed') expect(plan.shed).toEqual([]);
      else if (tiers[0].inline !== true) expect([...plan.shed].sort((a, b) => a - b)).toEqual(offBest);
      // Inline work only where an inline tier exists (or the fixed tier is it).
      if (!withInline) expect(plan.inlineScore).toEqual([]);
      // The best tier's queue bound holds outside fixed mode.
      const bestRow = tiers[0];
      const toBest = plan.submissions.filter((s) => s.tier === best).reduce((m, s) => m + s.indices.length, 0);
      // (A lone slow tier in budget mode takes the work whatever the bound: nothing lower exists.)
      if (mode !== 'fixed' && toBest > 0 && tiers.length > 1)
        expect(toBest).toBeLessThanOrEqual((bestRow.maxQueuedPairs ?? 512) - (bestRow.outstandingPairs ?? 0));
    }
  });

  it('rejects a fixed tier it does not know', () => {
    expect(() => planRouting(input({ name: 'x', mode: 'fixed', fixedTier: 'nope', cache: 2, expected: {} }))).toThrow(
      /unknown tier/,
    );
  });
});

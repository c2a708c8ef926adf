/**
 * createCompositeScorer with member scorers answering deterministic values: merging in input
 * order, configuration refusals, failure isolation (a member that throws, hangs past the deadline,
 * answers the wrong count or invalid values), abort, request isolation, and per-member caching.
 */
import { describe, expect, it } from 'vitest';
import {
  type CompositeScorer,
  CompositeConfigError,
  createCompositeScorer,
  compositeTierLabel,
} from '../../src/composite/index.js';
import { AbortedError, DeadlineExceededError, DisposedError } from '../../src/errors.js';
import { createGate, createScoreCache, DEFAULT_ROUTING_RULES, type Passage } from '../../src/index.js';
import { CONTRADICTS_PREMISE, EVIDENCE, INJECTION, RELEVANT } from '../../src/signals.js';
import { isDetailedPairScore, type ScorerPairResult } from '../../src/types.js';
import {
  expectedDefaultDecision,
  type FakeMember,
  fakeMember,
  fakeValue,
  INJECTION_LABELS,
  logitOf,
  NLI_LABELS,
  passagesOf,
  sleep,
} from './helpers.js';

const QUERY = 'does the treatment reduce mortality';
const TEXTS = Array.from({ length: 24 }, (_, i) => `passage number ${i} about treatment ${i % 5}`);

interface Trio {
  readonly relevance: FakeMember;
  readonly nli: FakeMember;
  readonly injection: FakeMember;
}

function trio(overrides: Partial<Trio> = {}): Trio {
  return {
    relevance: overrides.relevance ?? fakeMember('rel-model', [RELEVANT]),
    nli: overrides.nli ?? fakeMember('nli-model', NLI_LABELS),
    injection: overrides.injection ?? fakeMember('inj-model', INJECTION_LABELS),
  };
}

function compose(t: Trio, extra: Partial<Parameters<typeof createCompositeScorer>[0]> = {}): CompositeScorer {
  return createCompositeScorer({
    members: [
      { scorer: t.relevance, signals: { [RELEVANT]: RELEVANT }, id: 'relevance' },
      { scorer: t.nli, signals: { [EVIDENCE]: 'ENTAILMENT', [CONTRADICTS_PREMISE]: 'CONTRADICTION' }, id: 'nli' },
      { scorer: t.injection, signals: { [INJECTION]: 'prompt_injection' }, id: 'injection' },
    ],
    ...extra,
  });
}

/** The product signals the trio gives a pair, computed from the fakes' own values. */
function expectedSignals(query: string, p: Passage, without: readonly string[] = []): Record<string, number> {
  const s: Record<string, number> = {};
  if (!without.includes('relevance')) s[RELEVANT] = fakeValue('rel-model', query, p, RELEVANT);
  if (!without.includes('nli')) {
    s[EVIDENCE] = fakeValue('nli-model', query, p, 'ENTAILMENT');
    s[CONTRADICTS_PREMISE] = fakeValue('nli-model', query, p, 'CONTRADICTION');
  }
  if (!without.includes('injection')) s[INJECTION] = fakeValue('inj-model', query, p, 'prompt_injection');
  return s;
}

describe('createCompositeScorer: merging', () => {
  it('merges every member signal per pair in input order, raw values under the product names, tier naming the members', async () => {
    const t = trio();
    const composite = compose(t);
    const passages = passagesOf(TEXTS);
    const results = await composite.score(QUERY, passages);
    expect(results).toHaveLength(passages.length);
    passages.forEach((p, i) => {
      const r = results[i];
      expect(r).not.toBeNull();
      const want = expectedSignals(QUERY, p);
      expect(r?.probabilities).toEqual(want);
      for (const [name, value] of Object.entries(want)) expect(r?.raw?.[name]).toBeCloseTo(logitOf(value), 12);
      // Labels no product signal reads (NEUTRAL, safe) are not passed on.
      expect(Object.keys(r?.probabilities ?? {}).sort()).toEqual([CONTRADICTS_PREMISE, EVIDENCE, INJECTION, RELEVANT]);
      expect(r?.tier).toBe('composite[relevance,nli,injection]');
    });
    // Each member scored every pair once, in input order, with the caller's query.
    for (const m of [t.relevance, t.nli, t.injection]) {
      expect(m.calls).toHaveLength(1);
      expect(m.calls[0].query).toBe(QUERY);
      expect(m.calls[0].ids).toEqual(passages.map((p) => p.id));
    }
    expect(composite.signals).toEqual([RELEVANT, EVIDENCE, CONTRADICTS_PREMISE, INJECTION]);
    expect(composite.members.map((m) => [m.id, m.scorerId])).toEqual([
      ['relevance', 'rel-model'],
      ['nli', 'nli-model'],
      ['injection', 'inj-model'],
    ]);
  });

  it('runs the members concurrently', async () => {
    let running = 0;
    let peak = 0;
    const before = async (): Promise<void> => {
      running++;
      peak = Math.max(peak, running);
      await sleep(30);
      running--;
    };
    const composite = compose({
      relevance: fakeMember('rel-model', [RELEVANT], { before }),
      nli: fakeMember('nli-model', NLI_LABELS, { before }),
      injection: fakeMember('inj-model', INJECTION_LABELS, { before }),
    });
    await composite.score(QUERY, passagesOf(TEXTS.slice(0, 3)));
    expect(peak).toBe(3);
  });

  it('accepts plain probability records from a member, and members without raw values', async () => {
    const plain = fakeMember('plain-rel', [RELEVANT], { answer: () => ({ relevant: 0.75 }) });
    const composite = createCompositeScorer({ members: [{ scorer: plain, signals: { [RELEVANT]: RELEVANT } }] });
    const [r] = await composite.score(QUERY, passagesOf(['x']));
    expect(r).toEqual({ probabilities: { relevant: 0.75 }, tier: compositeTierLabel(['plain-rel']) });
  });

  it('has a stable id that changes with any member, id or signal map, and declares the union of signals and metadata keys', () => {
    const a = compose(trio());
    const b = compose(trio());
    expect(a.id).toBe(b.id);
    expect(a.id).toMatch(/^composite:[0-9a-f]{16}$/);
    const otherModel = compose(trio({ nli: fakeMember('nli-model-v2', NLI_LABELS) }));
    expect(otherModel.id).not.toBe(a.id);
    const t = trio();
    const swapped = createCompositeScorer({
      members: [
        { scorer: t.relevance, signals: { [RELEVANT]: RELEVANT }, id: 'relevance' },
        { scorer: t.nli, signals: { [EVIDENCE]: 'NEUTRAL', [CONTRADICTS_PREMISE]: 'CONTRADICTION' }, id: 'nli' },
        { scorer: t.injection, signals: { [INJECTION]: 'prompt_injection' }, id: 'injection' },
      ],
    });
    expect(swapped.id).not.toBe(a.id);
    const withKeys = createCompositeScorer({
      members: [
        { scorer: fakeMember('r', [RELEVANT], { metadataKeys: ['source_type'] }), signals: { relevant: RELEVANT } },
        {
          scorer: fakeMember('j', INJECTION_LABELS, { metadataKeys: ['lang', 'source_type'] }),
          signals: { injection: 'prompt_injection' },
        },
      ],
    });
    expect(withKeys.metadataKeys).toEqual(['lang', 'source_type']);
    expect(a.metadataKeys).toBeUndefined();
  });
});

describe('createCompositeScorer: configuration', () => {
  const rel = fakeMember('rel-model', [RELEVANT]);
  const nli = fakeMember('nli-model', NLI_LABELS);
  const refuses = (options: unknown, field: string, message: RegExp): void => {
    let caught: unknown;
    try {
      createCompositeScorer(options as Parameters<typeof createCompositeScorer>[0]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CompositeConfigError);
    expect((caught as CompositeConfigError).code).toBe('RG_ERR_COMPOSITE_CONFIG');
    expect((caught as CompositeConfigError).field).toBe(field);
    expect((caught as Error).message).toMatch(message);
  };

  it('refuses a label the member does not declare, case-sensitively, naming the labels it has', () => {
    refuses(
      { members: [{ scorer: nli, signals: { evidence: 'entailment' } }] },
      'members[0].signals.evidence',
      /did you mean "ENTAILMENT"\?.*"CONTRADICTION", "NEUTRAL", "ENTAILMENT"/,
    );
    refuses(
      { members: [{ scorer: nli, signals: { evidence: 'ENTAILS' } }] },
      'members[0].signals.evidence',
      /no label "ENTAILS"/,
    );
    const undeclared = { id: 'bare', score: rel.score };
    refuses(
      { members: [{ scorer: undeclared, signals: { relevant: RELEVANT } }] },
      'members[0].scorer',
      /declares no signals/,
    );
  });

  it('refuses a product signal fed by two members, two members with one id, and malformed members', () => {
    refuses(
      {
        members: [
          { scorer: rel, signals: { relevant: RELEVANT } },
          { scorer: nli, signals: { relevant: 'ENTAILMENT' } },
        ],
      },
      'members[1].signals.relevant',
      /already fed by member "rel-model"/,
    );
    refuses(
      {
        members: [
          { scorer: rel, signals: { relevant: RELEVANT } },
          { scorer: rel, signals: { other: RELEVANT } },
        ],
      },
      'members[1].id',
      /distinct ids/,
    );
    refuses({ members: [] }, 'members', /non-empty array/);
    refuses({}, 'members', /non-empty array/);
    refuses({ members: [{ scorer: rel, signals: {} }] }, 'members[0].signals', /at least one/);
    refuses(
      { members: [{ scorer: rel, signals: { relevant: RELEVANT }, label: 'x' }] },
      'members[0].label',
      /not a member option/,
    );
    refuses(
      { members: [{ scorer: { id: '' }, signals: { relevant: RELEVANT } }] },
      'members[0].scorer',
      /must be a Scorer/,
    );
    refuses({ members: [{ scorer: rel, signals: { relevant: RELEVANT }, id: '' }] }, 'members[0].id', /non-empty/);
    refuses(
      { members: [{ scorer: rel, signals: { relevant: RELEVANT } }], timeoutMs: 5 },
      'timeoutMs',
      /not an option/,
    );
    refuses(
      { members: [{ scorer: rel, signals: { relevant: RELEVANT } }], returnMarginMs: -1 },
      'returnMarginMs',
      /≥ 0/,
    );
    refuses({ members: [{ scorer: rel, signals: { relevant: RELEVANT } }], cache: {} }, 'cache', /score cache/);
  });

  it('is refused by createGate when the default rules read a signal no member feeds', () => {
    const partial = createCompositeScorer({
      members: [
        { scorer: rel, signals: { relevant: RELEVANT } },
        { scorer: nli, signals: { evidence: 'ENTAILMENT', contradicts_premise: 'CONTRADICTION' } },
      ],
    });
    expect(() => createGate({ scorer: partial, policy: { rules: DEFAULT_ROUTING_RULES } })).toThrow(/injection/);
  });
});

describe('createCompositeScorer: a failing member leaves only its own signals missing', () => {
  const passages = passagesOf(TEXTS);

  it('a member that throws: its signals are missing, the others are kept, and the gate fails those pairs by the rules', async () => {
    const t = trio({
      nli: fakeMember('nli-model', NLI_LABELS, {
        before: () => {
          throw new Error('nli session crashed');
        },
      }),
    });
    const composite = compose(t);
    const results = await composite.score(QUERY, passages);
    passages.forEach((p, i) => {
      expect(results[i]?.probabilities).toEqual(expectedSignals(QUERY, p, ['nli']));
      expect(results[i]?.tier).toBe('composite[relevance,injection]');
    });
    const nliStats = composite.stats().members[1];
    expect(nliStats).toMatchObject({ id: 'nli', failures: 1, timeouts: 0, lastError: 'nli session crashed' });
    expect(composite.stats().members[0]).toMatchObject({ failures: 0, calls: 1, pairsScored: passages.length });

    // Through the gate: evidence and contradiction are skipped when missing, so every pair ends as
    // the rules say on relevance and injection alone.
    const gate = createGate({ scorer: compose(trio({ nli: t.nli })), policy: { rules: DEFAULT_ROUTING_RULES } });
    const r = await gate.filter(QUERY, passages);
    const items = [...r.included, ...r.conflicting, ...r.excluded];
    expect(items).toHaveLength(passages.length);
    for (const item of items) {
      const want = expectedDefaultDecision(expectedSignals(QUERY, item.passage, ['nli']));
      expect({ id: item.id, route: item.route, rule: item.rule }).toEqual({ id: item.id, ...want });
      expect(item.signals?.[RELEVANT]).toBe(fakeValue('rel-model', QUERY, item.passage, RELEVANT));
    }
    expect(r.included).toHaveLength(0); // without evidence nothing is included
    expect(r.errors).toEqual([]);
  });

  it('a failing injection member fails every pair closed (an unchecked passage never reads as safe), keeping the other signals', async () => {
    const t = trio({
      injection: fakeMember('inj-model', INJECTION_LABELS, {
        before: () => {
          throw new DisposedError('cross-encoder');
        },
      }),
    });
    const gate = createGate({ scorer: compose(t), policy: { rules: DEFAULT_ROUTING_RULES } });
    const r = await gate.filter(QUERY, passages);
    expect(r.excluded).toHaveLength(passages.length);
    for (const item of r.excluded) {
      expect(item.rule).toBe('fail-closed');
      expect(item.reason).toBe('missing-signal');
      expect(item.signals).toEqual(expectedSignals(QUERY, item.passage, ['injection']));
    }
  });

  it('a member that hangs past the deadline: the composite answers by the deadline with the others, and cancels it', async () => {
    let hungSignal: AbortSignal | undefined;
    const hang = fakeMember('inj-model', INJECTION_LABELS, {
      before: (call) =>
        new Promise<void>((resolve) => {
          hungSignal = call.options?.signal;
          // Ignores its signal; resolves long after the test, never blocking it.
          setTimeout(resolve, 3000).unref();
        }),
    });
    const t = trio({ nli: fakeMember('nli-model', NLI_LABELS, { before: () => sleep(5) }), injection: hang });
    const composite = compose(t);
    const deadline = Date.now() + 150;
    const started = Date.now();
    const results = await composite.score(QUERY, passages, { deadline });
    const finished = Date.now();
    // At the answer time (deadline − 2 ms), not when the hung member answers (3 s); timers may
    // fire late on a loaded host, hence the slack.
    expect(finished - started).toBeGreaterThanOrEqual(140);
    expect(finished).toBeLessThan(deadline + 100);
    for (const [i, p] of passages.entries())
      expect(results[i]?.probabilities).toEqual(expectedSignals(QUERY, p, ['injection']));
    expect(hungSignal?.aborted).toBe(true);
    expect(hungSignal?.reason).toBeInstanceOf(DeadlineExceededError);
    expect(composite.stats().members[2]).toMatchObject({ timeouts: 1, failures: 0 });
    // Every member was given the answer time (deadline − returnMarginMs) as its deadline.
    expect(t.relevance.calls[0].options?.deadline).toBe(deadline - 2);

    // Through the gate with a budget: the composite's answer reaches the gate in time, so pairs
    // are decided on relevance and the NLI signals and fail closed only for the missing injection.
    const gate = createGate({ scorer: compose(trio({ injection: hang })), policy: { rules: DEFAULT_ROUTING_RULES } });
    const r = await gate.filter(QUERY, passages, { budgetMs: 120 });
    expect(r.excluded).toHaveLength(passages.length);
    for (const item of r.excluded) {
      expect(item.reason).toBe('missing-signal');
      expect(item.signals).toEqual(expectedSignals(QUERY, item.passage, ['injection']));
    }
  });

  it('a member answering the wrong count, null or invalid values: only its signals of those pairs are missing', async () => {
    const shortAnswer: FakeMember = {
      ...fakeMember('nli-model', NLI_LABELS),
      score: async (_q, ps) => ps.slice(1).map(() => ({ ENTAILMENT: 0.9, CONTRADICTION: 0.1, NEUTRAL: 0 })),
    };
    const wrongCount = compose(trio({ nli: shortAnswer }));
    const passagesShort = passages.slice(0, 4);
    const res = await wrongCount.score(QUERY, passagesShort);
    for (const [i, p] of passagesShort.entries())
      expect(res[i]?.probabilities).toEqual(expectedSignals(QUERY, p, ['nli']));
    expect(wrongCount.stats().members[1].lastError).toMatch(/returned 3 results for 4 passages/);

    // Pair 0: null; pair 1: NaN; pair 2: probability 1.5; pair 3: no mapped label; others valid.
    const bad = fakeMember('inj-model', INJECTION_LABELS, {
      answer: (query, p): ScorerPairResult => {
        const v = fakeValue('inj-model', query, p, 'prompt_injection');
        if (p.id === 'p0') return null;
        if (p.id === 'p1') return { probabilities: { prompt_injection: Number.NaN } };
        if (p.id === 'p2') return { prompt_injection: 1.5 };
        if (p.id === 'p3') return { safe: 0.2 };
        return { probabilities: { prompt_injection: v, safe: 1 - v }, raw: { prompt_injection: logitOf(v) } };
      },
    });
    const composite = compose(trio({ injection: bad }));
    const results = await composite.score(QUERY, passages.slice(0, 6));
    passages.slice(0, 6).forEach((p, i) => {
      const without = i < 4 ? ['injection'] : [];
      expect(results[i]?.probabilities).toEqual(expectedSignals(QUERY, p, without));
    });
    expect(composite.stats().members[2].unusablePairs).toBe(4);
  });

  it('when every member fails, the call rejects: the first error, or a deadline error when all ran out of time', async () => {
    const boom = (id: string, labels: readonly string[]) =>
      fakeMember(id, labels, {
        before: () => {
          throw new Error(`${id} failed`);
        },
      });
    const failing = compose({
      relevance: boom('rel-model', [RELEVANT]),
      nli: boom('nli-model', NLI_LABELS),
      injection: boom('inj-model', INJECTION_LABELS),
    });
    await expect(failing.score(QUERY, passages)).rejects.toThrow('rel-model failed');
    const gate = createGate({ scorer: failing, policy: { rules: DEFAULT_ROUTING_RULES } });
    const r = await gate.filter(QUERY, passages);
    expect(r.excluded.every((i) => i.reason === 'scorer-error')).toBe(true);
    expect(r.errors.join(' ')).toMatch(/rel-model failed/);

    const slow = (id: string, labels: readonly string[]) => fakeMember(id, labels, { before: () => sleep(200) });
    const late = compose({
      relevance: slow('rel-model', [RELEVANT]),
      nli: slow('nli-model', NLI_LABELS),
      injection: slow('inj-model', INJECTION_LABELS),
    });
    await expect(late.score(QUERY, passages, { deadline: Date.now() + 40 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    await expect(late.score(QUERY, passages, { deadline: Date.now() + 1 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
  });

  it("the caller's abort rejects the call with AbortedError and aborts every member's signal", async () => {
    const seen: AbortSignal[] = [];
    const waiting = (id: string, labels: readonly string[]) =>
      fakeMember(id, labels, {
        before: (call) => {
          if (call.options?.signal !== undefined) seen.push(call.options.signal);
          return sleep(100);
        },
      });
    const composite = compose({
      relevance: waiting('rel-model', [RELEVANT]),
      nli: waiting('nli-model', NLI_LABELS),
      injection: waiting('inj-model', INJECTION_LABELS),
    });
    const controller = new AbortController();
    const pending = composite.score(QUERY, passages, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user left')), 10);
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(seen).toHaveLength(3);
    expect(seen.every((s) => s.aborted)).toBe(true);
    await expect(composite.score(QUERY, passages, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      AbortedError,
    );
  });

  it('validates its input', async () => {
    const composite = compose(trio());
    await expect(composite.score(QUERY, 'x' as unknown as Passage[])).rejects.toThrow(/array/);
    await expect(composite.score(QUERY, [{ id: 'a' } as Passage])).rejects.toThrow(/passages\[0\]/);
    await expect(composite.score(QUERY, passagesOf(['a']), { budgetMs: 5 } as never)).rejects.toThrow(/budgetMs/);
    expect(await composite.score(QUERY, [])).toEqual([]);
  });
});

describe('createCompositeScorer: requests never mix', () => {
  it('concurrent calls with different queries and passages each get exactly their own solo answers', async () => {
    // Members answer after a delay that depends on the call, so calls finish out of order.
    const jitter = (call: { query: string }): Promise<void> => sleep(call.query.length % 7);
    const make = (): CompositeScorer =>
      compose({
        relevance: fakeMember('rel-model', [RELEVANT], { before: jitter }),
        nli: fakeMember('nli-model', NLI_LABELS, { before: (c) => sleep((c.query.length * 3) % 11) }),
        injection: fakeMember('inj-model', INJECTION_LABELS, { before: jitter }),
      });
    const requests = Array.from({ length: 12 }, (_, r) => ({
      query: `query ${r} ${'x'.repeat(r)}`,
      passages: passagesOf(TEXTS.slice(r, r + 5 + (r % 4)), `q${r}-`),
    }));
    const concurrent = make();
    const together = await Promise.all(requests.map((q) => concurrent.score(q.query, q.passages)));
    const solo = make();
    for (const [r, q] of requests.entries()) {
      const alone = await solo.score(q.query, q.passages);
      expect(together[r]).toEqual(alone);
      for (const [i, p] of q.passages.entries()) expect(alone[i]?.probabilities).toEqual(expectedSignals(q.query, p));
    }
  });

  it('hands out fresh objects: changing one result changes no other call', async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const composite = compose(trio(), { cache });
    const passages = passagesOf(TEXTS.slice(0, 3));
    const first = await composite.score(QUERY, passages);
    (first[0]?.probabilities as Record<string, number>)[RELEVANT] = 0.123;
    const second = await composite.score(QUERY, passages);
    expect(second[0]?.probabilities[RELEVANT]).toBe(fakeValue('rel-model', QUERY, passages[0], RELEVANT));
    expect(isDetailedPairScore(second[0] ?? null)).toBe(true);
  });
});

describe('createCompositeScorer: per-member cache', () => {
  const passages = passagesOf(TEXTS.slice(0, 10));

  it('a second call calls no member; each member is stored under its own scorer id, with its own labels', async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const t = trio();
    const composite = compose(t, { cache });
    const first = await composite.score(QUERY, passages);
    const second = await composite.score(QUERY, passages);
    expect(second).toEqual(first);
    for (const m of [t.relevance, t.nli, t.injection]) expect(m.calls).toHaveLength(1);
    expect(composite.stats().members.map((m) => [m.calls, m.cacheHits])).toEqual([
      [1, passages.length],
      [1, passages.length],
      [1, passages.length],
    ]);
    // The cache's default requiredSignals is ['relevant']: a lookup names the NLI labels it needs.
    expect(cache.lookup({ scorerId: 'nli-model', query: QUERY, passages })).toEqual(passages.map(() => undefined));
    const stored = cache.lookup({ scorerId: 'nli-model', query: QUERY, passages, requiredSignals: ['ENTAILMENT'] });
    stored.forEach((entry, i) => {
      expect(entry).toMatchObject({
        probabilities: {
          CONTRADICTION: fakeValue('nli-model', QUERY, passages[i], 'CONTRADICTION'),
          NEUTRAL: fakeValue('nli-model', QUERY, passages[i], 'NEUTRAL'),
          ENTAILMENT: fakeValue('nli-model', QUERY, passages[i], 'ENTAILMENT'),
        },
        tier: 'fake-nli-model',
      });
    });
    // Through the gate (cache on the composite, not the gate): same routes, no member called.
    const gate = createGate({ scorer: composite, policy: { rules: DEFAULT_ROUTING_RULES } });
    const r = await gate.filter(QUERY, passages);
    for (const item of [...r.included, ...r.conflicting, ...r.excluded])
      expect({ route: item.route, rule: item.rule }).toEqual(
        expectedDefaultDecision(expectedSignals(QUERY, item.passage)),
      );
    for (const m of [t.relevance, t.nli, t.injection]) expect(m.calls).toHaveLength(1);
  });

  it('adding a fourth member leaves the other three cached: only the new member is called', async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const t = trio();
    await compose(t, { cache }).score(QUERY, passages);
    const toxicity = fakeMember('tox-model', ['toxic', 'clean']);
    const four = createCompositeScorer({
      members: [
        { scorer: t.relevance, signals: { [RELEVANT]: RELEVANT }, id: 'relevance' },
        { scorer: t.nli, signals: { [EVIDENCE]: 'ENTAILMENT', [CONTRADICTS_PREMISE]: 'CONTRADICTION' }, id: 'nli' },
        { scorer: t.injection, signals: { [INJECTION]: 'prompt_injection' }, id: 'injection' },
        { scorer: toxicity, signals: { toxicity: 'toxic' }, id: 'toxicity' },
      ],
      cache,
    });
    expect(four.id).not.toBe(compose(t).id);
    const results = await four.score(QUERY, passages);
    for (const m of [t.relevance, t.nli, t.injection]) expect(m.calls).toHaveLength(1);
    expect(toxicity.calls).toHaveLength(1);
    for (const [i, p] of passages.entries())
      expect(results[i]?.probabilities).toEqual({
        ...expectedSignals(QUERY, p),
        toxicity: fakeValue('tox-model', QUERY, p, 'toxic'),
      });
    expect(four.stats().members.map((m) => m.cacheHits)).toEqual([
      passages.length,
      passages.length,
      passages.length,
      0,
    ]);
  });

  it('a member is called only for its misses; a failed member is not cached and is asked again', async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    let nliDown = true;
    const t = trio({
      nli: fakeMember('nli-model', NLI_LABELS, {
        before: () => {
          if (nliDown) throw new Error('nli unavailable');
        },
      }),
    });
    const composite = compose(t, { cache });
    const first = await composite.score(QUERY, passages.slice(0, 6));
    expect(first.every((r) => r !== null && !(EVIDENCE in r.probabilities))).toBe(true);
    nliDown = false;
    const second = await composite.score(QUERY, passages);
    expect(t.relevance.calls.map((c) => c.ids)).toEqual([
      passages.slice(0, 6).map((p) => p.id),
      passages.slice(6).map((p) => p.id),
    ]);
    expect(t.nli.calls.map((c) => c.ids)).toEqual([passages.slice(0, 6).map((p) => p.id), passages.map((p) => p.id)]);
    for (const [i, p] of passages.entries()) expect(second[i]?.probabilities).toEqual(expectedSignals(QUERY, p));
  });

  it("with the cache's default requiredSignals (['relevant']) every member's entries are kept (each asks for its own labels)", async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const t = trio();
    const composite = compose(t, { cache });
    await composite.score(QUERY, passages);
    const second = await composite.score(QUERY, passages);
    expect(t.relevance.calls).toHaveLength(1);
    expect(t.nli.calls).toHaveLength(1);
    expect(t.injection.calls).toHaveLength(1);
    expect(cache.stats().uncacheable).toBe(0);
    for (const [i, p] of passages.entries()) expect(second[i]?.probabilities).toEqual(expectedSignals(QUERY, p));
  });
});

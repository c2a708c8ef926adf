/**
 * Replay: under the logged policy it reproduces the live decisions exactly; under another policy
 * it equals a fresh gate run over the stored signals; what moved, empty answers, and precision /
 * recall with judgments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDecisionLog,
  createReplayer,
  type DecisionLogModel,
  type DecisionRecord,
  parseJudgments,
  type PolicyRecord,
  readDecisionLog,
  replayDecisionLog,
  replayDecisions,
  ReplayError,
} from '../../src/decision-log/index.js';
import { mergePolicy } from '../../src/gate/policy.js';
import {
  createGate,
  type GatePolicy,
  type GateResult,
  loadFastPathScorer,
  type Passage,
  type Scorer,
} from '../../src/index.js';
import { requests, signalScorer, storedSignalsScorer, tempDir } from './helpers.js';

interface Logged {
  readonly dir: string;
  readonly live: Map<string, GateResult<Passage>>;
  readonly decisions: readonly DecisionRecord[];
  readonly policies: ReadonlyMap<string, PolicyRecord>;
}

const dirs: Array<() => void> = [];
afterAll(() => {
  for (const d of dirs) d();
});

const RULES_POLICY: GatePolicy = {
  rules: [
    { name: 'contradicted', when: { signal: 'contradiction', op: '>', value: 0.4 }, route: 'conflicting' },
    {
      name: 'weak-evidence',
      when: { signal: 'evidence', op: '<', value: 0.1 },
      route: 'excluded',
      fallbackEligible: true,
    },
    { name: 'relevant', when: { signal: 'relevant', op: '>=', value: 'threshold' }, route: 'included' },
  ],
  threshold: 0.55,
  minKept: 2,
  maxKept: 6,
};

/** Runs `count` requests through a gate and logs them all; per-call overrides on every third. */
async function logRun(scorer: Scorer, policy: GatePolicy, count: number, override?: GatePolicy): Promise<Logged> {
  const t = tempDir();
  dirs.push(t.remove);
  const gate = createGate({ scorer, policy });
  const model: DecisionLogModel = { name: 'model-under-test', scorer, policy };
  const log = createDecisionLog({ dir: t.dir, maxFileBytes: 32 * 1024 });
  const live = new Map<string, GateResult<Passage>>();
  for (const [i, r] of requests(count, 12).entries()) {
    const callPolicy = override !== undefined && i % 3 === 0 ? override : undefined;
    const result = await gate.filter(r.query, r.passages, callPolicy === undefined ? {} : { policy: callPolicy });
    const requestId = `req-${i}`;
    live.set(requestId, result);
    log.record({ requestId, model, result, ...(callPolicy === undefined ? {} : { override: callPolicy }) });
  }
  await log.close();
  expect(log.stats().written).toBe(count);
  const { decisions, policies } = await readDecisionLog(t.dir);
  return { dir: t.dir, live, decisions, policies };
}

function decisionsOf(result: GateResult<Passage>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const list of [result.included, result.conflicting, result.excluded])
    for (const item of list) out[item.id] = `${item.route}/${item.rule}`;
  return out;
}

/** A fresh gate over the stored signals, with the replay policy merged as replay merges it. */
async function freshRun(record: DecisionRecord, logged: PolicyRecord, replayPolicy: GatePolicy, query: string) {
  const scorer = storedSignalsScorer(record, {
    id: logged.scorer.id,
    ...(logged.scorer.signals === null ? {} : { signals: logged.scorer.signals }),
    ...(logged.scorer.decisions === null ? {} : { decisions: logged.scorer.decisions }),
  });
  const gate = createGate({ scorer, policy: mergePolicy(logged.policy, replayPolicy) });
  const passages = record.passages.map((p) => ({ id: p.id, text: `stored ${p.hash}` }));
  return gate.filter(query, passages, {
    ...(record.override === null ? {} : { policy: record.override }),
    ...(record.queryClass === null ? {} : { queryClass: record.queryClass }),
  });
}

const scenarios: Array<{ name: string; setup: () => Promise<Logged>; other: GatePolicy }> = [
  {
    name: 'multi-signal rules, minKept / maxKept, per-call overrides',
    setup: () => logRun(signalScorer(), RULES_POLICY, 24, { maxKept: 2, threshold: 0.4 }),
    other: {
      threshold: 0.35,
      maxKept: null,
      thresholdByQueryLength: [
        { maxWords: 8, threshold: 0.7 },
        { maxWords: 100, threshold: 0.3 },
      ],
    },
  },
  {
    name: "the shipped fast path's operating point (ranked cut, sufficiency verdict)",
    setup: async () => logRun(await loadFastPathScorer(), {}, 24),
    other: { mode: 'related' },
  },
  {
    name: 'the fast path in threshold mode, calibrated score',
    setup: async () => logRun(await loadFastPathScorer(), { mode: 'threshold', threshold: 0.3 }, 16),
    other: { mode: 'precise' },
  },
];

describe.each(scenarios)('replay: $name', ({ setup, other }) => {
  let logged: Logged;
  beforeAll(async () => {
    logged = await setup();
  });

  it('under the logged policy reproduces every live decision exactly', () => {
    const report = replayDecisions(logged.decisions, logged.policies);
    expect(report.requests).toBe(logged.live.size);
    expect(report.moves).toEqual([]);
    for (const [i, record] of logged.decisions.entries()) {
      const live = logged.live.get(record.requestId) as GateResult<Passage>;
      expect(report.perRequest[i]).toMatchObject({
        requestId: record.requestId,
        includedBefore: live.included.length,
        includedAfter: live.included.length,
        moved: 0,
      });
      const byId = Object.fromEntries(record.passages.map((p) => [p.id, `${p.route}/${p.rule}`]));
      expect(byId).toEqual(decisionsOf(live));
    }
    expect(report.emptyAnswers.before).toBe(report.emptyAnswers.after);
  });

  it('under another policy equals a fresh gate run over the stored signals', async () => {
    const report = replayDecisions(logged.decisions, logged.policies, { policy: other });
    let moved = 0;
    for (const [i, record] of logged.decisions.entries()) {
      const live = logged.live.get(record.requestId) as GateResult<Passage>;
      const fresh = await freshRun(record, logged.policies.get(record.policyHash) as PolicyRecord, other, live.query);
      expect(report.perRequest[i].includedAfter).toBe(fresh.included.length);
      expect(report.perRequest[i].includedBefore).toBe(live.included.length);
      moved += report.perRequest[i].moved;
      // Same route and rule per passage, the same returned order.
      const replayed = createReplayer(logged.policies, { policy: other }).reroute(record);
      expect(decisionsOf(replayed)).toEqual(decisionsOf(fresh));
      expect(replayed.included.map((item) => item.id)).toEqual(fresh.included.map((item) => item.id));
    }
    expect(moved).toBeGreaterThan(0);
    expect(report.moves.reduce((s, m) => s + m.count, 0)).toBe(moved);
  });
});

describe('replay details', () => {
  it('re-decides each pair as a fresh run does (route and rule per passage, returned order)', async () => {
    const logged = await logRun(signalScorer(), RULES_POLICY, 10);
    const other: GatePolicy = { threshold: 0.3, minKept: 0 };
    const replayer = createReplayer(logged.policies, { policy: other });
    for (const record of logged.decisions) {
      const live = logged.live.get(record.requestId) as GateResult<Passage>;
      const replayed = replayer.reroute(record);
      const fresh = await freshRun(record, logged.policies.get(record.policyHash) as PolicyRecord, other, live.query);
      expect(decisionsOf(replayed)).toEqual(decisionsOf(fresh));
      expect(replayed.included.map((i) => i.id)).toEqual(fresh.included.map((i) => i.id));
    }
  });

  it('reports moves per rule, empty answers, and precision / recall with judgments', async () => {
    const logged = await logRun(signalScorer(), { threshold: 0.5 }, 12);
    const qrels = logged.decisions
      .map((d, i) => `${d.requestId}\t${d.passages[i % d.passages.length].id}\t1`)
      .join('\n');
    const judgments = parseJudgments(`query-id\tcorpus-id\tscore\n${qrels}`);
    const report = await replayDecisionLog(logged.dir, { policy: { threshold: 1 }, judgments });
    expect(report.files).toBeGreaterThanOrEqual(1);
    expect(report.routes.after.included).toBe(0);
    expect(report.emptyAnswers.after).toBe(12);
    expect(
      report.moves.every((m) => m.from === 'included' && m.to === 'excluded' && m.ruleAfter === 'below-threshold'),
    ).toBe(true);
    expect(report.judged?.before.requests).toBe(12);
    expect(report.judged?.after.recall).toBe(0);
    expect(report.judged?.before.relevant).toBe(12);
    const threshold = report.rules.find((r) => r.rule === 'threshold');
    expect(threshold?.before).toBe(report.routes.before.included);
    expect(threshold?.after).toBe(0);
  });

  it('refuses to replay a logged function unless the replay policy replaces it', async () => {
    const scorer = signalScorer();
    const policy: GatePolicy = { thresholdFn: () => 0.5 };
    const t = tempDir();
    dirs.push(t.remove);
    const log = createDecisionLog({ dir: t.dir });
    const r = requests(1)[0];
    log.record({
      requestId: 'f',
      model: { name: 'f', scorer, policy },
      result: await createGate({ scorer, policy }).filter(r.query, r.passages),
    });
    await log.close();
    const { decisions, policies } = await readDecisionLog(t.dir);
    expect(() => replayDecisions(decisions, policies)).toThrow(ReplayError);
    expect(replayDecisions(decisions, policies, { policy: { thresholdFn: null, threshold: 0.5 } }).requests).toBe(1);
  });
});

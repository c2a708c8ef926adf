/**
 * Replay: re-decides logged requests from their stored signals alone (no scorer is called) with
 * the gate's own decision code: each record becomes a GateResult again and goes through
 * `gate.reroute` of a gate built over a stand-in scorer that declares what the logged scorer
 * declared (id, signals, operating points). The policy is the logged model policy with the replay
 * policy merged over it (`null` unsets a field), then the request's own override, exactly as the
 * live call merged them; so replay under no new policy reproduces the live decisions.
 */
import { createGate } from '../gate/gate.js';
import { mergePolicy } from '../gate/policy.js';
import type { Gate, GateItem, GatePolicy, GateResult, Route } from '../gate/types.js';
import type { Passage, Scorer } from '../types.js';
import { ReplayError } from './errors.js';
import { FUNCTION_MARKER, policyHashOf } from './hash.js';
import type { Judgments } from './qrels.js';
import type { DecisionRecord, PolicyRecord } from './types.js';

const ROUTES: readonly Route[] = ['included', 'conflicting', 'excluded'];

export interface ReplayOptions {
  /** Merged over each logged model policy (`null` unsets). Absent: the logged policies as they were. */
  readonly policy?: GatePolicy;
  /** 'logged' (default): the replay policy is merged over the logged one; 'none': it replaces it. */
  readonly base?: 'logged' | 'none';
  /** Judgments (readJudgments) for precision and recall before and after. */
  readonly judgments?: Judgments;
  /**
   * 'logged' (default): each request's own signals. 'shadow': the requests a shadow model also
   * decided, re-decided from the shadow's signals under the shadow's logged policy (with `policy`
   * merged over it): what the shadow would have answered, against what the live model answered.
   */
  readonly signals?: 'logged' | 'shadow';
}

export interface ReplayRequest {
  readonly requestId: string;
  readonly model: string;
  readonly includedBefore: number;
  readonly includedAfter: number;
  readonly conflictingBefore: number;
  readonly conflictingAfter: number;
  /** Pairs whose route changed. */
  readonly moved: number;
}

export interface RouteCounts {
  readonly included: number;
  readonly conflicting: number;
  readonly excluded: number;
}

export interface ReplayMove {
  readonly from: Route;
  readonly to: Route;
  /** The rule that decided the pair in the log, and under the replay policy. */
  readonly ruleBefore: string;
  readonly ruleAfter: string;
  readonly count: number;
}

export interface RuleCounts {
  readonly rule: string;
  /** Pairs this rule decided in the log / under the replay policy, and how many of them it excluded. */
  readonly before: number;
  readonly after: number;
  readonly excludedBefore: number;
  readonly excludedAfter: number;
}

export interface RetrievalFigures {
  /** Judged requests (a request with judgments, matched by requestId or queryHash). */
  readonly requests: number;
  readonly kept: number;
  readonly relevantKept: number;
  /** Relevant judged passages among the logged candidates. */
  readonly relevant: number;
  /** relevantKept / kept (micro); null when nothing was kept. */
  readonly precision: number | null;
  /** relevantKept / relevant (micro); null when nothing relevant was judged. */
  readonly recall: number | null;
}

export interface ReplayReport {
  readonly requests: number;
  readonly pairs: number;
  /** In log order. */
  readonly perRequest: readonly ReplayRequest[];
  readonly routes: { readonly before: RouteCounts; readonly after: RouteCounts };
  /** Pairs that changed route, grouped by (from, to, rule before, rule after); most first. */
  readonly moves: readonly ReplayMove[];
  readonly rules: readonly RuleCounts[];
  /** Requests with nothing included. */
  readonly emptyAnswers: { readonly before: number; readonly after: number };
  /** The hash of the replay policy (as the log hashes policies); null without one. */
  readonly policyHash: string | null;
  readonly judged?: { readonly before: RetrievalFigures; readonly after: RetrievalFigures };
  /** Where a shadow model's logged decisions differ from the live ones (present when the log has any). */
  readonly shadow?: ShadowDisagreement;
}

export interface ShadowDisagreement {
  /** Live requests a shadow decided too, and their pairs. */
  readonly requests: number;
  readonly pairs: number;
  /** Pairs the shadow routed otherwise than the live model. */
  readonly disagreements: number;
  /** By (live route, shadow route, live rule, shadow rule), most first. */
  readonly moves: readonly ReplayMove[];
}

/** Any FUNCTION_MARKER left in a policy (a logged function the replay policy did not replace). */
function markedField(value: unknown, path: string): string | undefined {
  if (value === FUNCTION_MARKER) return path;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, v] of Object.entries(value)) {
    const found = markedField(v, path === '' ? key : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A query of `words` words: what query-length thresholds read when the query text was not logged. */
function stubQuery(record: DecisionRecord): string {
  if (record.query !== undefined) return record.query;
  return record.queryWords === 0 ? ' ' : Array.from({ length: record.queryWords }, () => 'w').join(' ');
}

/** The logged request as a GateResult of the gate (passages carry only id and, when logged, text). */
export function resultOfRecord(record: DecisionRecord): GateResult<Passage> {
  const groups: Record<Route, GateItem<Passage>[]> = { included: [], conflicting: [], excluded: [] };
  for (const p of record.passages) {
    groups[p.route].push({
      id: p.id,
      route: p.route,
      rule: p.rule,
      reason: p.reason ?? undefined,
      signals: p.signals,
      raw: p.raw ?? undefined,
      tier: p.tier ?? undefined,
      relevance: p.relevance,
      score: p.score,
      cached: p.cached,
      rank: p.rank,
      passage: { id: p.id, text: p.text ?? '' },
    });
  }
  return {
    query: stubQuery(record),
    queryClass: record.queryClass ?? undefined,
    included: groups.included,
    conflicting: groups.conflicting,
    excluded: groups.excluded,
    // Reroute recomputes stats; these are the logged figures for a caller that reads them.
    stats: {
      retrieved: record.passages.length,
      scored: record.passages.filter((p) => p.signals !== null && p.reason === null).length,
      cacheHits: record.passages.filter((p) => p.cached).length,
      approximateHits: record.passages.filter((p) => p.cached === 'approximate').length,
      passed: 0,
      returned: groups.included.length,
      conflicting: groups.conflicting.length,
      excluded: groups.excluded.length,
      skippedByEarlyStop: record.passages.filter((p) => p.signals === null && p.reason === null).length,
      unscored: record.passages.filter((p) => p.reason !== null).length,
      failedOpen: record.passages.filter((p) => p.rule === 'fail-open').length,
      unscoredByReason: {},
      meanRelevance: null,
      minRelevance: null,
      maxRelevance: null,
      fallbackTriggered: record.fallbackTriggered,
      insufficientContext: record.insufficientContext,
      threshold: record.threshold,
      rankingCut: record.rankingCut,
      sufficiency: record.sufficiency,
    },
    tier: { scorer: record.scorerId, name: 'logged', counts: record.tiers },
    timings: { scoringMs: record.timings.scoringMs, totalMs: record.timings.totalMs },
    errors: [],
  };
}

/** A scorer that declares what the logged one declared and refuses to score: replay never scores. */
function standInScorer(policy: PolicyRecord): Scorer {
  return {
    id: policy.scorer.id,
    ...(policy.scorer.signals === null ? {} : { signals: policy.scorer.signals }),
    ...(policy.scorer.decisions === null ? {} : { decisions: policy.scorer.decisions }),
    score: () => Promise.reject(new ReplayError('replay re-decides stored signals; it never scores')),
  };
}

/** Re-decides logged requests; build one with `createReplayer` to reuse its gates across records. */
export interface Replayer {
  /** The request re-decided under the replay policy (the gate's own reroute). */
  reroute(record: DecisionRecord): GateResult<Passage>;
}

export function createReplayer(
  policies: ReadonlyMap<string, PolicyRecord>,
  options: Pick<ReplayOptions, 'policy' | 'base'> = {},
): Replayer {
  const gates = new Map<string, Gate>();
  const gateFor = (record: DecisionRecord): Gate => {
    let gate = gates.get(record.policyHash);
    if (gate !== undefined) return gate;
    const logged = policies.get(record.policyHash);
    if (logged === undefined)
      throw new ReplayError(
        `request ${JSON.stringify(record.requestId)}: its policy ${record.policyHash} is not in the log (a file missing?)`,
      );
    const base = options.base === 'none' ? {} : logged.policy;
    const policy = options.policy === undefined ? base : mergePolicy(base, options.policy);
    const marked = markedField(policy, '');
    if (marked !== undefined)
      throw new ReplayError(
        `model ${JSON.stringify(logged.model)}: the logged policy's ${marked} was a function, which a log cannot hold; give a replay policy that sets it (or null)`,
      );
    gate = createGate({ scorer: standInScorer(logged), policy });
    gates.set(record.policyHash, gate);
    return gate;
  };
  return {
    reroute(record) {
      const override = record.override ?? undefined;
      const marked = override === undefined ? undefined : markedField(override, '');
      if (marked !== undefined)
        throw new ReplayError(
          `request ${JSON.stringify(record.requestId)}: its policy override's ${marked} was a function`,
        );
      return gateFor(record).reroute(resultOfRecord(record), override, {
        ...(record.queryClass === null ? {} : { queryClass: record.queryClass }),
      });
    },
  };
}

function emptyRoutes(): Record<Route, number> {
  return { included: 0, conflicting: 0, excluded: 0 };
}

class FigureCounter {
  requests = 0;
  kept = 0;
  relevantKept = 0;
  relevant = 0;

  add(included: readonly string[], judged: ReadonlyMap<string, number>, candidates: readonly string[]): void {
    this.requests++;
    this.kept += included.length;
    for (const id of included) if ((judged.get(id) ?? 0) > 0) this.relevantKept++;
    for (const id of candidates) if ((judged.get(id) ?? 0) > 0) this.relevant++;
  }

  figures(): RetrievalFigures {
    return {
      requests: this.requests,
      kept: this.kept,
      relevantKept: this.relevantKept,
      relevant: this.relevant,
      precision: this.kept === 0 ? null : this.relevantKept / this.kept,
      recall: this.relevant === 0 ? null : this.relevantKept / this.relevant,
    };
  }
}

/** Counts pairs that changed route between two decisions of the same passages, by (from, to, rules). */
class MoveCounter {
  private readonly moves = new Map<string, ReplayMove>();
  total = 0;

  add(from: Route, to: Route, ruleBefore: string, ruleAfter: string): void {
    if (from === to) return;
    this.total++;
    const key = `${from}\u0000${to}\u0000${ruleBefore}\u0000${ruleAfter}`;
    const m = this.moves.get(key);
    this.moves.set(key, { from, to, ruleBefore, ruleAfter, count: (m?.count ?? 0) + 1 });
  }

  list(): ReplayMove[] {
    return [...this.moves.values()].sort((a, b) => b.count - a.count);
  }
}

/** The last shadow record of each live request id. */
function shadowsOf(decisions: readonly DecisionRecord[]): Map<string, DecisionRecord> {
  const out = new Map<string, DecisionRecord>();
  for (const d of decisions) if (d.shadowOf !== undefined) out.set(d.shadowOf, d);
  return out;
}

/** The shadow's logged decisions against the live ones. */
function shadowDisagreement(
  live: readonly DecisionRecord[],
  shadows: ReadonlyMap<string, DecisionRecord>,
): ShadowDisagreement {
  const moves = new MoveCounter();
  let requests = 0;
  let pairs = 0;
  for (const record of live) {
    const shadow = shadows.get(record.requestId);
    if (shadow === undefined) continue;
    requests++;
    const byId = new Map(shadow.passages.map((p) => [p.id, p]));
    for (const p of record.passages) {
      const s = byId.get(p.id);
      if (s === undefined) continue;
      pairs++;
      moves.add(p.route, s.route, p.rule, s.rule);
    }
  }
  return { requests, pairs, disagreements: moves.total, moves: moves.list() };
}

/**
 * The live record with the shadow's signals (and its policy, scorer and tiers), its live routes
 * kept as the "before": re-deciding it gives what the shadow would have answered.
 */
function withShadowSignals(record: DecisionRecord, shadow: DecisionRecord): DecisionRecord {
  const byId = new Map(shadow.passages.map((p) => [p.id, p]));
  return {
    ...record,
    policyHash: shadow.policyHash,
    scorerId: shadow.scorerId,
    tiers: shadow.tiers,
    passages: record.passages.map((p) => {
      const s = byId.get(p.id);
      return s === undefined
        ? { ...p, signals: null, raw: null, tier: null, reason: 'scorer-null' as const }
        : { ...p, signals: s.signals, raw: s.raw, tier: s.tier, reason: s.reason, cached: s.cached };
    }),
  };
}

/** Re-decides every logged request and reports what changed (docs/decision-log.md, "Replay"). */
export function replayDecisions(
  decisions: readonly DecisionRecord[],
  policies: ReadonlyMap<string, PolicyRecord>,
  options: ReplayOptions = {},
): ReplayReport {
  const replayer = createReplayer(policies, options);
  const before = emptyRoutes();
  const after = emptyRoutes();
  const moves = new MoveCounter();
  const live = decisions.filter((d) => d.shadowOf === undefined);
  const shadows = shadowsOf(decisions);
  const replayed =
    options.signals === 'shadow'
      ? live.flatMap((d) => {
          const shadow = shadows.get(d.requestId);
          return shadow === undefined ? [] : [withShadowSignals(d, shadow)];
        })
      : live;
  const rules = new Map<string, { before: number; after: number; excludedBefore: number; excludedAfter: number }>();
  const ruleRow = (rule: string) => {
    let row = rules.get(rule);
    if (row === undefined) {
      row = { before: 0, after: 0, excludedBefore: 0, excludedAfter: 0 };
      rules.set(rule, row);
    }
    return row;
  };
  const perRequest: ReplayRequest[] = [];
  let pairs = 0;
  let emptyBefore = 0;
  let emptyAfter = 0;
  const judgedBefore = new FigureCounter();
  const judgedAfter = new FigureCounter();
  for (const record of replayed) {
    const result = replayer.reroute(record);
    const afterById = new Map<string, GateItem<Passage>>();
    for (const route of ROUTES) for (const item of result[route]) afterById.set(item.id, item);
    const counts = { before: emptyRoutes(), after: emptyRoutes() };
    let moved = 0;
    for (const p of record.passages) {
      const now = afterById.get(p.id) as GateItem<Passage>;
      counts.before[p.route]++;
      counts.after[now.route]++;
      const rb = ruleRow(p.rule);
      rb.before++;
      if (p.route === 'excluded') rb.excludedBefore++;
      const ra = ruleRow(now.rule);
      ra.after++;
      if (now.route === 'excluded') ra.excludedAfter++;
      if (now.route !== p.route) moved++;
      moves.add(p.route, now.route, p.rule, now.rule);
    }
    pairs += record.passages.length;
    for (const route of ROUTES) {
      before[route] += counts.before[route];
      after[route] += counts.after[route];
    }
    if (counts.before.included === 0) emptyBefore++;
    if (counts.after.included === 0) emptyAfter++;
    perRequest.push({
      requestId: record.requestId,
      model: record.model,
      includedBefore: counts.before.included,
      includedAfter: counts.after.included,
      conflictingBefore: counts.before.conflicting,
      conflictingAfter: counts.after.conflicting,
      moved,
    });
    const judged = options.judgments?.get(record.requestId) ?? options.judgments?.get(record.queryHash);
    if (judged !== undefined) {
      const candidates = record.passages.map((p) => p.id);
      judgedBefore.add(
        record.passages.filter((p) => p.route === 'included').map((p) => p.id),
        judged,
        candidates,
      );
      judgedAfter.add(
        result.included.map((item) => item.id),
        judged,
        candidates,
      );
    }
  }
  return {
    requests: replayed.length,
    pairs,
    perRequest,
    routes: { before, after },
    moves: moves.list(),
    rules: [...rules].map(([rule, row]) => ({ rule, ...row })).sort((a, b) => a.rule.localeCompare(b.rule)),
    emptyAnswers: { before: emptyBefore, after: emptyAfter },
    policyHash: options.policy === undefined ? null : policyHashOf(options.policy),
    ...(options.judgments === undefined
      ? {}
      : { judged: { before: judgedBefore.figures(), after: judgedAfter.figures() } }),
    ...(shadows.size === 0 ? {} : { shadow: shadowDisagreement(live, shadows) }),
  };
}

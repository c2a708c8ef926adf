/**
 * Prometheus metrics of the server (prom-client, one Registry per server so several servers in a
 * process never share counters). Names follow the Prometheus conventions: `relevance_gate_`
 * prefix, base units (`_seconds`), `_total` on counters. Figures the tiers keep themselves
 * (cross-encoder batches, queue depth) are read when Prometheus scrapes, not on the hot path.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Counter, Gauge, Histogram, Metric, Registry } from 'prom-client';
import type { DecisionLogStats, DriftSnapshot } from '../decision-log/index.js';
import type { CrossEncoderStats, GateResult, ScoreCacheStats } from '../index.js';
import { heldHeapHeadroomMb } from '../util/heap-headroom.js';
import { DriftMetrics } from './drift-metrics.js';
import type { ShadowStats } from './shadow.js';

export const METRIC_PREFIX = 'relevance_gate_';
/** Millisecond-range buckets (seconds): the budget is ~100 ms, so resolution matters below it. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5,
];

/** What the metrics read from a model when scraped. */
export interface ModelMetricsSource {
  readonly name: string;
  inFlightPairs(): number;
  ready(): boolean;
  /** Cross-encoder tiers behind this model (by tier model name), for queue and batch figures. */
  crossEncoders(): ReadonlyArray<{ readonly name: string; stats(): CrossEncoderStats }>;
}

export interface ServerMetrics {
  readonly registry: Registry;
  /** While true, requests and pairs are not counted (the start-up warm-up traffic). */
  paused: boolean;
  readonly contentType: string;
  observeRequest(endpoint: string, method: string, status: number, seconds: number): void;
  /** Per-pair figures of one answered request. */
  observeResult(model: string, result: GateResult, degraded: ReadonlyMap<string, number>, cacheEnabled: boolean): void;
  rejected(endpoint: string, model: string, reason: string, pairs: number): void;
  failure(endpoint: string, reason: string): void;
  inFlightRequests(delta: number): void;
  /** Per-model drift and health counts since start (docs/decision-log.md), as /metrics exports them. */
  readonly drift: { snapshots(): ReadonlyMap<string, DriftSnapshot> };
  text(): Promise<string>;
  close(): void;
}

type PromClient = typeof import('prom-client');

export function createServerMetrics(
  prom: PromClient,
  models: () => readonly ModelMetricsSource[],
  options: {
    readonly defaultMetrics?: boolean;
    /** The server's score cache counters (undefined while there is none), for the Redis (L2) figures. */
    readonly cacheStats?: () => ScoreCacheStats | undefined;
    /** The decision log's counters (undefined while there is none). */
    readonly decisionLogStats?: () => DecisionLogStats | undefined;
    /** Shadow models' counters (undefined when none is configured). */
    readonly shadowStats?: () => ShadowStats | undefined;
  } = {},
): ServerMetrics {
  const registry = new prom.Registry();
  const p = METRIC_PREFIX;
  if (options.defaultMetrics !== false) prom.collectDefaultMetrics({ register: registry, prefix: p });

  const duration: Histogram<'endpoint' | 'method' | 'status'> = new prom.Histogram({
    name: `${p}http_request_duration_seconds`,
    help: 'HTTP request duration from arrival to the last byte handed to the socket, by endpoint and status',
    labelNames: ['endpoint', 'method', 'status'],
    buckets: [...DURATION_BUCKETS_SECONDS],
    registers: [registry],
  });
  const inFlight: Gauge = new prom.Gauge({
    name: `${p}http_requests_in_flight`,
    help: 'HTTP requests being served',
    registers: [registry],
  });
  const pairs: Counter<'model' | 'tier'> = new prom.Counter({
    name: `${p}pairs_total`,
    help: 'Scored (query, document) pairs by model and the tier that answered them (cache = served from the score cache)',
    labelNames: ['model', 'tier'],
    registers: [registry],
  });
  const cacheHits: Counter<'model'> = new prom.Counter({
    name: `${p}cache_hits_total`,
    help: 'Pairs answered from the score cache',
    labelNames: ['model'],
    registers: [registry],
  });
  const cacheMisses: Counter<'model'> = new prom.Counter({
    name: `${p}cache_misses_total`,
    help: 'Pairs scored by a tier because the score cache did not have them',
    labelNames: ['model'],
    registers: [registry],
  });
  const degraded: Counter<'model' | 'reason'> = new prom.Counter({
    name: `${p}degraded_pairs_total`,
    help: 'Pairs answered below the best tier (reason: shed = not sent, deadline = not back in time, error = tier failed)',
    labelNames: ['model', 'reason'],
    registers: [registry],
  });
  const unscored: Counter<'model' | 'reason'> = new prom.Counter({
    name: `${p}unscored_pairs_total`,
    help: 'Pairs without a usable score, by reason (timeout = deadline expired, scorer-error, ...)',
    labelNames: ['model', 'reason'],
    registers: [registry],
  });
  const deadlineExpired: Counter<'model'> = new prom.Counter({
    name: `${p}deadline_expired_pairs_total`,
    help: 'Pairs whose deadline passed before any tier answered them',
    labelNames: ['model'],
    registers: [registry],
  });
  const shed: Counter<'endpoint' | 'model' | 'reason'> = new prom.Counter({
    name: `${p}shed_requests_total`,
    help: 'Requests refused before scoring (reason: overloaded = in-flight pair bound full, unavailable = loading or draining)',
    labelNames: ['endpoint', 'model', 'reason'],
    registers: [registry],
  });
  const shedPairs: Counter<'model' | 'reason'> = new prom.Counter({
    name: `${p}shed_pairs_total`,
    help: 'Pairs of requests refused before scoring',
    labelNames: ['model', 'reason'],
    registers: [registry],
  });
  const failures: Counter<'endpoint' | 'reason'> = new prom.Counter({
    name: `${p}failures_total`,
    help: 'Error responses by endpoint and reason (the error kind)',
    labelNames: ['endpoint', 'reason'],
    registers: [registry],
  });

  // Scrape-time figures.
  new prom.Gauge({
    name: `${p}in_flight_pairs`,
    help: 'Admitted pairs not answered yet, by model (the admission bound applies to this)',
    labelNames: ['model'],
    registers: [registry],
    collect() {
      for (const m of models()) this.set({ model: m.name }, m.inFlightPairs());
    },
  });
  new prom.Gauge({
    name: `${p}model_ready`,
    help: '1 once the model has loaded and can score (in a cluster: in every process)',
    labelNames: ['model'],
    registers: [registry],
    aggregator: 'min',
    collect() {
      for (const m of models()) this.set({ model: m.name }, m.ready() ? 1 : 0);
    },
  });
  const encoders = (): Array<{ name: string; stats: CrossEncoderStats }> => {
    const seen = new Map<string, CrossEncoderStats>();
    for (const m of models()) for (const ce of m.crossEncoders()) if (!seen.has(ce.name)) seen.set(ce.name, ce.stats());
    return [...seen].map(([name, stats]) => ({ name, stats }));
  };
  new prom.Gauge({
    name: `${p}queue_depth_pairs`,
    help: 'Pairs waiting at a cross-encoder tier by stage (tokenizing, queued for a batch, running)',
    labelNames: ['tier', 'stage'],
    registers: [registry],
    collect() {
      for (const { name, stats } of encoders()) {
        this.set({ tier: name, stage: 'tokenizing' }, stats.tokenizingPairs);
        this.set({ tier: name, stage: 'queued' }, stats.queuedPairs);
        this.set({ tier: name, stage: 'running' }, stats.inFlightPairs);
      }
    },
  });
  // Batch figures as monotonic totals: rate(batch_pairs_total) / rate(batches_total) is the mean batch size.
  const last = new Map<string, { batches: number; pairs: number; tokens: number; padded: number; dropped: number }>();
  const totals = (): Map<
    string,
    { batches: number; pairs: number; tokens: number; padded: number; dropped: number }
  > => {
    for (const { name, stats } of encoders())
      last.set(name, {
        batches: stats.batchesRun,
        pairs: stats.pairsRun,
        tokens: stats.tokensRun,
        padded: stats.paddedTokensRun,
        dropped: stats.pairsDropped,
      });
    return last;
  };
  const counterFromTotals = (
    name: string,
    help: string,
    pick: (t: { batches: number; pairs: number; tokens: number; padded: number; dropped: number }) => number,
  ): void => {
    const reported = new Map<string, number>();
    new prom.Counter({
      name,
      help,
      labelNames: ['tier'],
      registers: [registry],
      collect() {
        for (const [tier, t] of totals()) {
          const now = pick(t);
          const delta = now - (reported.get(tier) ?? 0);
          if (delta > 0) this.inc({ tier }, delta);
          reported.set(tier, now);
        }
      },
    });
  };
  counterFromTotals(`${p}batches_total`, 'Cross-encoder batches run', (t) => t.batches);
  counterFromTotals(
    `${p}batch_pairs_total`,
    'Pairs in cross-encoder batches run (÷ batches = batch size)',
    (t) => t.pairs,
  );
  counterFromTotals(`${p}batch_tokens_total`, 'Real tokens in cross-encoder batches run', (t) => t.tokens);
  counterFromTotals(
    `${p}batch_padded_tokens_total`,
    'Padded token positions in cross-encoder batches run (padding = this − batch_tokens)',
    (t) => t.padded,
  );
  counterFromTotals(
    `${p}batch_dropped_pairs_total`,
    'Pairs dropped by a cross-encoder before running (their request expired or was cancelled)',
    (t) => t.dropped,
  );

  registerCacheL2Metrics(prom, registry, options.cacheStats ?? (() => undefined));
  registerCacheApproximateMetrics(prom, registry, options.cacheStats ?? (() => undefined));
  const drift = new DriftMetrics();
  drift.register(registry, p, options.decisionLogStats ?? (() => undefined), options.shadowStats ?? (() => undefined));

  new prom.Gauge({
    name: `${p}heap_headroom_bytes`,
    help: 'Garbage the process keeps between major collections (heapHeadroomMb; 0: V8 sizes it; a cluster reports the smallest of its processes)',
    registers: [registry],
    aggregator: 'min',
    collect() {
      this.set(heldHeapHeadroomMb() * 1024 * 1024);
    },
  });

  const loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  new prom.Gauge({
    name: `${p}event_loop_lag_seconds`,
    help: 'Event-loop delay since the previous scrape (10 ms sampling, the sampling interval subtracted; a cluster reports the worst process)',
    labelNames: ['quantile'],
    registers: [registry],
    aggregator: 'max',
    collect() {
      const lag = (ns: number): number => Math.max(0, ns / 1e9 - 0.01);
      if (loop.count > 0) {
        this.set({ quantile: '0.5' }, lag(loop.percentile(50)));
        this.set({ quantile: '0.99' }, lag(loop.percentile(99)));
        this.set({ quantile: '1' }, lag(loop.max));
      }
      loop.reset();
    },
  });

  const metrics: ServerMetrics = {
    registry,
    paused: false,
    contentType: registry.contentType,
    observeRequest(endpoint, method, status, seconds) {
      if (metrics.paused) return;
      duration.observe({ endpoint, method, status: String(status) }, seconds);
    },
    observeResult(model, result, degradedByReason, cacheEnabled) {
      if (metrics.paused) return;
      drift.observe(model, result);
      for (const [tier, n] of Object.entries(result.tier.counts)) if (n > 0) pairs.inc({ model, tier }, n);
      if (cacheEnabled) {
        const hits = result.tier.counts.cache ?? 0;
        if (hits > 0) cacheHits.inc({ model }, hits);
        const misses = result.stats.scored - hits;
        if (misses > 0) cacheMisses.inc({ model }, misses);
      }
      for (const [reason, n] of degradedByReason) degraded.inc({ model, reason }, n);
      for (const [reason, n] of Object.entries(result.stats.unscoredByReason)) {
        if (n === undefined || n === 0) continue;
        unscored.inc({ model, reason }, n);
        if (reason === 'timeout') deadlineExpired.inc({ model }, n);
      }
    },
    rejected(endpoint, model, reason, n) {
      if (metrics.paused) return;
      shed.inc({ endpoint, model, reason });
      if (n > 0) shedPairs.inc({ model, reason }, n);
    },
    failure(endpoint, reason) {
      if (metrics.paused) return;
      failures.inc({ endpoint, reason });
    },
    inFlightRequests(delta) {
      inFlight.inc(delta);
    },
    drift,
    text: () => registry.metrics(),
    close() {
      loop.disable();
      registry.clear();
    },
  };
  return metrics;
}

type L2Total =
  | 'l2Hits'
  | 'l2Misses'
  | 'l2Errors'
  | 'l2Timeouts'
  | 'l2Skipped'
  | 'l2SkippedConnecting'
  | 'l2Invalid'
  | 'l2SignatureFailures'
  | 'l2WritesDropped'
  | 'l2Writes'
  | 'l2Prefetched'
  | 'l2Leases'
  | 'l2LeaseWaits'
  | 'l2LeaseShared'
  | 'l2LeaseTakeovers'
  | 'l2LeaseGiveUps';

type ApproximateTotal =
  | 'approximateHits'
  | 'approximateLookups'
  | 'approximateEmbedFailures'
  | 'approximateEmbedTimeouts'
  | 'approximateEvictions';

/**
 * A Prometheus counter that follows a running total the engine keeps (read at scrape time): it
 * adds what the total gained since the last scrape, so nothing is counted on the request path.
 */
function registerTotalCounter(
  prom: PromClient,
  registry: Registry,
  name: string,
  help: string,
  read: () => number | undefined,
): void {
  let reported = 0;
  new prom.Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now === undefined) return;
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}

/**
 * The approximate query cache's figures (docs/cache.md, *Approximate query cache*), read from the
 * cache's totals at scrape time like the L2's; all 0 while it is off.
 */
function registerCacheApproximateMetrics(
  prom: PromClient,
  registry: Registry,
  cacheStats: () => ScoreCacheStats | undefined,
): void {
  const p = METRIC_PREFIX;
  const total = (name: string, help: string, field: ApproximateTotal): void =>
    registerTotalCounter(prom, registry, `${p}cache_approximate_${name}_total`, help, () => cacheStats()?.[field]);
  total(
    'hits',
    "Pairs answered with a near-identical earlier query's score (cached: 'approximate')",
    'approximateHits',
  );
  total('lookups', 'Calls that looked for near-identical earlier queries', 'approximateLookups');
  total(
    'embed_failures',
    'Query embeddings that failed or were unusable (the pairs were scored)',
    'approximateEmbedFailures',
  );
  total(
    'embed_timeouts',
    'Calls that stopped waiting for the query embedding (the pairs were scored)',
    'approximateEmbedTimeouts',
  );
  total(
    'evictions',
    'Remembered queries dropped to keep the approximate index within its bounds',
    'approximateEvictions',
  );
  new prom.Gauge({
    name: `${p}cache_approximate_queries`,
    help: 'Queries the approximate index remembers (in a cluster: summed over processes)',
    registers: [registry],
    collect() {
      this.set(cacheStats()?.approximateQueries ?? 0);
    },
  });
}

/**
 * The score cache's Redis (L2) figures, read from its counters when Prometheus scrapes: nothing is
 * added to the per-pair path. Counters follow the cache's totals; the read latency is the cache's
 * own histogram, exported as a Prometheus histogram (summed over a cluster's processes).
 */
function registerCacheL2Metrics(
  prom: PromClient,
  registry: Registry,
  cacheStats: () => ScoreCacheStats | undefined,
): void {
  const p = METRIC_PREFIX;
  const total = (name: string, help: string, field: L2Total): void =>
    registerTotalCounter(prom, registry, `${p}cache_l2_${name}_total`, help, () => cacheStats()?.[field]);
  total('hits', 'Pairs served from Redis (L2), promoted to the in-process cache', 'l2Hits');
  total('misses', 'Keys read from Redis that it had no entry for (or only one older than the L2 TTL)', 'l2Misses');
  total(
    'errors',
    'Redis reads and write batches that failed, timed out or found Redis disconnected (the pairs were scored)',
    'l2Errors',
  );
  total('timeouts', 'Redis reads slower than the cache timeout (a subset of cache_l2_errors_total)', 'l2Timeouts');
  total('skipped', 'Redis reads and writes skipped: circuit breaker open or deadline too near', 'l2Skipped');
  total(
    'skipped_connecting',
    'Redis reads and writes skipped because the first connection to Redis was not up yet (start-up)',
    'l2SkippedConnecting',
  );
  total(
    'invalid_entries',
    'Values under the cache keys that were not valid entries (wrong format, out-of-range score, scored in the future): dropped and rescored',
    'l2Invalid',
  );
  total(
    'signature_failures',
    'Values under the cache keys whose signature was missing or wrong (cache signing key set): dropped and rescored',
    'l2SignatureFailures',
  );
  total('writes_dropped', 'Redis write batches dropped because too many were in flight', 'l2WritesDropped');
  total('writes', 'Pairs written to Redis (acknowledged): each one scored by this process', 'l2Writes');
  total('prefetched', 'Pairs a router read from Redis before planning (scored by another instance)', 'l2Prefetched');
  total('leases', 'Pairs this process leased in Redis to score them (other instances wait for them)', 'l2Leases');
  total('lease_waits', 'Pairs found leased by another instance: waited for its score', 'l2LeaseWaits');
  total('lease_shared', 'Of lease waits: served by the lease holder’s score, not scored here', 'l2LeaseShared');
  total(
    'lease_takeovers',
    'Of lease waits: the lease ended without a score (holder gone or failed); scored here',
    'l2LeaseTakeovers',
  );
  total('lease_give_ups', 'Of lease waits: stopped waiting (deadline, Redis failing); scored here', 'l2LeaseGiveUps');
  new prom.Gauge({
    name: `${p}cache_l2_connected`,
    help: '1 while the score cache is connected to Redis (in a cluster: in every process)',
    registers: [registry],
    aggregator: 'min',
    collect() {
      this.set(cacheStats()?.l2Connected === true ? 1 : 0);
    },
  });
  new prom.Gauge({
    name: `${p}cache_l2_signed`,
    help: '1 when Redis entries are signed and verified (RELEVANCE_GATE_CACHE_SIGNING_KEY); 0: anyone who can write to Redis controls the scores served',
    registers: [registry],
    aggregator: 'min',
    collect() {
      this.set(cacheStats()?.l2Signed === true ? 1 : 0);
    },
  });

  // A histogram whose buckets the cache keeps: exported as prom-client exports its own histograms.
  const name = `${p}cache_l2_read_duration_seconds`;
  const latency = {
    name,
    help: 'How long requests waited for their Redis (L2) read, one MGET per request (a timed-out read counts its wait)',
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const h = cacheStats()?.l2ReadLatency;
      const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
      if (h !== undefined) {
        let cumulative = 0;
        for (let b = 0; b < h.boundsSeconds.length; b++) {
          cumulative += h.counts[b];
          values.push({ labels: { le: h.boundsSeconds[b] }, value: cumulative, metricName: `${name}_bucket` });
        }
        values.push({ labels: { le: '+Inf' }, value: h.count, metricName: `${name}_bucket` });
        values.push({ labels: {}, value: h.sumSeconds, metricName: `${name}_sum` });
        values.push({ labels: {}, value: h.count, metricName: `${name}_count` });
      }
      return Promise.resolve({ name, help: latency.help, type: 'histogram', values, aggregator: 'sum' });
    },
    reset() {},
  };
  registry.registerMetric(latency as unknown as Metric);
}

/**
 * Drift and health figures in /metrics (docs/decision-log.md, "Drift and health"): per model the
 * distribution of every signal (a histogram over [0, 1]), decided requests, empty answers and
 * fallbacks, pairs by route and deciding rule; and the decision log's own counters. The request
 * path only counts into a DriftCounter (src/decision-log/drift.ts); the figures are read when
 * Prometheus scrapes, as the cache's L2 figures are. The tier mix is `relevance_gate_pairs_total`.
 */
import type { Metric, Registry } from 'prom-client';
import { DriftCounter, type DecisionLogStats, type DriftSnapshot, SIGNAL_BUCKETS } from '../decision-log/index.js';
import type { ShadowStats } from './shadow.js';

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

/** A metric whose values are computed when scraped (counters and histograms kept elsewhere). */
function scraped(
  registry: Registry,
  name: string,
  help: string,
  type: 'counter' | 'histogram' | 'gauge',
  values: () => Sample[],
): void {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get() {
      return Promise.resolve({ name, help, type, values: values(), aggregator: 'sum' });
    },
    reset() {},
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** Per-model drift counters, filled by the request path and exported at scrape time. */
export class DriftMetrics {
  private readonly counters = new Map<string, DriftCounter>();

  observe(model: string, result: Parameters<DriftCounter['observe']>[0]): void {
    let c = this.counters.get(model);
    if (c === undefined) {
      c = new DriftCounter();
      this.counters.set(model, c);
    }
    c.observe(result);
  }

  /** Every model's counts since start (for the inspector's summary and tests). */
  snapshots(): Map<string, DriftSnapshot> {
    const out = new Map<string, DriftSnapshot>();
    for (const [model, c] of this.counters) out.set(model, c.snapshot());
    return out;
  }

  register(
    registry: Registry,
    prefix: string,
    logStats: () => DecisionLogStats | undefined,
    shadowStats: () => ShadowStats | undefined,
  ): void {
    const snapshots = () => [...this.snapshots()];
    scraped(registry, `${prefix}decided_requests_total`, 'Requests the gate decided, by model', 'counter', () =>
      snapshots().map(([model, s]) => ({ labels: { model }, value: s.requests })),
    );
    scraped(
      registry,
      `${prefix}empty_answers_total`,
      'Decided requests with no passage included, by model (÷ decided_requests_total = the empty-answer rate)',
      'counter',
      () => snapshots().map(([model, s]) => ({ labels: { model }, value: s.emptyAnswers })),
    );
    scraped(
      registry,
      `${prefix}fallback_requests_total`,
      'Decided requests where fewer than minKept passed and the fallback applied, by model',
      'counter',
      () => snapshots().map(([model, s]) => ({ labels: { model }, value: s.fallbacks })),
    );
    scraped(
      registry,
      `${prefix}decided_pairs_total`,
      'Decided pairs by model, route and the rule that decided them (the excluded share per rule)',
      'counter',
      () =>
        snapshots().flatMap(([model, s]) =>
          Object.entries(s.decided).flatMap(([route, rules]) =>
            Object.entries(rules).map(([rule, value]) => ({ labels: { model, route, rule }, value })),
          ),
        ),
    );
    const signalName = `${prefix}signal`;
    scraped(
      registry,
      signalName,
      'Distribution of each signal (probability) of decided pairs, by model and signal',
      'histogram',
      () =>
        snapshots().flatMap(([model, s]) =>
          Object.entries(s.signals).flatMap(([signal, h]) => {
            const out: Sample[] = [];
            let cumulative = 0;
            for (let b = 0; b < SIGNAL_BUCKETS.length; b++) {
              cumulative += h.buckets[b];
              out.push({
                labels: { model, signal, le: SIGNAL_BUCKETS[b] },
                value: cumulative,
                metricName: `${signalName}_bucket`,
              });
            }
            out.push({ labels: { model, signal, le: '+Inf' }, value: h.count, metricName: `${signalName}_bucket` });
            out.push({ labels: { model, signal }, value: h.sum, metricName: `${signalName}_sum` });
            out.push({ labels: { model, signal }, value: h.count, metricName: `${signalName}_count` });
            return out;
          }),
        ),
    );
    scraped(
      registry,
      `${prefix}decision_log_records_total`,
      'Requests offered to the decision log by outcome (written, sampled_out, dropped)',
      'counter',
      () => {
        const s = logStats();
        if (s === undefined) return [];
        return [
          { labels: { outcome: 'written' }, value: s.written },
          { labels: { outcome: 'sampled_out' }, value: s.sampledOut },
          { labels: { outcome: 'dropped' }, value: s.dropped },
        ];
      },
    );
    scraped(
      registry,
      `${prefix}decision_log_dropped_total`,
      'Decision-log records dropped, by reason (queue-full, write-error: full disk, read-only or missing directory)',
      'counter',
      () => {
        const s = logStats();
        return s === undefined
          ? []
          : Object.entries(s.droppedByReason).map(([reason, value]) => ({ labels: { reason }, value }));
      },
    );
    scraped(
      registry,
      `${prefix}shadow_requests_total`,
      'Requests offered to a shadow model by outcome (decided; busy: skipped, its calls in flight were at maxInFlight; failed)',
      'counter',
      () =>
        (shadowStats()?.counts ?? []).map((c) => ({
          labels: { model: c.model, shadow: c.shadow, outcome: c.outcome },
          value: c.n,
        })),
    );
    scraped(registry, `${prefix}decision_log_bytes_total`, 'Bytes written to the decision log', 'counter', () => {
      const s = logStats();
      return s === undefined ? [] : [{ labels: {}, value: s.bytes }];
    });
  }
}

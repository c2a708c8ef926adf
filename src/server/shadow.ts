/**
 * Shadow models (config `shadows`, docs/decision-log.md): a configured model that also decides a
 * sampled share of another model's requests, after the live answer was sent and off its critical
 * path, with at most `maxInFlight` shadow calls at once (the CPU share it may take: a request
 * offered while they are busy is skipped and counted). Its decision goes to the decision log beside
 * the live one (`shadowOf`: the live request id), where replay and the inspector compare them.
 * A shadow never answers a caller and its failures are counted, never raised.
 */
import type { GatePolicy, Passage } from '../index.js';
import type { ServerConfig, ShadowConfig } from './config/index.js';
import type { ServerDecisions } from './decisions.js';
import type { ModelRegistry, ServedModel } from './registry.js';

export interface ShadowCall {
  readonly requestId: string;
  readonly model: ServedModel;
  readonly rerank: boolean;
  readonly query: string;
  readonly passages: readonly Passage[];
  readonly override: GatePolicy | undefined;
  readonly queryClass: string | undefined;
}

export type ShadowOutcome = 'decided' | 'busy' | 'failed';

export interface ShadowStats {
  /** By live model, shadow model and outcome. */
  readonly counts: ReadonlyArray<{
    readonly model: string;
    readonly shadow: string;
    readonly outcome: ShadowOutcome;
    readonly n: number;
  }>;
  readonly inFlight: number;
}

export interface ShadowRunner {
  /** Samples the call and, when chosen and a slot is free, decides it with the shadow in the background. */
  offer(call: ShadowCall): void;
  stats(): ShadowStats;
  /** Resolves once no shadow call is in flight (shutdown, tests). */
  idle(): Promise<void>;
}

/** `serving` is false during the start-up warm-up, whose requests are not shadowed. */
export function createShadowRunner(
  config: ServerConfig,
  registry: () => ModelRegistry,
  decisions: ServerDecisions | undefined,
  serving: () => boolean,
  random: () => number = Math.random,
): ShadowRunner | undefined {
  const shadows = config.shadows;
  if (Object.keys(shadows).length === 0 || decisions === undefined) return undefined;
  const counts = new Map<string, { model: string; shadow: string; outcome: ShadowOutcome; n: number }>();
  const count = (model: string, shadow: string, outcome: ShadowOutcome): void => {
    const key = `${model}\u0000${shadow}\u0000${outcome}`;
    const c = counts.get(key);
    if (c === undefined) counts.set(key, { model, shadow, outcome, n: 1 });
    else c.n++;
  };
  const inFlight = new Map<string, number>();
  let running = 0;
  let waiters: Array<() => void> = [];

  const run = async (call: ShadowCall, cfg: ShadowConfig): Promise<void> => {
    const shadow = registry().get(cfg.model);
    if (shadow === undefined) throw new Error(`shadow model ${cfg.model} is not loaded`);
    const gate = call.rerank ? shadow.rerankGate : shadow.gate;
    const result = await gate.filter(call.query, call.passages, {
      budgetMs: cfg.budgetMs,
      ...(call.override === undefined ? {} : { policy: call.override }),
      ...(call.queryClass === undefined ? {} : { queryClass: call.queryClass }),
    });
    decisions.record({
      requestId: call.requestId,
      endpoint: 'shadow',
      model: shadow,
      rerank: call.rerank,
      result,
      override: call.override,
      serverMs: 0,
      shadowOf: call.requestId,
    });
  };

  return {
    offer(call) {
      const cfg = shadows[call.model.name];
      if (cfg === undefined || !serving() || !(random() < cfg.sample)) return;
      const busy = inFlight.get(call.model.name) ?? 0;
      if (busy >= cfg.maxInFlight) {
        count(call.model.name, cfg.model, 'busy');
        return;
      }
      inFlight.set(call.model.name, busy + 1);
      running++;
      // After the live answer: the shadow starts once the event loop has written it.
      setImmediate(() => {
        run(call, cfg)
          .then(
            () => count(call.model.name, cfg.model, 'decided'),
            () => count(call.model.name, cfg.model, 'failed'),
          )
          .finally(() => {
            inFlight.set(call.model.name, (inFlight.get(call.model.name) ?? 1) - 1);
            running--;
            if (running === 0) {
              const done = waiters;
              waiters = [];
              for (const w of done) w();
            }
          });
      });
    },
    stats() {
      return { counts: [...counts.values()].map((c) => ({ ...c })), inFlight: running };
    },
    idle() {
      return running === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/**
 * The server's side of the decision log: one log per process (files carry the pid, so the
 * processes of a cluster share a directory), fed by every protocol once the gate has decided. The
 * logged model policy is the one the request's gate used (the rerank protocols' has no early
 * stop), and the request id is the `id` the caller got back, so `relevance-gate replay` lines up
 * with what clients saw. With the inspector on, the most recent records are also kept in memory.
 */
import { createDecisionLog, type DecisionLog, type DecisionLogModel } from '../decision-log/index.js';
import type { GatePolicy, GateResult } from '../index.js';
import type { ServerConfig } from './config/index.js';
import type { ServedModel } from './registry.js';

/** Decisions the inspector keeps in memory (the window its policy editor re-routes). */
export const INSPECTOR_WINDOW = 1000;

export interface LoggedCall {
  readonly requestId: string;
  readonly endpoint: string;
  readonly model: ServedModel;
  /** The call went through the model's rerank gate (Cohere, TEI). */
  readonly rerank: boolean;
  readonly result: GateResult;
  readonly override: GatePolicy | undefined;
  readonly serverMs: number;
  /** A shadow model's decision: the live request id it shadowed. */
  readonly shadowOf?: string;
}

export interface ServerDecisions {
  readonly log: DecisionLog;
  record(call: LoggedCall): void;
  close(): Promise<void>;
}

/**
 * The server's decision log, or undefined when neither the log nor the inspector is on. `serving`
 * is false during the start-up warm-up, whose own requests are not logged.
 */
export function createServerDecisions(config: ServerConfig, serving: () => boolean): ServerDecisions | undefined {
  const options = config.decisionLog;
  if (options === undefined && !config.inspector) return undefined;
  const log = createDecisionLog({
    ...(options === undefined
      ? {}
      : {
          dir: options.dir,
          sample: options.sample,
          includeQuery: options.includeQuery,
          includeText: options.includeText,
          ...(options.maxFileMb === undefined ? {} : { maxFileBytes: options.maxFileMb * 1024 * 1024 }),
          ...(options.maxFiles === undefined ? {} : { maxFiles: options.maxFiles }),
          ...(options.maxQueued === undefined ? {} : { maxQueued: options.maxQueued }),
          ...(options.alwaysRules === undefined ? {} : { alwaysRules: options.alwaysRules }),
        }),
    window: config.inspector ? INSPECTOR_WINDOW : 0,
  });
  // One descriptor per served model and gate, so the log hashes each policy once.
  const models = new WeakMap<ServedModel, { gate: DecisionLogModel; rerank: DecisionLogModel }>();
  const modelOf = (served: ServedModel, rerank: boolean): DecisionLogModel => {
    let pair = models.get(served);
    if (pair === undefined) {
      const scorer = served.gate.scorer;
      pair = {
        gate: { name: served.name, scorer, policy: served.policy },
        rerank: { name: served.name, scorer, policy: served.rerankPolicy },
      };
      models.set(served, pair);
    }
    return rerank ? pair.rerank : pair.gate;
  };
  return {
    log,
    record(call) {
      if (!serving()) return;
      log.record({
        requestId: call.requestId,
        endpoint: call.endpoint,
        model: modelOf(call.model, call.rerank),
        result: call.result,
        ...(call.override === undefined ? {} : { override: call.override }),
        serverMs: call.serverMs,
        ...(call.shadowOf === undefined ? {} : { shadowOf: call.shadowOf }),
      });
    },
    close: () => log.close(),
  };
}

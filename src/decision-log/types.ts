/**
 * The decision log's record format (one JSON object per line, NDJSON) and the options of the
 * writer. Two kinds of line: a `policy` line, written once per file before the first decision that
 * uses it (so every file replays on its own after rotation), and a `decision` line per logged request.
 * Field names are the contract of docs/decision-log.md; bump DECISION_LOG_VERSION on any change.
 */
import type { GatePolicy, GateResult, Route, UnscoredReason } from '../gate/types.js';
import type { ModelDecisions } from '../operating-points/types.js';
import type { Passage, SignalProbabilities } from '../types.js';

/** The version written. 2: a passage's `hash` is its 64-bit content hash (`passageHash`), not sha256. */
export const DECISION_LOG_VERSION = 2;
/** Versions the reader takes: version 1 lines differ only in what a passage's `hash` holds. */
export const READABLE_DECISION_LOG_VERSIONS: readonly number[] = [1, 2];

/** What the log needs of a served model: its name, the scorer's identity and declarations, the gate's policy. */
export interface DecisionLogModel {
  /** The model's name as served (the `model` of /v1/gate), or any label a library caller chooses. */
  readonly name: string;
  readonly scorer: {
    readonly id: string;
    readonly signals?: readonly string[];
    readonly decisions?: ModelDecisions;
  };
  /** The gate-level policy the result was decided under (before the call's own override). */
  readonly policy: GatePolicy;
}

/** One request to log. Only references are taken at `record()`; the line is built off the request path. */
export interface DecisionEntry<P extends Passage = Passage> {
  /** The id the caller got back (the `id` of a /v1/gate answer). */
  readonly requestId: string;
  readonly model: DecisionLogModel;
  readonly result: GateResult<P>;
  /** The call's own policy override (merged over `model.policy` for this call), if any. */
  readonly override?: GatePolicy;
  /** Where the request came in (`/v1/gate`, `/v1/rerank`, `library`, ...). */
  readonly endpoint?: string;
  /** Time from arrival to the answer, ms (the server's; the gate's own timings are logged too). */
  readonly serverMs?: number;
  /** A shadow model's decision of the request with this (live) request id: logged beside the live one. */
  readonly shadowOf?: string;
}

/** `policy` line: the model's policy and scorer declarations, keyed by their hash. */
export interface PolicyRecord {
  readonly kind: 'policy';
  readonly v: number;
  readonly policyHash: string;
  readonly model: string;
  readonly scorer: {
    readonly id: string;
    readonly signals: readonly string[] | null;
    readonly decisions: ModelDecisions | null;
  };
  readonly policy: GatePolicy;
  /** False when the policy held a function (thresholdFn, a predicate rule): replay needs a policy without one. */
  readonly replayable: boolean;
}

/** One passage of a logged request, in input order. */
export interface PassageRecord {
  readonly id: string;
  /** Position in the request's input. */
  readonly rank: number;
  /** `passageHash` of the passage text: 16 hex digits of XXH64 (version 1: sha256 hex of its UTF-8). */
  readonly hash: string;
  readonly route: Route;
  readonly rule: string;
  readonly reason: UnscoredReason | null;
  readonly tier: string | null;
  readonly cached: boolean | 'approximate';
  readonly relevance: number | null;
  readonly score: number | null;
  /** Every signal as the scorer gave it; null when unscored or skipped by early stop. */
  readonly signals: SignalProbabilities | null;
  readonly raw: Readonly<Record<string, number>> | null;
  /** Only with `includeText`. */
  readonly text?: string;
}

/** `decision` line: one request. */
export interface DecisionRecord {
  readonly kind: 'decision';
  readonly v: number;
  /** ISO time the line was built (just after the answer). */
  readonly time: string;
  readonly requestId: string;
  readonly endpoint: string;
  /** Set on a shadow model's decision: the live request it shadowed (replay keeps them apart). */
  readonly shadowOf?: string;
  readonly model: string;
  readonly scorerId: string;
  readonly policyHash: string;
  readonly override: GatePolicy | null;
  /** sha256 (hex) of the query text, UTF-8. */
  readonly queryHash: string;
  /** Whitespace-separated words of the query (query-length thresholds re-decide from it). */
  readonly queryWords: number;
  readonly queryClass: string | null;
  /** Only with `includeQuery`. */
  readonly query?: string;
  readonly threshold: number;
  readonly rankingCut: number | null;
  readonly sufficiency: number | null;
  readonly fallbackTriggered: boolean;
  readonly insufficientContext: boolean;
  readonly counts: { readonly included: number; readonly conflicting: number; readonly excluded: number };
  readonly timings: { readonly scoringMs: number; readonly totalMs: number; readonly serverMs: number | null };
  /** Scored pairs per tier label (cache hits under 'cache'). */
  readonly tiers: Readonly<Record<string, number>>;
  readonly passages: readonly PassageRecord[];
}

export type LogRecord = PolicyRecord | DecisionRecord;

/** Why a record was not written. */
export type DropReason = 'queue-full' | 'write-error' | 'closed' | 'build-error';

export interface DecisionLogStats {
  /** Requests offered to record(). */
  readonly offered: number;
  /** Not chosen by the sampler. */
  readonly sampledOut: number;
  /** Decision lines written. */
  readonly written: number;
  readonly dropped: number;
  readonly droppedByReason: Readonly<Record<DropReason, number>>;
  /** Bytes written since start. */
  readonly bytes: number;
  readonly queued: number;
  readonly files: number;
  /** The last write error's message, if any. */
  readonly lastError: string | null;
}

export interface DecisionLogOptions {
  /** Directory of the NDJSON files (created when missing). Absent: in-memory window only. */
  readonly dir?: string;
  /** Share of requests logged, in [0, 1]. Default 1. */
  readonly sample?: number;
  /** Requests with a pair decided by one of these rules are logged whatever the sample rate. */
  readonly alwaysRules?: readonly string[];
  /** A file is closed and a new one started past this many bytes. Default 64 MiB. */
  readonly maxFileBytes?: number;
  /** Files kept in `dir`; the oldest are deleted beyond it. Default 16. */
  readonly maxFiles?: number;
  /** Requests waiting to be written at most; more are dropped (counted). Default 4096. */
  readonly maxQueued?: number;
  /**
   * Pairs of the requests waiting to be written at most (a waiting record holds its passages'
   * text until its line is built): bounds the queue's memory. Default 65,536.
   */
  readonly maxQueuedPairs?: number;
  /** Log the query text. Default false (only its hash). */
  readonly includeQuery?: boolean;
  /** Log passage text. Default false (only its hash). */
  readonly includeText?: boolean;
  /** Decision records kept in memory for the inspector (most recent). Default 0. */
  readonly window?: number;
  /** Random source of the sampler, [0, 1). Default Math.random. */
  readonly random?: () => number;
  /** After a failed open or write, wait this long before trying the directory again, ms. Default 1000. */
  readonly retryMs?: number;
  /**
   * With `dir`: true builds and writes the lines on a writer thread, this thread only hashing
   * passages and packing the entry; false builds and writes them on this thread (less CPU in all).
   * Default: true on a host with 4 or more cores, else false.
   */
  readonly thread?: boolean;
}

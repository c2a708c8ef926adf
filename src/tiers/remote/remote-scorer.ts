/**
 * createRemoteScorer: a Scorer whose model runs behind an HTTP rerank API (Cohere-compatible
 * /v2/rerank, TEI /rerank) or a KServe v2 / Triton inference server (kserve-scorer.ts). Its `relevant` signal is the backend's relevance score as a
 * probability, in input order; the call's deadline and AbortSignal bound every request; calls
 * larger than the backend's cap are split (batches.ts) and merged. Errors are typed (errors.ts).
 * See docs/remote.md.
 */
import { AbortedError, InvalidArgumentError } from '../../errors.js';
import { checkPassages } from '../../scoring/passages.js';
import { RELEVANT } from '../../signals.js';
import type { DetailedPairScore, Passage, ScoreOptions } from '../../types.js';
import { type BatchCap, type BatchOutcome, scoreInBatches } from './batches.js';
import { assertInstalled } from '../../util/optional-package.js';
import { RemoteEndpointError } from './errors.js';
import { postJson } from './http.js';
import { KserveScorer } from './kserve-scorer.js';
import { KSERVE_FEATURE, tokenizerFileIn } from './kserve-tokens.js';
import {
  type RemoteScorerOptions,
  type RemoteScorerSettings,
  REMOTE_TIER,
  resolveRemoteScorerOptions,
} from './options.js';
import { errorMessageOf, parseRerankAnswer, rerankBody } from './protocols.js';
import type { RemoteProtocol, RemoteScorer, RemoteScorerStats } from './types.js';

export type { RemoteScorer, RemoteScorerStats } from './types.js';

/**
 * A Scorer whose `relevant` signal is the remote backend's relevance score, in input order.
 * Throws RemoteConfigError for a bad option, and MissingDependencyError for `kserve` without the
 * optional `tokenizers` package (the engine tokenizes for it).
 */
export function createRemoteScorer(options: RemoteScorerOptions): RemoteScorer {
  const settings = resolveRemoteScorerOptions(options);
  if (settings.kserve !== undefined) {
    assertInstalled('tokenizers', KSERVE_FEATURE);
    // A missing or empty folder fails here, not at the first call.
    tokenizerFileIn(settings.kserve.tokenizerDir);
    return new KserveScorer(settings);
  }
  return new HttpRerankScorer(settings);
}

/** An HTTP status that says the batch was too large for the backend (split and retried). */
function isTooLarge(status: number): boolean {
  return status === 413 || status === 422;
}

/** What the backend gets for a passage: its title and text, as the local tiers read them. */
function textOf(p: Passage): string {
  return p.title === undefined || p.title === '' ? p.text : `${p.title} ${p.text}`;
}

class HttpRerankScorer implements RemoteScorer {
  readonly id: string;
  readonly signals: readonly string[] = Object.freeze([RELEVANT]);
  readonly protocol: RemoteProtocol;
  private readonly cap: BatchCap;
  private readonly counters = { requests: 0, calls: 0, failedCalls: 0 };

  constructor(private readonly settings: RemoteScorerSettings) {
    this.id = settings.id;
    this.protocol = settings.protocol;
    this.cap = { current: settings.maxBatch, shrinks: 0 };
  }

  stats(): RemoteScorerStats {
    return { ...this.counters, maxBatch: this.cap.current, batchShrinks: this.cap.shrinks };
  }

  /** Cohere's and TEI's APIs have no readiness endpoint in common: nothing to wait for. */
  async ready(): Promise<void> {}

  async score(query: string, passages: readonly Passage[], options: ScoreOptions = {}): Promise<DetailedPairScore[]> {
    if (typeof query !== 'string') throw new InvalidArgumentError('query must be a string');
    checkPassages(passages);
    const { signal, deadline } = options ?? {};
    if (signal?.aborted) throw new AbortedError('the remote scoring call was aborted', { cause: signal.reason });
    if (passages.length === 0) return [];
    const protocol = this.settings.protocol as 'cohere' | 'tei';
    const texts = passages.map(textOf);
    const send = async (start: number, end: number, batchSignal: AbortSignal): Promise<BatchOutcome> => {
      this.counters.requests++;
      const body = rerankBody(protocol, this.settings.model, query, texts.slice(start, end));
      const answer = await postJson(this.settings, body, batchSignal, deadline);
      if (answer.status === 200) return { kind: 'ok', scores: parseRerankAnswer(protocol, answer.text, end - start) };
      const message = errorMessageOf(answer.text);
      if (isTooLarge(answer.status)) return { kind: 'too-large', status: answer.status, message };
      // 424: TEI's "Backend" error (inference failed), as transient as a 5xx.
      const retryable = answer.status === 408 || answer.status === 424 || answer.status === 429 || answer.status >= 500;
      throw new RemoteEndpointError(`${protocol} backend answered ${answer.status}: ${message}`, {
        protocol,
        status: answer.status,
        retryable,
        ...(answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs }),
      });
    };
    let scores: Float64Array;
    try {
      scores = await scoreInBatches(
        passages.length,
        this.cap,
        this.settings.maxConcurrentRequests,
        protocol,
        signal,
        send,
      );
    } catch (error) {
      this.counters.failedCalls++;
      // A sibling request's abort error may surface first; the caller's abort is the reason then.
      if (signal?.aborted && !(error instanceof AbortedError))
        throw new AbortedError('the remote scoring call was aborted', { cause: signal.reason });
      throw error;
    }
    this.counters.calls++;
    const out = new Array<DetailedPairScore>(scores.length);
    for (let i = 0; i < scores.length; i++) out[i] = { probabilities: { relevant: scores[i] }, tier: REMOTE_TIER };
    return out;
  }
}

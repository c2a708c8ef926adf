/**
 * The kserve protocol's scorer: a cross-encoder behind a KServe v2 / Triton HTTP server. The
 * engine tokenizes each (query, passage) pair as the local cross-encoder tier does, sends the ids
 * as INT64 (or INT32) tensors to `POST …/infer`, and reads one logit per pair; its probability is
 * the sigmoid of that logit ([n,2] heads: of class 1 − class 0), as the local tier computes it.
 *
 * Before its first call the scorer learns the server (once, shared by concurrent calls, again
 * after a failure): `GET /v2/health/ready`, then the model's metadata (inputs, the logits output)
 * and Triton's `GET …/config` (`max_batch_size` caps requests). A call waits for that within its
 * own deadline and signal; the learning itself is bounded by requestTimeoutMs and not cancelled by
 * one caller leaving, so the next call finds it done.
 */
import { AbortedError, DeadlineExceededError, InvalidArgumentError } from '../../errors.js';
import { ABORTED, raceLimits, TIMED_OUT } from '../../scoring/race-limits.js';
import { checkPassages } from '../../scoring/passages.js';
import { RELEVANT } from '../../signals.js';
import type { DetailedPairScore, Passage, ScoreOptions } from '../../types.js';
import { sigmoid } from '../../util/sigmoid.js';
import { passageText } from '../cross-encoder/scorer.js';
import type { EncodedPairs } from '../cross-encoder/tokenize-pairs.js';
import { type BatchCap, type BatchOutcome, batchLimitIn, scoreInBatches } from './batches.js';
import { RemoteConfigError, RemoteEndpointError } from './errors.js';
import { getJson, type HttpAnswer, postJson } from './http.js';
import {
  inferBody,
  type KserveModelContract,
  parseInferAnswer,
  parseMaxBatchSize,
  parseModelMetadata,
} from './kserve-protocol.js';
import { batchTensors, type KserveTokenizer, loadKserveTokenizer } from './kserve-tokens.js';
import { type KserveSettings, REMOTE_TIER, type RemoteScorerSettings } from './options.js';
import { errorMessageOf } from './protocols.js';
import type { RemoteScorer, RemoteScorerStats } from './types.js';

const PROTOCOL = 'kserve';

/** A transient status: a later try may succeed (424: a backend's own inference failure). */
function isRetryable(status: number): boolean {
  return status === 408 || status === 424 || status === 429 || status >= 500;
}

function endpointError(what: string, answer: HttpAnswer, retryable = isRetryable(answer.status)): RemoteEndpointError {
  return new RemoteEndpointError(`${what} answered ${answer.status}: ${errorMessageOf(answer.text)}`, {
    protocol: PROTOCOL,
    status: answer.status,
    retryable,
    ...(answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs }),
  });
}

/** What a call needs before its first request: the tokenizer, the model's contract, its pairs' ids. */
interface Prepared {
  readonly tokenizer: KserveTokenizer;
  readonly contract: KserveModelContract;
  readonly encoded: EncodedPairs;
}

export class KserveScorer implements RemoteScorer {
  readonly id: string;
  readonly signals: readonly string[] = Object.freeze([RELEVANT]);
  readonly protocol = PROTOCOL;
  private readonly kserve: KserveSettings;
  private readonly cap: BatchCap;
  private readonly counters = { requests: 0, calls: 0, failedCalls: 0 };
  private tokenizer: Promise<KserveTokenizer> | undefined;
  private contract: Promise<KserveModelContract> | undefined;
  /** The server's max_batch_size is applied once: a cap learned lower since is kept. */
  private serverCapApplied = false;

  constructor(private readonly settings: RemoteScorerSettings) {
    this.id = settings.id;
    this.kserve = settings.kserve as KserveSettings;
    this.cap = { current: settings.maxBatch, shrinks: 0 };
  }

  stats(): RemoteScorerStats {
    return { ...this.counters, maxBatch: this.cap.current, batchShrinks: this.cap.shrinks };
  }

  async ready(options: ScoreOptions = {}): Promise<void> {
    const { signal, deadline } = options ?? {};
    await this.within(
      Promise.all([this.loadTokenizer(), this.learnModel()]).then(([tokenizer, contract]) =>
        this.checkSequence(tokenizer, contract),
      ),
      signal,
      deadline,
    );
  }

  async score(query: string, passages: readonly Passage[], options: ScoreOptions = {}): Promise<DetailedPairScore[]> {
    if (typeof query !== 'string') throw new InvalidArgumentError('query must be a string');
    checkPassages(passages);
    const { signal, deadline } = options ?? {};
    if (signal?.aborted) throw new AbortedError('the remote scoring call was aborted', { cause: signal.reason });
    if (passages.length === 0) return [];
    let logits: Float64Array;
    try {
      if (deadline !== undefined && deadline <= Date.now())
        throw new DeadlineExceededError('the deadline passed before the remote request was sent');
      const prepared = await this.within(this.prepare(query, passages.map(passageText)), signal, deadline);
      logits = await scoreInBatches(
        passages.length,
        this.cap,
        this.settings.maxConcurrentRequests,
        PROTOCOL,
        signal,
        (start, end, batchSignal) => this.send(prepared, start, end, batchSignal, deadline),
      );
    } catch (error) {
      this.counters.failedCalls++;
      // A sibling request's abort error may surface first; the caller's abort is the reason then.
      if (signal?.aborted && !(error instanceof AbortedError))
        throw new AbortedError('the remote scoring call was aborted', { cause: signal.reason });
      throw error;
    }
    this.counters.calls++;
    const out = new Array<DetailedPairScore>(logits.length);
    for (let i = 0; i < logits.length; i++)
      out[i] = { probabilities: { relevant: sigmoid(logits[i]) }, raw: { relevant: logits[i] }, tier: REMOTE_TIER };
    return out;
  }

  /** Settles with `work`, or rejects at the call's deadline or abort (the work goes on, shared). */
  private async within<T>(work: Promise<T>, signal: AbortSignal | undefined, deadline: number | undefined): Promise<T> {
    const outcome = await raceLimits(work, signal, deadline, Date.now);
    if (outcome === ABORTED) throw new AbortedError('the remote scoring call was aborted', { cause: signal?.reason });
    if (outcome === TIMED_OUT)
      throw new DeadlineExceededError('the deadline passed before the kserve model was ready to be asked');
    return outcome;
  }

  private async prepare(query: string, texts: readonly string[]): Promise<Prepared> {
    const [tokenizer, contract] = await Promise.all([this.loadTokenizer(), this.learnModel()]);
    this.checkSequence(tokenizer, contract);
    return { tokenizer, contract, encoded: await tokenizer.encode(query, texts) };
  }

  /** A model that takes a fixed sequence length needs every pair to fit it. */
  private checkSequence(tokenizer: KserveTokenizer, contract: KserveModelContract): void {
    const fixed = contract.sequenceLength;
    if (fixed !== undefined && tokenizer.maxLength > fixed)
      throw new RemoteConfigError(
        `createRemoteScorer: kserve model ${this.settings.model} takes sequences of ${fixed} tokens; set maxLength to at most ${fixed} (now ${tokenizer.maxLength})`,
      );
  }

  /** The tokenizer, loaded once (a failure is the configuration's and is kept). */
  private loadTokenizer(): Promise<KserveTokenizer> {
    this.tokenizer ??= loadKserveTokenizer(this.kserve);
    return this.tokenizer;
  }

  /** The model's contract, learned once; a failure is forgotten so that the next call asks again. */
  private learnModel(): Promise<KserveModelContract> {
    if (this.contract === undefined) {
      const learning = this.discover();
      this.contract = learning;
      learning.catch(() => {
        if (this.contract === learning) this.contract = undefined;
      });
    }
    return this.contract;
  }

  private async discover(): Promise<KserveModelContract> {
    const { settings, kserve } = this;
    const health = await getJson(settings, kserve.healthUrl, undefined, undefined);
    // The protocol answers readiness by status alone (200 ready, 4xx not yet): always worth a later try.
    if (health.status !== 200) throw endpointError('kserve server readiness (GET /v2/health/ready)', health, true);
    const [metadata, config] = await Promise.all([
      getJson(settings, kserve.metadataUrl, undefined, undefined),
      getJson(settings, kserve.configUrl, undefined, undefined),
    ]);
    if (metadata.status !== 200)
      throw endpointError(`kserve model metadata (GET ${kserve.metadataUrl.pathname})`, metadata);
    const parsed = parseModelMetadata(metadata.text, kserve.output);
    // Triton's configuration endpoint; a KServe server has none (4xx): the cap stays maxBatch.
    if (config.status !== 200 && !(config.status >= 400 && config.status < 500))
      throw endpointError(`kserve model configuration (GET ${kserve.configUrl.pathname})`, config);
    const configured = config.status === 200 ? parseMaxBatchSize(config.text) : undefined;
    const limits = [configured, parsed.batchDim].filter((n): n is number => n !== undefined);
    const maxBatch = limits.length > 0 ? Math.min(...limits) : undefined;
    if (maxBatch !== undefined && !this.serverCapApplied) {
      this.cap.current = kserve.maxBatchGiven ? Math.min(this.cap.current, maxBatch) : maxBatch;
      this.serverCapApplied = true;
    }
    const { batchDim: _batchDim, ...contract } = parsed;
    return { ...contract, maxBatch };
  }

  private async send(
    prepared: Prepared,
    start: number,
    end: number,
    signal: AbortSignal,
    deadline: number | undefined,
  ): Promise<BatchOutcome> {
    const { contract, encoded, tokenizer } = prepared;
    this.counters.requests++;
    const tensors = batchTensors(encoded, start, end, tokenizer.padTokenId, contract.sequenceLength);
    const answer = await postJson(this.settings, inferBody(contract, tensors), signal, deadline);
    if (answer.status === 200) return { kind: 'ok', scores: parseInferAnswer(contract, answer.text, end - start) };
    const message = errorMessageOf(answer.text);
    // 413/422 (a proxy's body limit, a server's own), or Triton's 400 naming its max_batch_size.
    if (
      answer.status === 413 ||
      answer.status === 422 ||
      (answer.status === 400 && batchLimitIn(message) !== undefined)
    )
      return { kind: 'too-large', status: answer.status, message };
    // A model reloaded with other inputs or outputs answers 400/404: its metadata is read again next call.
    if (answer.status === 400 || answer.status === 404) this.contract = undefined;
    throw endpointError('kserve backend (POST infer)', answer);
  }
}

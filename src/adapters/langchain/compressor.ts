/**
 * RelevanceGateCompressor: a LangChain document compressor that runs a relevance gate over the
 * retrieved documents and returns what the gate let through, in the gate's returned order, each a new
 * Document whose metadata says what the gate decided. The caller's documents are never mutated.
 */
import type { Callbacks } from '@langchain/core/callbacks/manager';
import { Document, type DocumentInterface } from '@langchain/core/documents';
import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { admittedItems } from '../../context/order.js';
import { uniquePassageIds } from '../../context/passage-ids.js';
import { rejectUnknownKeys } from '../../util/option-keys.js';
import {
  type FilterOptions,
  type Gate,
  type GateItem,
  type GatePolicy,
  type GateResult,
  InvalidArgumentError,
  type Passage,
  type Route,
  type UnscoredReason,
} from '../../index.js';

/** The passage the gate scores for one document: its pageContent, and the document itself. */
export interface DocumentPassage extends Passage {
  readonly document: DocumentInterface;
}

/** What the gate decided about a document, under `metadata.relevanceGate`. */
export interface RelevanceGateDecision {
  /** The scorer's probabilities (a copy), or null when unscored. */
  readonly signals: Readonly<Record<string, number>> | null;
  readonly tier: string | null;
  /** The relevance the keep/drop decision used; null for a fail-open document. */
  readonly relevance: number | null;
  /** Why the pair is unscored (fail-open items only reach the output), or null. */
  readonly reason: UnscoredReason | null;
  /** Position in the input documents. */
  readonly rank: number;
  /** true: from the score cache; 'approximate': a near-identical earlier query's score (docs/cache.md). */
  readonly cached: boolean | 'approximate';
  /** The id the gate used (the document's id, or `#index` when it had none or repeated one). */
  readonly passageId: string;
}

/** Metadata of a returned document: the caller's metadata plus the gate's decision. */
export type RelevanceGateMetadata = Record<string, unknown> & {
  /**
   * The gate's score (GateItem.score): a calibrated probability of relevance, descending in the
   * order the documents are returned; null for a fail-open document.
   */
  readonly relevanceScore: number | null;
  readonly route: Exclude<Route, 'excluded'>;
  /** The rule that decided (e.g. 'threshold', 'evidence', 'contradicts-premise'). */
  readonly rule: string;
  readonly relevanceGate: RelevanceGateDecision;
};

/** Options of one call, merged over the compressor's own. */
export interface CompressOptions {
  /** Aborts scoring; the call rejects with the signal's reason. Combined with the compressor's signal. */
  readonly signal?: AbortSignal;
  /** Scoring budget in ms; pairs not scored in time are excluded (fail closed). The smaller one wins. */
  readonly budgetMs?: number;
  /** Absolute deadline (Date.now() ms). */
  readonly deadline?: number;
  /** Policy override for the call (merged over the gate's policy). */
  readonly policy?: GatePolicy;
  readonly queryClass?: string;
}

export interface RelevanceGateCompressorOptions extends CompressOptions {
  /** What createGate returned, with any scorer (fast path, cross-encoder, router). */
  readonly gate: Gate;
  /** Return conflicting documents (flagged with route 'conflicting') or drop them. Default true. */
  readonly includeConflicting?: boolean;
  /** Metadata key whose string value is scored as the passage title. Default: none. */
  readonly titleKey?: string;
  /** Read `signal` and `timeout` of LangChain's current runnable config, when it carries one. Default true. */
  readonly useRunnableConfig?: boolean;
  /** Receives the full gate result of every call (excluded documents and stats included). */
  readonly onResult?: (result: GateResult<DocumentPassage>) => void;
}

export interface GatedDocuments {
  /** What compressDocuments returns. */
  readonly documents: Array<Document<RelevanceGateMetadata>>;
  /** The gate's full decision, for buildContext or logging. */
  readonly result: GateResult<DocumentPassage>;
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'gate',
  'includeConflicting',
  'titleKey',
  'useRunnableConfig',
  'onResult',
  'signal',
  'budgetMs',
  'deadline',
  'policy',
  'queryClass',
]);
const CALL_KEYS: ReadonlySet<string> = new Set(['signal', 'budgetMs', 'deadline', 'policy', 'queryClass']);

function isGate(value: unknown): value is Gate {
  return typeof value === 'object' && value !== null && typeof (value as Gate).filter === 'function';
}

function combineSignals(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

function minDefined(values: ReadonlyArray<number | undefined>): number | undefined {
  let min: number | undefined;
  for (const v of values) if (v !== undefined && (min === undefined || v < min)) min = v;
  return min;
}

/** signal/timeout of the runnable LangChain is executing, when its async-local config is set up. */
function runnableLimits(): { signal?: AbortSignal; timeout?: number } {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { signal?: unknown; timeout?: unknown }
    | undefined;
  if (config === undefined) return {};
  const signal = config.signal instanceof AbortSignal ? config.signal : undefined;
  const timeout = typeof config.timeout === 'number' && config.timeout > 0 ? config.timeout : undefined;
  return { signal, timeout };
}

export class RelevanceGateCompressor extends BaseDocumentCompressor {
  readonly gate: Gate;
  readonly includeConflicting: boolean;
  private readonly options: RelevanceGateCompressorOptions;

  constructor(options: RelevanceGateCompressorOptions) {
    super();
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('RelevanceGateCompressor needs options { gate, includeConflicting? }');
    rejectUnknownKeys(options, OPTION_KEYS, 'RelevanceGateCompressor options');
    if (!isGate(options.gate))
      throw new InvalidArgumentError('RelevanceGateCompressor options.gate must be what createGate returns');
    if (options.includeConflicting !== undefined && typeof options.includeConflicting !== 'boolean')
      throw new InvalidArgumentError('RelevanceGateCompressor options.includeConflicting must be a boolean');
    if (options.titleKey !== undefined && (typeof options.titleKey !== 'string' || options.titleKey.length === 0))
      throw new InvalidArgumentError('RelevanceGateCompressor options.titleKey must be a non-empty string');
    if (options.onResult !== undefined && typeof options.onResult !== 'function')
      throw new InvalidArgumentError('RelevanceGateCompressor options.onResult must be a function');
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
      throw new InvalidArgumentError('RelevanceGateCompressor options.signal must be an AbortSignal');
    this.gate = options.gate;
    this.includeConflicting = options.includeConflicting ?? true;
    this.options = { ...options };
  }

  /**
   * A compressor with `options` bound to every call (e.g. one request's AbortSignal and budget),
   * for use as the baseCompressor of a per-request ContextualCompressionRetriever.
   */
  withOptions(options: CompressOptions): RelevanceGateCompressor {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('withOptions needs an options object');
    rejectUnknownKeys(options, CALL_KEYS, 'withOptions options');
    return new RelevanceGateCompressor({ ...this.options, ...this.merge(options) });
  }

  /**
   * BaseDocumentCompressor's method. `callbacks` is accepted for the interface; tracing sees the
   * call through the enclosing retriever run. `options` (a relevance-gate extension) carries
   * signal, budget and policy for direct callers.
   */
  override async compressDocuments(
    documents: DocumentInterface[],
    query: string,
    _callbacks?: Callbacks,
    options?: CompressOptions,
  ): Promise<Array<Document<RelevanceGateMetadata>>> {
    // Nothing to decide: no scoring, no gate call (a retriever that found nothing may pass any query).
    if (Array.isArray(documents) && documents.length === 0) return [];
    return (await this.gateDocuments(documents, query, options)).documents;
  }

  /** compressDocuments plus the gate's full result. */
  async gateDocuments(
    documents: readonly DocumentInterface[],
    query: string,
    options: CompressOptions = {},
  ): Promise<GatedDocuments> {
    if (!Array.isArray(documents)) throw new InvalidArgumentError('documents must be an array of Documents');
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('compressDocuments options must be an object');
    rejectUnknownKeys(options, CALL_KEYS, 'compressDocuments options');
    const call = this.merge(options);
    const filterOptions = this.filterOptions(call);
    filterOptions.signal?.throwIfAborted();
    const passages = this.passages(documents);
    const result = await this.gate.filter(query, passages, filterOptions);
    filterOptions.signal?.throwIfAborted();
    this.options.onResult?.(result);
    const admitted = admittedItems(result, this.includeConflicting);
    return { documents: admitted.map((item) => gatedDocument(item)), result };
  }

  /** This compressor's options with `call` merged in: signals combined, the smaller budget kept. */
  private merge(call: CompressOptions): CompressOptions {
    const base = this.options;
    return {
      signal: combineSignals([base.signal, call.signal]),
      budgetMs: minDefined([base.budgetMs, call.budgetMs]),
      deadline: minDefined([base.deadline, call.deadline]),
      policy: call.policy === undefined ? base.policy : { ...base.policy, ...call.policy },
      queryClass: call.queryClass ?? base.queryClass,
    };
  }

  private filterOptions(call: CompressOptions): { -readonly [K in keyof FilterOptions]: FilterOptions[K] } {
    const runnable = this.options.useRunnableConfig === false ? {} : runnableLimits();
    const out: { -readonly [K in keyof FilterOptions]: FilterOptions[K] } = {};
    const signal = combineSignals([call.signal, runnable.signal]);
    const budgetMs = minDefined([call.budgetMs, runnable.timeout]);
    if (signal !== undefined) out.signal = signal;
    if (budgetMs !== undefined) out.budgetMs = budgetMs;
    if (call.deadline !== undefined) out.deadline = call.deadline;
    if (call.policy !== undefined) out.policy = call.policy;
    if (call.queryClass !== undefined) out.queryClass = call.queryClass;
    return out;
  }

  private passages(documents: readonly DocumentInterface[]): DocumentPassage[] {
    const titleKey = this.options.titleKey;
    const ids = uniquePassageIds(documents.map((d) => (typeof d?.id === 'string' ? d.id : undefined)));
    return documents.map((document, i) => {
      if (typeof document !== 'object' || document === null || typeof document.pageContent !== 'string')
        throw new InvalidArgumentError(`documents[${i}] must be a Document with a string pageContent`);
      const metadata = document.metadata;
      if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null))
        throw new InvalidArgumentError(`documents[${i}].metadata must be an object`);
      const title = titleKey === undefined ? undefined : metadata?.[titleKey];
      const passage: { -readonly [K in keyof DocumentPassage]: DocumentPassage[K] } = {
        id: ids[i],
        text: document.pageContent,
        document,
      };
      if (typeof title === 'string' && title.length > 0) passage.title = title;
      return passage;
    });
  }
}

function gatedDocument(item: GateItem<DocumentPassage>): Document<RelevanceGateMetadata> {
  const source = item.passage.document;
  const decision: RelevanceGateDecision = {
    signals: item.signals === null ? null : Object.assign({}, item.signals),
    tier: item.tier ?? null,
    relevance: item.relevance,
    reason: item.reason ?? null,
    rank: item.rank,
    cached: item.cached,
    passageId: item.id,
  };
  // Object.assign rather than object spread: measurably cheaper per document on this hot path.
  const metadata: RelevanceGateMetadata = Object.assign({}, source.metadata, {
    relevanceScore: item.score,
    route: item.route === 'conflicting' ? ('conflicting' as const) : ('included' as const),
    rule: item.rule,
    relevanceGate: decision,
  });
  const fields: { pageContent: string; metadata: RelevanceGateMetadata; id?: string } = {
    pageContent: source.pageContent,
    metadata,
  };
  if (source.id !== undefined) fields.id = source.id;
  return new Document<RelevanceGateMetadata>(fields);
}

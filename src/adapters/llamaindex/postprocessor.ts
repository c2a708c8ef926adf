/**
 * RelevanceGatePostprocessor: a LlamaIndex.TS node postprocessor (the BaseNodePostprocessor
 * interface its CohereRerank implements) that runs a relevance gate over the retrieved nodes and
 * returns what the gate let through, in the gate's returned order, each a copy of the node whose
 * metadata says what the gate decided and whose score is the gate's. The caller's nodes are never
 * mutated. BaseNodePostprocessor is an interface, so nothing of LlamaIndex is loaded at run time.
 */
import type { MessageContent } from '@llamaindex/core/llms';
import type { BaseNodePostprocessor } from '@llamaindex/core/postprocessor';
import type { NodeWithScore } from '@llamaindex/core/schema';
import { admittedItems } from '../../context/order.js';
import { rejectUnknownKeys } from '../../util/option-keys.js';
import {
  createGate,
  type Gate,
  type GatePolicy,
  type GateResult,
  InvalidArgumentError,
  type Scorer,
} from '../../index.js';
import { CALL_KEYS, mergeCallOptions, type PostprocessOptions } from './call-options.js';
import { gatedNode, type NodePassage, nodePassages, queryText, type RelevanceGateNodeMetadata } from './nodes.js';

/** Options of both forms; each declares its own `policy`, which means something different in each. */
export interface PostprocessorCommonOptions extends Omit<PostprocessOptions, 'policy'> {
  /** Return conflicting nodes (flagged with route 'conflicting') or drop them. Default true. */
  readonly includeConflicting?: boolean;
  /** Metadata key whose string value is scored as the passage title. Default: none. */
  readonly titleKey?: string;
  /** Receives the full gate result of every call (excluded nodes, stats, insufficientContext). */
  readonly onResult?: (result: GateResult<NodePassage>) => void;
}

/** `{ gate }`: a gate from createGate, with any scorer (fast path, cross-encoder, router). */
export interface GatePostprocessorOptions extends PostprocessorCommonOptions {
  readonly gate: Gate;
  readonly scorer?: undefined;
  /** Policy override for every call, merged over the gate's policy. */
  readonly policy?: GatePolicy;
}

/** `{ scorer, policy }`: the postprocessor builds its gate, `createGate({ scorer, policy })`. */
export interface ScorerPostprocessorOptions extends PostprocessorCommonOptions {
  readonly scorer: Scorer;
  readonly gate?: undefined;
  /** The gate's policy. */
  readonly policy?: GatePolicy;
}

/** `{ gate, ... }` or `{ scorer, policy, ... }`. */
export type RelevanceGatePostprocessorOptions = GatePostprocessorOptions | ScorerPostprocessorOptions;

/** What gateNodes returns. */
export interface GatedNodes {
  /** What postprocessNodes returns. */
  readonly nodes: Array<NodeWithScore<RelevanceGateNodeMetadata>>;
  /** The gate's full decision, for buildContext or logging. */
  readonly result: GateResult<NodePassage>;
  /** The gate found the retrieved nodes insufficient to answer (result.stats.insufficientContext). */
  readonly insufficientContext: boolean;
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'gate',
  'scorer',
  'includeConflicting',
  'titleKey',
  'onResult',
  ...CALL_KEYS,
]);

function isGate(value: unknown): value is Gate {
  return typeof value === 'object' && value !== null && typeof (value as Gate).filter === 'function';
}

/** The gate of the options: theirs, or one built from their scorer and policy. */
function gateOf(options: RelevanceGatePostprocessorOptions): Gate {
  const { gate, scorer } = options;
  if (gate !== undefined && scorer !== undefined)
    throw new InvalidArgumentError('RelevanceGatePostprocessor takes { gate } or { scorer, policy }, not both');
  // createGate refuses a malformed scorer or policy with its own typed errors.
  if (scorer !== undefined) return createGate({ scorer, policy: options.policy });
  if (!isGate(gate))
    throw new InvalidArgumentError('RelevanceGatePostprocessor options.gate must be what createGate returns');
  return gate;
}

function validate(options: RelevanceGatePostprocessorOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('RelevanceGatePostprocessor needs options { gate } or { scorer, policy }');
  rejectUnknownKeys(options, OPTION_KEYS, 'RelevanceGatePostprocessor options');
  if (options.includeConflicting !== undefined && typeof options.includeConflicting !== 'boolean')
    throw new InvalidArgumentError('RelevanceGatePostprocessor options.includeConflicting must be a boolean');
  if (options.titleKey !== undefined && (typeof options.titleKey !== 'string' || options.titleKey.length === 0))
    throw new InvalidArgumentError('RelevanceGatePostprocessor options.titleKey must be a non-empty string');
  if (options.onResult !== undefined && typeof options.onResult !== 'function')
    throw new InvalidArgumentError('RelevanceGatePostprocessor options.onResult must be a function');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidArgumentError('RelevanceGatePostprocessor options.signal must be an AbortSignal');
}

/** A LlamaIndex BaseNodePostprocessor that keeps the nodes the gate lets through (see docs/adapters.md). */
export class RelevanceGatePostprocessor implements BaseNodePostprocessor {
  readonly gate: Gate;
  readonly includeConflicting: boolean;
  readonly titleKey: string | undefined;
  private readonly onResult: ((result: GateResult<NodePassage>) => void) | undefined;
  /** Limits and policy override applied to every call. */
  private readonly base: PostprocessOptions;

  constructor(options: RelevanceGatePostprocessorOptions) {
    validate(options);
    this.gate = gateOf(options);
    this.includeConflicting = options.includeConflicting ?? true;
    this.titleKey = options.titleKey;
    this.onResult = options.onResult;
    // With { scorer, policy } the policy is already the gate's; it is not applied again per call.
    const { signal, budgetMs, deadline, queryClass } = options;
    const policy = options.scorer === undefined ? options.policy : undefined;
    this.base = mergeCallOptions({}, { signal, budgetMs, deadline, policy, queryClass });
  }

  /**
   * A postprocessor with `options` bound to every call (e.g. one request's AbortSignal and budget),
   * for the nodePostprocessors of a per-request query or chat engine. Cheap: it shares the gate.
   */
  withOptions(options: PostprocessOptions): RelevanceGatePostprocessor {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('withOptions needs an options object');
    rejectUnknownKeys(options, CALL_KEYS, 'withOptions options');
    const bound: GatePostprocessorOptions = {
      gate: this.gate,
      includeConflicting: this.includeConflicting,
      ...(this.titleKey === undefined ? {} : { titleKey: this.titleKey }),
      ...(this.onResult === undefined ? {} : { onResult: this.onResult }),
      ...mergeCallOptions(this.base, options),
    };
    return new RelevanceGatePostprocessor(bound);
  }

  /**
   * BaseNodePostprocessor's method, as query and chat engines call it. `options` (a relevance-gate
   * extension) carries signal, budget and policy for direct callers.
   */
  async postprocessNodes(
    nodes: NodeWithScore[],
    query?: MessageContent,
    options?: PostprocessOptions,
  ): Promise<Array<NodeWithScore<RelevanceGateNodeMetadata>>> {
    // Nothing to decide: no scoring, no gate call (LlamaIndex's own rerankers do the same).
    if (Array.isArray(nodes) && nodes.length === 0) return [];
    return (await this.gateNodes(nodes, query, options)).nodes;
  }

  /** postprocessNodes plus the gate's full result and its insufficientContext verdict. */
  async gateNodes(
    nodes: readonly NodeWithScore[],
    query: MessageContent | undefined,
    options: PostprocessOptions = {},
  ): Promise<GatedNodes> {
    if (!Array.isArray(nodes)) throw new InvalidArgumentError('nodes must be an array of NodeWithScore');
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('postprocessNodes options must be an object');
    rejectUnknownKeys(options, CALL_KEYS, 'postprocessNodes options');
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
      throw new InvalidArgumentError('postprocessNodes options.signal must be an AbortSignal');
    const call = mergeCallOptions(this.base, options);
    call.signal?.throwIfAborted();
    const text = queryText(query);
    const passages = nodePassages(nodes, this.titleKey);
    const result = await this.gate.filter(text, passages, call);
    call.signal?.throwIfAborted();
    this.onResult?.(result);
    const admitted = admittedItems(result, this.includeConflicting);
    return {
      nodes: admitted.map((item) => gatedNode(item)),
      result,
      insufficientContext: result.stats.insufficientContext,
    };
  }
}

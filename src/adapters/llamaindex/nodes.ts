/**
 * LlamaIndex nodes in and out of the gate: the query's text, a passage per node, and the copy of a
 * node that carries the gate's decision. Only the nodes' own methods are called (getContent,
 * clone), so no LlamaIndex module is loaded here and nodes of any installed copy of
 * @llamaindex/core work, where an instanceof check would refuse another copy's nodes.
 */
import type { MessageContent } from '@llamaindex/core/llms';
import type { BaseNode, Metadata, MetadataMode, NodeWithScore } from '@llamaindex/core/schema';
import { uniquePassageIds } from '../../context/passage-ids.js';
import type { GateItem, Passage, Route, UnscoredReason } from '../../index.js';
import { InvalidNodeError, MissingQueryError } from './errors.js';

/** The metadata key of the gate's decision on a returned node. */
export const DECISION_KEY = 'relevanceGate';

/**
 * MetadataMode.NONE: the node's text without its metadata, as LangChain's pageContent is scored.
 * The value of LlamaIndex's string enum, so that this module needs no LlamaIndex code at run time.
 */
const CONTENT_ONLY = 'NONE' as MetadataMode;

/** The passage the gate scores for one node: its content, and the caller's NodeWithScore. */
export interface NodePassage extends Passage {
  readonly nodeWithScore: NodeWithScore;
}

/** What the gate decided about a node, under `node.metadata.relevanceGate`. */
export interface RelevanceGateNodeDecision {
  readonly route: Exclude<Route, 'excluded'>;
  /** The rule that decided (e.g. 'threshold', 'evidence', 'contradicts-premise', 'fail-open'). */
  readonly rule: string;
  /** The scorer's probabilities (a copy), or null when unscored. */
  readonly signals: Readonly<Record<string, number>> | null;
  /** The gate's score (GateItem.score), also the NodeWithScore's score; null for a fail-open node. */
  readonly score: number | null;
  /** The relevance the keep/drop decision used; null for a fail-open node. */
  readonly relevance: number | null;
  readonly tier: string | null;
  /** Why the pair is unscored (fail-open nodes only reach the output), or null. */
  readonly reason: UnscoredReason | null;
  /** Position in the input nodes. */
  readonly rank: number;
  /** true: from the score cache; 'approximate': a near-identical earlier query's score (docs/cache.md). */
  readonly cached: boolean | 'approximate';
  /** The id the gate used (the node's id_, or `#index` when it repeated one). */
  readonly passageId: string;
}

/** Metadata of a returned node: the caller's metadata plus the gate's decision. */
export type RelevanceGateNodeMetadata = Metadata & { readonly relevanceGate: RelevanceGateNodeDecision };

/**
 * The text of a query as LlamaIndex passes it (a string, or multi-modal content whose text parts
 * are joined as LlamaIndex's own extractText joins them).
 */
export function queryText(query: MessageContent | undefined): string {
  if (typeof query === 'string') return query;
  if (query === undefined || query === null)
    throw new MissingQueryError('postprocessNodes needs the query: the gate scores (query, node) pairs');
  if (!Array.isArray(query)) throw new MissingQueryError('the query must be a string or LlamaIndex MessageContent');
  const texts = query.filter((part) => part?.type === 'text').map((part) => (part as { text: unknown }).text);
  if (texts.length === 0 || !texts.every((t): t is string => typeof t === 'string'))
    throw new MissingQueryError('the query has no text part to score passages against');
  return texts.join('\n\n');
}

function isNode(value: unknown): value is BaseNode {
  if (typeof value !== 'object' || value === null) return false;
  const node = value as BaseNode;
  return typeof node.getContent === 'function' && typeof node.clone === 'function';
}

/** One passage per node, in input order; ids are the nodes' id_ where unique (cache keys). */
export function nodePassages(nodes: readonly NodeWithScore[], titleKey: string | undefined): NodePassage[] {
  for (let i = 0; i < nodes.length; i++) {
    const entry = nodes[i];
    if (typeof entry !== 'object' || entry === null || !isNode(entry.node))
      throw new InvalidNodeError(i, 'must be a NodeWithScore { node, score? } whose node is a LlamaIndex node');
  }
  const ids = uniquePassageIds(nodes.map((n) => (typeof n.node.id_ === 'string' ? n.node.id_ : undefined)));
  return nodes.map((nodeWithScore, i) => {
    const text = nodeWithScore.node.getContent(CONTENT_ONLY);
    if (typeof text !== 'string') throw new InvalidNodeError(i, 'has no text content');
    const passage: { -readonly [K in keyof NodePassage]: NodePassage[K] } = { id: ids[i], text, nodeWithScore };
    const title = titleKey === undefined ? undefined : nodeWithScore.node.metadata?.[titleKey];
    if (typeof title === 'string' && title.length > 0) passage.title = title;
    return passage;
  });
}

/** `keys` with `key` added once. */
function withKey(keys: readonly string[] | undefined, key: string): string[] {
  const out = Array.isArray(keys) ? [...keys] : [];
  if (!out.includes(key)) out.push(key);
  return out;
}

/**
 * A copy of the item's node (the caller's node is never mutated) with the decision in its metadata,
 * and the NodeWithScore carrying the gate's score.
 */
export function gatedNode(item: GateItem<NodePassage>): NodeWithScore<RelevanceGateNodeMetadata> {
  const source = item.passage.nodeWithScore.node;
  const decision: RelevanceGateNodeDecision = {
    route: item.route === 'conflicting' ? 'conflicting' : 'included',
    rule: item.rule,
    signals: item.signals === null ? null : Object.assign({}, item.signals),
    score: item.score,
    relevance: item.relevance,
    tier: item.tier ?? null,
    reason: item.reason ?? null,
    rank: item.rank,
    cached: item.cached,
    passageId: item.id,
  };
  // LlamaIndex's own deep copy keeps the node's class (TextNode, Document, ImageNode, ...).
  const copy = source.clone() as BaseNode<RelevanceGateNodeMetadata>;
  copy.metadata = Object.assign({}, copy.metadata, { [DECISION_KEY]: decision });
  // Response synthesizers and embedders print metadata into their text (MetadataMode.LLM /
  // EMBED): the decision is for the application, not for the model's prompt or the vectors.
  copy.excludedLlmMetadataKeys = withKey(copy.excludedLlmMetadataKeys, DECISION_KEY);
  copy.excludedEmbedMetadataKeys = withKey(copy.excludedEmbedMetadataKeys, DECISION_KEY);
  // The same content: a docstore must not see a new node because the gate added its metadata.
  copy.hash = source.hash;
  const out: NodeWithScore<RelevanceGateNodeMetadata> = { node: copy };
  if (item.score !== null) out.score = item.score;
  return out;
}

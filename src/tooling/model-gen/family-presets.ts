/**
 * Presets of the non-BERT families people deploy as cross-encoders / classifiers, at the real
 * sizes of the checkpoint each one mimics (for benchmarks). Tests shrink them with
 * `ModelShapeOptions` (layers, hidden, heads, intermediate) while vocabulary and window stay real.
 * Every model built from them is a SPEED/SHAPE model: random weights, scores mean nothing.
 */
import type { CrossEncoderModelSpec, CrossEncoderOutputSpec } from './spec-types.js';

/** A classifier head: the single `logits` output [batch, labels.length] and its config labels. */
export interface HeadSpec {
  readonly labels: readonly string[];
  readonly description: string;
}

/**
 * The heads the generator writes, labelled as the real configs spell them:
 * relevance as sentence-transformers cross-encoders (one LABEL_0 logit), NLI as
 * FacebookAI/roberta-large-mnli, injection as the DeBERTa-v3 prompt-injection fine-tune.
 */
export const HEADS = {
  relevance: { labels: ['LABEL_0'], description: 'relevance head: logits [batch, 1] (reranker)' },
  nli: {
    labels: ['CONTRADICTION', 'NEUTRAL', 'ENTAILMENT'],
    description: 'NLI head: logits [batch, 3], 0=CONTRADICTION 1=NEUTRAL 2=ENTAILMENT (roberta-large-mnli)',
  },
  injection: {
    labels: ['safe', 'prompt_injection'],
    description: 'injection classifier: logits [batch, 2], 0=safe 1=prompt_injection',
  },
} as const satisfies Record<string, HeadSpec>;

export type HeadName = keyof typeof HEADS;

export function isHeadName(name: string): name is HeadName {
  return Object.hasOwn(HEADS, name);
}

export function headOutputs(head: HeadSpec): readonly CrossEncoderOutputSpec[] {
  return [{ name: 'logits', size: head.labels.length }];
}

const realSizes = {
  outputs: [{ name: 'logits', size: 1 }],
  initStd: 'fan-in',
} as const satisfies Partial<CrossEncoderModelSpec>;

/**
 * Family presets. `pairedTokenizer` names the folder of shared/tokenizers/ (real tokenizer and
 * config files) each one is meant to be written with.
 */
export const FAMILY_PRESETS = {
  'roberta-nli': {
    ...realSizes,
    name: 'roberta-nli',
    family: 'roberta',
    numLayers: 24,
    hiddenSize: 1024,
    numHeads: 16,
    intermediateSize: 4096,
    vocabSize: 50265,
    maxPositionEmbeddings: 514,
    typeVocabSize: 1,
    tokenTypeInput: false,
    padTokenId: 1,
    layerNormEps: 1e-5,
    outputs: headOutputs(HEADS.nli),
    labels: HEADS.nli.labels,
    description: 'sizes and NLI head of FacebookAI/roberta-large-mnli (speed/shape only, random weights)',
  },
  'xlmr-reranker': {
    ...realSizes,
    name: 'xlmr-reranker',
    family: 'xlm-roberta',
    numLayers: 12,
    hiddenSize: 768,
    numHeads: 12,
    intermediateSize: 3072,
    vocabSize: 250002,
    maxPositionEmbeddings: 514,
    typeVocabSize: 1,
    tokenTypeInput: false,
    padTokenId: 1,
    layerNormEps: 1e-5,
    labels: HEADS.relevance.labels,
    description: 'sizes of BAAI/bge-reranker-base (XLM-RoBERTa base, 1 logit; speed/shape only, random weights)',
  },
  'modernbert-reranker': {
    ...realSizes,
    name: 'modernbert-reranker',
    family: 'modernbert',
    numLayers: 22,
    hiddenSize: 768,
    numHeads: 12,
    intermediateSize: 1152,
    vocabSize: 50368,
    maxPositionEmbeddings: 8192,
    typeVocabSize: 1,
    tokenTypeInput: false,
    padTokenId: 50283,
    layerNormEps: 1e-5,
    classifierPooling: 'mean',
    ropeTheta: 160000,
    labels: HEADS.relevance.labels,
    description:
      'sizes of a ModernBERT-base reranker (e.g. gte-reranker-modernbert-base), 8192 window (speed/shape only, random weights)',
  },
  'deberta-injection': {
    ...realSizes,
    name: 'deberta-injection',
    family: 'deberta-v2',
    numLayers: 12,
    hiddenSize: 768,
    numHeads: 12,
    intermediateSize: 3072,
    vocabSize: 128100,
    maxPositionEmbeddings: 512,
    typeVocabSize: 0,
    tokenTypeInput: false,
    padTokenId: 0,
    layerNormEps: 1e-7,
    positionBuckets: 256,
    outputs: headOutputs(HEADS.injection),
    labels: HEADS.injection.labels,
    description:
      'sizes and head of a microsoft/deberta-v3-base prompt-injection classifier (speed/shape only, random weights)',
  },
} as const satisfies Record<string, CrossEncoderModelSpec>;

export type FamilyPresetName = keyof typeof FAMILY_PRESETS;

/** shared/tokenizers/ folder whose real files each family preset pairs with. */
export const PAIRED_TOKENIZER_FOLDER: Record<FamilyPresetName, string> = {
  'roberta-nli': 'roberta-large-mnli',
  'xlmr-reranker': 'bge-reranker-large',
  'modernbert-reranker': 'modernbert-large',
  'deberta-injection': 'deberta-v3-base-injection-finetune',
};

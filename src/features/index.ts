/** Lexical features: tokenizer, corpus statistics, native batch extractor, versioned schema. */
export * from './schema.js';
export * from './errors.js';
export { tokenize } from './tokenize.js';
export {
  CorpusStats,
  CorpusStatsBuilder,
  buildCorpusStats,
  saveCorpusStats,
  loadCorpusStats,
  CORPUS_STATS_FORMAT,
  CORPUS_STATS_FORMAT_VERSION,
  type StatsDocument,
  type TermDocumentFrequency,
  type BuildCorpusStatsOptions,
} from './corpus-stats.js';
export {
  extractFeatures,
  extractFeaturesAsync,
  featureRow,
  type FeaturePassage,
  type PassthroughValues,
  type PassthroughInput,
} from './extract.js';
export { LexicalFeaturizer, type LexicalFeaturizerOptions } from './featurizer.js';

/** Public API of relevance-gate. Each module adds its exports here. */
export * from './errors.js';
export type {
  Passage,
  ScoreOptions,
  SignalProbabilities,
  DetailedPairScore,
  ScorerPairResult,
  Scorer,
  TierName,
} from './types.js';
export { isDetailedPairScore } from './types.js';

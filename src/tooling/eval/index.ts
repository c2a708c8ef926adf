/**
 * relevance-gate/eval: judged collections, the BM25 first stage, ranking and gate metrics, query
 * splits, and the evaluation behind `relevance-gate eval`. Tooling: the runtime never imports it.
 */
export {
  loadCollection,
  docPassage,
  judgmentsOf,
  judgedQueryIds,
  CollectionFormatError,
  type Collection,
  type CollectionDoc,
  type CollectionQuery,
  type Qrels,
} from './collection.js';
export {
  createBm25FirstStage,
  DEFAULT_BM25,
  type FirstStage,
  type FirstStageInfo,
  type Candidate as FirstStageCandidate,
  type Bm25Params,
} from './first-stage.js';
export {
  ndcgAt,
  dcgAt,
  averagePrecision,
  thresholdSweep,
  thresholdGrid,
  thresholdForPrecision,
  keptSetStats,
  type ThresholdRow,
  type LabelledScore,
  type KeptSetStats,
} from './metrics.js';
export { splitQueries, type QuerySplit, type SplitOptions } from './splits.js';
export { runEval, EvalScoringError, type EvalOptions, type EvalReport } from './run-eval.js';
export {
  corpusEmbeddings,
  queryEmbeddings,
  createDenseFirstStage,
  precomputedScorer,
  fitEmbeddingCalibration,
  calibrationPairs,
  type CalibrationPairs,
  type CorpusEmbeddings,
  type EmbeddingCalibrationFit,
} from './embedding-tier.js';
export { fitPlatt, plattProbability, type PlattFit, type PlattParameters } from '../../calibration/platt.js';
export {
  fitCalibratedThreshold,
  serializeCalibratedThreshold,
  type FitCalibratedThresholdInput,
} from '../../gate/calibration.js';
export {
  type FitOptions,
  fitOperatingPoints,
  operatingPointKept,
  operatingPointMetrics,
  operatingPointRows,
  thresholdMetrics,
  keptMetrics,
  keepAllF1,
  oracleCutF1,
  gridBestF1,
  gridBestPrecision,
  PRECISE_BOUND_RECALL,
  operatingPointBounds,
  FIT_OBJECTIVES,
  FIT_BETAS,
  FIT_SHIFTS,
  PRECISE_RECALL_FLOOR,
  type GateList,
  type JudgedGateList,
  type OperatingPointBounds,
  type OperatingPointFit,
  type OperatingPointMetrics,
  type OperatingPointRow,
  type JunkSourceShare,
} from './operating-points.js';
export {
  scoreCollectionForFit,
  fitScorerOperatingPoints,
  operatingPointsFileOf,
  type FitCollection,
  type ScoredCollection,
  type CollectionPointsReport,
  type JunkKept,
  type ScorerPointsFit,
} from './fit-scorer-points.js';
export { parseScoredLists, SCORED_LISTS_FORMAT, serializeScoredLists } from './scored-lists-file.js';
export {
  OPERATING_POINTS_FILE,
  OPERATING_POINTS_FORMAT,
  operatingPointsForScorer,
  parseOperatingPointsFile,
  readOperatingPointsFile,
  serializeOperatingPointsFile,
} from '../../operating-points/file.js';

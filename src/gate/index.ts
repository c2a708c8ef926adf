/** The gate's public surface (re-exported from the package root). */
export { createGate, rerouteResult, DEFAULT_MAX_PASSAGES } from './gate.js';
export { DEFAULT_ROUTING_RULES, createDefaultRoutingRules, type DefaultRoutingLimits } from './policies/rules.js';
export { countWords } from './policies/adaptive.js';
export { DEFAULT_THRESHOLD, DEFAULT_RELATED_THRESHOLD, DEFAULT_RELEVANCE_SIGNALS } from './policy.js';
export {
  CALIBRATED_THRESHOLD_FORMAT,
  CALIBRATED_THRESHOLD_FORMAT_V1,
  IDENTITY_PLATT,
  fitPlatt,
  plattProbability,
  calibrate,
  calibratedThresholdOf,
  thresholdForPrecision,
  fitCalibratedThreshold,
  assertCalibratedFor,
  serializeCalibratedThreshold,
  parseCalibratedThreshold,
  type PlattParameters,
  type PlattFit,
  type CalibratedThreshold,
  type CalibrationFitInfo,
  type FitCalibratedThresholdInput,
  type SelfCalibratedScorer,
  type LabelledScore,
  type ThresholdRow,
} from './calibration.js';
export {
  DuplicatePassageIdError,
  InvalidPolicyError,
  CalibrationModelMismatchError,
  CalibrationFormatError,
} from './errors.js';
export type {
  Route,
  UnscoredReason,
  Comparison,
  SignalCondition,
  RuleContext,
  RulePredicate,
  RoutingRule,
  MissingSignalBehaviour,
  EarlyStopPolicy,
  QueryLengthThreshold,
  ThresholdContext,
  ThresholdFunction,
  GatePolicy,
  GateConfig,
  FilterOptions,
  GateItem,
  GateStats,
  GateTier,
  GateTimings,
  GateResult,
  GateStream,
  RerouteOptions,
  Gate,
} from './types.js';
export {
  operatingPointThreshold,
  rankedCutValue,
  OPERATING_POINT_NAMES,
} from './policies/operating-points.js';
export type { GateMode, OperatingPoint, OperatingPointName, OperatingPoints } from './types.js';
export type { ListFeatureWeights, ModelDecisions, ScoreCalibration, Sufficiency } from '../operating-points/types.js';
export {
  OPERATING_POINTS_FORMAT,
  OperatingPointsFormatError,
  OperatingPointsModelMismatchError,
  loadOperatingPoints,
  readOperatingPointsFile,
  parseOperatingPointsFile,
  operatingPointsForScorer,
  serializeOperatingPointsFile,
  type OperatingPointsFile,
  type OperatingPointsFittedOn,
  type OperatingPointsHeldOut,
} from '../operating-points/file.js';

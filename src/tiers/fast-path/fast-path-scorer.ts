/**
 * The fast-path scorer: text → native lexical features → native tree ensemble → relevance
 * probability, all on the calling thread for ordinary batches (k = 20 takes tens of µs).
 *
 * Bounded time on the calling thread: a request with more text than `sliceChars` (after each
 * passage is cut to `maxPassageChars`) is scored in slices of at most that much text; between
 * slices the scorer yields to the event loop (so deadline timers and other requests run) and
 * checks the deadline and the AbortSignal. Pairs of slices not started by the deadline come back
 * null (unscored: the gate applies its fallback); an abort rejects the call. Features are per pair,
 * so a pair scores the same in any slice. The model is run once at load (warm-up), so the first
 * request does not pay the first-call costs.
 * Loads a model directory (docs/fast-path-model-dir.md): meta.json + tree model file + optional
 * corpus statistics, and refuses a model trained on another feature schema.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  AbortedError,
  DeadlineExceededError,
  InvalidArgumentError,
  ModelFormatError,
  UnsupportedModelError,
} from '../../errors.js';
import { CorpusStats, loadCorpusStats } from '../../features/corpus-stats.js';
import { FeatureSchemaMismatchError } from '../../features/errors.js';
import {
  boundText,
  DEFAULT_FEATURE_PASSAGE_CHARS,
  DEFAULT_FEATURE_REQUEST_CHARS,
  LexicalFeaturizer,
} from '../../features/featurizer.js';
import {
  FEATURE_NAMES,
  FEATURE_SCHEMA_VERSION,
  NUM_FEATURES,
  TOKENIZER_VERSION,
  assertFeatureSchema,
} from '../../features/schema.js';
import { IDENTITY_PLATT, type PlattParameters, plattProbability } from '../../calibration/platt.js';
import { RANKING, RELEVANT } from '../../signals.js';
import { markCutByDeadline } from '../../scoring/pair-result.js';
import { decisionsForScorer, OPERATING_POINTS_FILE, readOperatingPointsFile } from '../../operating-points/file.js';
import type { ModelDecisions } from '../../operating-points/types.js';
import { packageRoot } from '../../util/package-root.js';
import type { DetailedPairScore, Passage, ScoreOptions, Scorer, ScorerPairResult } from '../../types.js';
import { loadTreeModel } from './load-tree-model.js';
import type { TreeObjective } from './model-ir.js';
import {
  lexicalEvidence,
  type RankingBlend,
  rankingBlendProblem,
  rankingLogit,
  rankingProbability,
} from './ranking-blend.js';
import type { TreeModel } from './tree-model.js';

/** The tier label on the fast path's results, in router stats and metrics. */
export const FAST_PATH_TIER = 'fast-path';
/**
 * meta.json's `format`. It keeps the spelling it was first written with: every fast-path model
 * folder (the shipped one included) carries it, and meta.json is part of the model's id.
 */
export const FAST_PATH_MODEL_FORMAT = 'relevance-gate/fastpath-model';
export const FAST_PATH_MODEL_FORMAT_VERSION = 1;

/** meta.json of a fast-path model directory. */
export interface FastPathModelMeta {
  readonly format: typeof FAST_PATH_MODEL_FORMAT;
  readonly formatVersion: number;
  readonly schemaVersion: string;
  readonly tokenizerVersion?: string;
  readonly featureNames: readonly string[];
  readonly modelFile: string;
  readonly objective: TreeObjective;
  readonly recommendedThreshold?: number;
  readonly targetPrecision?: number;
  readonly statsFile?: string;
  readonly trainedOn?: readonly string[];
  /** relevance = σ(a·margin + b) (src/calibration/platt.ts); absent: σ(margin), for probability objectives. */
  readonly calibration?: PlattParameters;
  /**
   * The ordering signal's blend (src/tiers/fast-path/ranking-blend.ts): when present the scorer also
   * emits `ranking` = σ((margin + λ · bm25_all / (2.2 · query_idf_sum)) / (1 + λ)); absent: `relevant` only.
   */
  readonly rankingBlend?: RankingBlend;
  readonly [extra: string]: unknown;
}

export interface LoadFastPathScorerOptions {
  /** Corpus statistics of the caller's collection (a `relevance-gate stats` file). */
  readonly statsPath?: string;
  /** Or the statistics themselves. Without either, the model directory's statsFile is used. */
  readonly stats?: CorpusStats;
  /** Batches with more text than this (UTF-16 units) extract features on a worker thread (default 262144). */
  readonly asyncThresholdChars?: number;
  /** Characters of a passage's text (and title) the features read; longer ones are cut (default 65536, see LexicalFeaturizerOptions). */
  readonly maxPassageChars?: number;
  /** Characters of one request after cutting; more is an InvalidArgumentError (default 16,777,216). */
  readonly maxRequestChars?: number;
  /**
   * Text (UTF-16 units, after cutting) scored in one go on the calling thread at most; a request
   * with more is scored in slices with a yield and a deadline check between them (default 65,536:
   * about 0.2–1 ms of extraction on the machine of docs/router.md).
   */
  readonly sliceChars?: number;
}

export const DEFAULT_SLICE_CHARS = 65_536;

export interface FastPathScorer extends Scorer {
  readonly tier: 'fast-path';
  /** Identifies the model files alone (model + meta.json): one id per model, whatever statistics it runs with. */
  readonly modelId: string;
  /** Identifies the corpus statistics the features are computed with. */
  readonly statsId: string;
  /** `${modelId}@${statsId}`: scores depend on both, so this is what caches key on. */
  readonly id: string;
  /** `['relevant']`, plus `'ranking'` when the model declares a ranking blend. */
  readonly signals: readonly string[];
  readonly meta: FastPathModelMeta;
  /** The gate threshold recommended with this model (probability), when meta.json gives one. */
  readonly recommendedThreshold: number | undefined;
  /** 'caller' when the caller gave statistics, 'model' when the directory's statsFile is used. */
  readonly statsSource: 'caller' | 'model';
  readonly stats: CorpusStats;
  readonly model: TreeModel;
  /** Feature rows of a batch, k × NUM_FEATURES (for debugging and reports). */
  features(query: string, passages: readonly Passage[]): Float32Array;
  /** Scores a small synthetic batch (done once at load); returns how long it took, ms. */
  warmUp(): Promise<number>;
}

const TREE_SIGNALS: readonly string[] = Object.freeze([RELEVANT]);
const BLEND_SIGNALS: readonly string[] = Object.freeze([RELEVANT, RANKING]);
const BM25_ALL = FEATURE_NAMES.indexOf('bm25_all');
const QUERY_IDF_SUM = FEATURE_NAMES.indexOf('query_idf_sum');
const PROBABILITY_OBJECTIVES: ReadonlySet<string> = new Set(['binary:logistic', 'reg:logistic']);

function fail(where: string, what: string): never {
  throw new ModelFormatError(`${where}: ${what}`);
}

/** Validates meta.json content (schema checks come after the structural ones). */
export function parseFastPathMeta(raw: unknown, where = 'meta.json'): FastPathModelMeta {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(where, 'not a JSON object');
  const m = raw as Record<string, unknown>;
  if (m.format !== FAST_PATH_MODEL_FORMAT)
    fail(where, `format must be "${FAST_PATH_MODEL_FORMAT}", got ${JSON.stringify(m.format)}`);
  if (m.formatVersion !== FAST_PATH_MODEL_FORMAT_VERSION) {
    fail(
      where,
      `formatVersion ${JSON.stringify(m.formatVersion)} is not supported (expected ${FAST_PATH_MODEL_FORMAT_VERSION})`,
    );
  }
  if (typeof m.schemaVersion !== 'string') fail(where, 'schemaVersion must be a string');
  if (!Array.isArray(m.featureNames) || !m.featureNames.every((n) => typeof n === 'string'))
    fail(where, 'featureNames must be an array of strings');
  if (typeof m.modelFile !== 'string' || m.modelFile === '') fail(where, 'modelFile must name the tree model file');
  if (typeof m.objective !== 'string') fail(where, 'objective must be a string');
  if (m.recommendedThreshold !== undefined) {
    const t = m.recommendedThreshold;
    if (typeof t !== 'number' || !(t >= 0 && t <= 1))
      fail(where, 'recommendedThreshold must be a probability in [0, 1]');
  }
  if (m.statsFile !== undefined && (typeof m.statsFile !== 'string' || m.statsFile === ''))
    fail(where, 'statsFile must be a file name');
  if (m.calibration !== undefined) {
    const c = m.calibration as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null || c.type !== 'platt' || !Number.isFinite(c.a) || !Number.isFinite(c.b)) {
      fail(where, 'calibration must be { "type": "platt", "a": number, "b": number }');
    }
  }
  if (m.rankingBlend !== undefined) {
    const problem = rankingBlendProblem(m.rankingBlend);
    if (problem !== undefined) fail(where, problem);
  }
  // A model of another schema version is refused with the typed error before anything else.
  assertFeatureSchema({ schemaVersion: m.schemaVersion, featureNames: m.featureNames });
  if (m.tokenizerVersion !== undefined && m.tokenizerVersion !== TOKENIZER_VERSION) {
    throw new FeatureSchemaMismatchError(
      FEATURE_SCHEMA_VERSION,
      m.schemaVersion,
      `model was trained with tokenizer ${String(m.tokenizerVersion)}, this build tokenises with ${TOKENIZER_VERSION}`,
    );
  }
  return m as unknown as FastPathModelMeta;
}

/** A file name inside the model directory (no absolute paths or `..`, so meta.json cannot point elsewhere). */
function fileInDir(dir: string, name: string, where: string): string {
  const full = resolve(dir, name);
  const root = resolve(dir);
  if (!full.startsWith(`${root}/`) && !full.startsWith(`${root}\\`))
    fail(where, `${JSON.stringify(name)} is not a file inside the model directory`);
  return full;
}

async function readBytes(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read ${what} ${path}: ${(cause as Error).message}`, { cause });
  }
}

/** The model shipped in the package (models/fast-path-lexical), wherever the package is installed. */
export const SHIPPED_FAST_PATH_MODEL_DIR: string = join(packageRoot(), 'models', 'fast-path-lexical');

/**
 * Loads a fast-path model directory into a Scorer (see docs/fast-path-model-dir.md); without a
 * directory, the shipped model. A relative path resolves against the working directory.
 */
export async function loadFastPathScorer(
  modelDir: string = SHIPPED_FAST_PATH_MODEL_DIR,
  options: LoadFastPathScorerOptions = {},
): Promise<FastPathScorer> {
  if (typeof modelDir !== 'string' || modelDir === '')
    throw new InvalidArgumentError('loadFastPathScorer expects a model directory path');
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options must be an object');
  if (options.stats !== undefined && options.statsPath !== undefined) {
    throw new InvalidArgumentError('pass either stats or statsPath, not both');
  }
  if (options.sliceChars !== undefined && (!Number.isSafeInteger(options.sliceChars) || options.sliceChars < 1))
    throw new InvalidArgumentError(`options.sliceChars must be a positive integer, got ${String(options.sliceChars)}`);
  if (options.stats !== undefined && !(options.stats instanceof CorpusStats)) {
    throw new InvalidArgumentError('options.stats must be a CorpusStats (loadCorpusStats / buildCorpusStats)');
  }
  const metaPath = join(modelDir, 'meta.json');
  const metaBytes = await readBytes(metaPath, 'model metadata');
  let rawMeta: unknown;
  try {
    rawMeta = JSON.parse(metaBytes.toString('utf8'));
  } catch (cause) {
    throw new ModelFormatError(`${metaPath}: not valid JSON (${(cause as Error).message})`, { cause });
  }
  const meta = parseFastPathMeta(rawMeta, metaPath);

  const modelPath = fileInDir(modelDir, meta.modelFile, metaPath);
  const modelBytes = await readBytes(modelPath, 'tree model');
  const model = await loadTreeModel(new Uint8Array(modelBytes.buffer, modelBytes.byteOffset, modelBytes.byteLength));
  if (model.objective !== meta.objective) {
    model.dispose();
    fail(metaPath, `objective ${meta.objective} differs from the model file's ${model.objective}`);
  }
  if (model.numFeatures !== NUM_FEATURES) {
    model.dispose();
    throw new FeatureSchemaMismatchError(
      FEATURE_SCHEMA_VERSION,
      meta.schemaVersion,
      `the tree model takes ${model.numFeatures} features, schema ${FEATURE_SCHEMA_VERSION} has ${NUM_FEATURES}`,
    );
  }
  if (model.numOutputs !== 1) {
    model.dispose();
    throw new UnsupportedModelError(
      `${modelPath}: the fast path needs a single-output model, this one has ${model.numOutputs}`,
    );
  }
  const calibration = meta.calibration;
  if (!PROBABILITY_OBJECTIVES.has(model.objective) && calibration === undefined) {
    model.dispose();
    throw new UnsupportedModelError(
      `${metaPath}: objective ${model.objective} does not produce probabilities and meta.json has no calibration`,
    );
  }

  let stats: CorpusStats;
  let statsSource: 'caller' | 'model';
  try {
    if (options.stats !== undefined) {
      stats = options.stats;
      statsSource = 'caller';
    } else if (options.statsPath !== undefined) {
      stats = await loadCorpusStats(options.statsPath);
      statsSource = 'caller';
    } else if (meta.statsFile !== undefined) {
      stats = await loadCorpusStats(fileInDir(modelDir, meta.statsFile, metaPath));
      statsSource = 'model';
    } else {
      throw new InvalidArgumentError(
        `no corpus statistics: pass { statsPath } or { stats }, or ship them in ${modelDir} and name them in meta.json statsFile`,
      );
    }
  } catch (err) {
    model.dispose();
    throw err;
  }

  const modelHash = createHash('sha256').update(modelBytes).update('\0').update(metaBytes).digest('hex');
  // The `fastpath/` prefix predates the tier's name: ids key caches and operating-points files
  // (the shipped model's included), so it stays as it was.
  const modelId = `fastpath/${FEATURE_SCHEMA_VERSION}/${modelHash.slice(0, 20)}`;
  // The model's own operating points, when its folder ships them (refused if fitted for another model).
  let decisions: ModelDecisions | undefined;
  const pointsPath = join(modelDir, OPERATING_POINTS_FILE);
  if (existsSync(pointsPath)) {
    try {
      decisions = decisionsForScorer(await readOperatingPointsFile(pointsPath), modelId);
    } catch (err) {
      model.dispose();
      throw err;
    }
  }
  const statsId = `stats/${createHash('sha256').update(stats.encode()).digest('hex').slice(0, 16)}`;
  const id = `${modelId}@${statsId}`;
  const featurizer = new LexicalFeaturizer(stats, {
    ...(options.asyncThresholdChars !== undefined ? { asyncThresholdChars: options.asyncThresholdChars } : {}),
    ...(options.maxPassageChars !== undefined ? { maxPassageChars: options.maxPassageChars } : {}),
    ...(options.maxRequestChars !== undefined ? { maxRequestChars: options.maxRequestChars } : {}),
  });
  // The gate's Platt scaling, with the same parameters: calibratedThresholdOf(scorer) reproduces p exactly.
  const platt: PlattParameters = calibration ?? IDENTITY_PLATT;

  const lambda = meta.rankingBlend?.lambda;
  const toResults = (margins: Float32Array | Float64Array, rows: Float32Array, k: number): ScorerPairResult[] => {
    const out = new Array<ScorerPairResult>(k);
    for (let i = 0; i < k; i++) {
      const m = margins[i]!;
      const p = plattProbability(platt, m);
      let r: DetailedPairScore;
      if (lambda === undefined) r = { probabilities: { relevant: p }, raw: { relevant: m }, tier: FAST_PATH_TIER };
      else {
        const row = i * NUM_FEATURES;
        const z = rankingLogit(m, lexicalEvidence(rows[row + BM25_ALL]!, rows[row + QUERY_IDF_SUM]!), lambda);
        r = {
          probabilities: { relevant: p, ranking: rankingProbability(z) },
          raw: { relevant: m, ranking: z },
          tier: FAST_PATH_TIER,
        };
      }
      out[i] = r;
    }
    return out;
  };

  const checkTime = (opts: ScoreOptions | undefined): void => {
    if (opts?.signal?.aborted) throw new AbortedError();
    if (opts?.deadline !== undefined && Date.now() > opts.deadline) throw new DeadlineExceededError();
  };

  const limits: SliceLimits = {
    sliceChars: options.sliceChars ?? DEFAULT_SLICE_CHARS,
    maxPassageChars: options.maxPassageChars ?? DEFAULT_FEATURE_PASSAGE_CHARS,
    maxRequestChars: options.maxRequestChars ?? DEFAULT_FEATURE_REQUEST_CHARS,
  };

  /** One batch; the deadline and abort are checked again between extraction and the trees. */
  const scoreAll = async (
    query: string,
    passages: readonly Passage[],
    opts?: ScoreOptions,
  ): Promise<ScorerPairResult[]> => {
    const rows = await featurizer.featurizeAsync(query, passages);
    const k = passages.length;
    if (k === 0) return [];
    checkTime(opts);
    const margins = await model.predictAsync(rows, k, { output: 'margin' });
    return toResults(margins, rows, k);
  };

  /**
   * Milliseconds per character of the slices scored so far (an EWMA), so a slice that cannot finish
   * before the deadline is not started: the call then answers by its budget whatever the input.
   */
  let msPerChar = 0;

  /** Slice by slice; pairs of slices not started by the deadline (or that would end past it) stay null. */
  const scoreSliced = async (
    query: string,
    passages: readonly Passage[],
    slices: readonly Slice[],
    opts: ScoreOptions | undefined,
  ): Promise<ScorerPairResult[]> => {
    const out = new Array<ScorerPairResult>(passages.length).fill(null);
    let cut = false;
    // The deadline is on the Date.now() clock (whole ms); measure against it on the finer clock,
    // a margin early: Date.now() is floored, and the caller's own deadline timer drops an answer
    // that comes after it, every pair with it.
    const deadline = opts?.deadline;
    const end =
      deadline === undefined ? undefined : performance.now() + (deadline - Date.now()) - SLICE_DEADLINE_MARGIN_MS;
    for (let s = 0; s < slices.length; s++) {
      if (s > 0) await yieldToEventLoop();
      if (opts?.signal?.aborted) throw new AbortedError();
      const { start, end: stop, chars } = slices[s]!;
      const started = performance.now();
      if (end !== undefined) {
        if (started >= end || Date.now() >= (deadline as number)) {
          cut = true;
          break;
        }
        if (s > 0 && started + msPerChar * chars > end) {
          // Not started: it would end past the deadline. Halve the estimate, so one slow slice (a
          // pause, a cold start) cannot keep later calls from scoring.
          msPerChar /= 2;
          cut = true;
          break;
        }
      }
      const results = await scoreAll(query, passages.slice(start, stop));
      const rate = (performance.now() - started) / Math.max(1, chars);
      msPerChar = msPerChar === 0 ? rate : 0.8 * msPerChar + 0.2 * rate;
      for (let j = 0; j < results.length; j++) out[start + j] = results[j];
    }
    return cut ? markCutByDeadline(out) : out;
  };

  const warmUp = async (): Promise<number> => {
    const t0 = performance.now();
    await scoreAll(WARM_UP_QUERY, WARM_UP_PASSAGES);
    featurizer.featurize(WARM_UP_QUERY, WARM_UP_PASSAGES);
    // The sliced path (a request over sliceChars, passages over maxPassageChars cut) with a
    // deadline, so the first large request of a process runs warm code and a measured rate.
    const large = warmUpLargePassages(limits);
    const slices = planSlices(large, limits);
    if (slices !== undefined)
      await scoreSliced(WARM_UP_QUERY, large, slices, { deadline: Date.now() + WARM_UP_DEADLINE_MS });
    return performance.now() - t0;
  };
  await warmUp();

  return {
    id,
    modelId,
    statsId,
    signals: lambda === undefined ? TREE_SIGNALS : BLEND_SIGNALS,
    ...(decisions === undefined ? {} : { decisions }),
    tier: FAST_PATH_TIER,
    meta,
    recommendedThreshold: meta.recommendedThreshold,
    statsSource,
    stats,
    model,
    features(query: string, passages: readonly Passage[]): Float32Array {
      return featurizer.featurize(query, passages);
    },
    warmUp,
    async score(
      query: string,
      passages: readonly Passage[],
      opts?: ScoreOptions,
    ): Promise<ReadonlyArray<ScorerPairResult>> {
      checkTime(opts);
      const slices = planSlices(passages, limits);
      if (slices !== undefined) return scoreSliced(query, passages, slices, opts);
      return scoreAll(query, passages, opts);
    },
  };
}

const WARM_UP_QUERY = 'boundary layer transition on a swept wing';
/** How long before the deadline the sliced path stops starting slices (see scoreSliced). */
const SLICE_DEADLINE_MARGIN_MS = 1;
/** Generous: the warm-up's sliced request must run every slice. */
const WARM_UP_DEADLINE_MS = 60_000;

/** Three passages, one over maxPassageChars, that together span several slices. */
function warmUpLargePassages(limits: SliceLimits): Passage[] {
  const sentence = 'Measurements of the boundary layer on a swept wing show transition moving forward. ';
  const text = (chars: number) => sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
  const size = Math.min(limits.sliceChars, limits.maxPassageChars);
  return [
    { id: 'warm-up-large-0', text: text(size) },
    { id: 'warm-up-large-1', text: text(limits.maxPassageChars + 1024) },
    { id: 'warm-up-large-2', title: 'Swept wing study', text: text(Math.ceil(size / 2)) },
  ];
}
const WARM_UP_PASSAGES: readonly Passage[] = Object.freeze(
  Array.from({ length: 4 }, (_, i) =>
    Object.freeze({
      id: `warm-up-${i}`,
      title: `Swept wing study ${i}`,
      text: 'Measurements of the boundary layer on a swept wing show transition moving toward the leading edge as the speed rises; crossflow instability dominates at high sweep angles.',
    }),
  ),
);

/** Passages [start, end) of one slice and their characters (after cutting). */
interface Slice {
  readonly start: number;
  readonly end: number;
  readonly chars: number;
}

interface SliceLimits {
  readonly sliceChars: number;
  readonly maxPassageChars: number;
  readonly maxRequestChars: number;
}

/** Lets timers (deadlines) and other requests run between two slices of one request. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * [start, end) passage ranges of at most `sliceChars` characters each (a longer passage is a slice
 * of its own), or undefined when the request is one slice or is malformed (then the featurizer,
 * on the whole request, reports what is wrong with the typed error it always gives). Refuses a
 * request over maxRequestChars as the featurizer would.
 */
function planSlices(passages: readonly Passage[], limits: SliceLimits): Slice[] | undefined {
  if (!Array.isArray(passages) || passages.length < 2) return undefined;
  const sizes = new Array<number>(passages.length);
  let total = 0;
  for (let i = 0; i < passages.length; i++) {
    const p: unknown = passages[i];
    if (typeof p !== 'object' || p === null) return undefined;
    const { text, title } = p as { text?: unknown; title?: unknown };
    if (typeof text !== 'string' || (title !== undefined && title !== null && typeof title !== 'string'))
      return undefined;
    const size =
      boundText(text, limits.maxPassageChars).length +
      (typeof title === 'string' ? boundText(title, limits.maxPassageChars).length : 0);
    sizes[i] = size;
    total += size;
  }
  if (total <= limits.sliceChars) return undefined;
  if (total > limits.maxRequestChars) return undefined; // the featurizer refuses it with its typed error
  const slices: Slice[] = [];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < passages.length; i++) {
    if (i > start && chars + sizes[i] > limits.sliceChars) {
      slices.push({ start, end: i, chars });
      start = i;
      chars = 0;
    }
    chars += sizes[i];
  }
  slices.push({ start, end: passages.length, chars });
  return slices;
}

/**
 * MODEL_CARD.md for the fast-path model, generated from the training run and the test evaluation.
 * Deterministic text (no dates, no timings), so reruns produce the same card.
 */
import { FEATURE_DEFINITIONS, FEATURE_SCHEMA_VERSION, TOKENIZER_VERSION } from '../../features/schema.js';
import { renderOperatingPointsSection } from './operating-points-card.js';
import type { TestResult } from './test-result.js';

export type { TestResult } from './test-result.js';
import type { TrainFastPathResult } from './train-fast-path.js';

export interface ModelCardInput {
  readonly training: TrainFastPathResult;
  readonly tests: readonly TestResult[];
  readonly meta: Readonly<Record<string, unknown>>;
  readonly options: {
    readonly seed: number;
    readonly targetPrecision: number;
    readonly k: number;
    readonly gateK: number;
    readonly grid: string;
    readonly names: readonly string[];
  };
  readonly statsTerms: number;
}

const f3 = (v: number | null | undefined): string => (v === null || v === undefined ? 'n/a' : v.toFixed(3));
const f4 = (v: number | null | undefined): string => (v === null || v === undefined ? 'n/a' : v.toFixed(4));
const signed = (a: number | null, b: number | null): string =>
  a === null || b === null ? 'n/a' : `${b - a >= 0 ? '+' : ''}${(b - a).toFixed(3)}`;

/** The limit line about text-only reranking, naming the collections where it lost to BM25 on test. */
function textOnlyWorse(tests: readonly TestResult[], k: number): string[] {
  const worse = tests
    .filter(
      (t) =>
        t.textOnly.ndcg10.reranked !== null &&
        t.withRank.ndcg10.firstStage !== null &&
        t.textOnly.ndcg10.reranked < t.withRank.ndcg10.firstStage,
    )
    .map((t) => t.name);
  if (worse.length === 0)
    return [
      '- Text only (no `retrieval_rank`), reranking was not worse than the BM25 order on any test collection (table above).',
    ];
  return [
    `- Without \`retrieval_rank\` (text only) it reorders the BM25 top ${k} WORSE than BM25 itself on the test queries of`,
    `  ${worse.join(', ')} (table above): pass the retriever rank when reranking, or use it only to gate.`,
  ];
}

/** Test queries split by how good BM25 already was: where reranking gains, where it loses. */
function gainByDifficulty(tests: readonly TestResult[]): string[] {
  const rows = tests.map((t) => {
    const part = (hard: boolean): string => {
      const deltas = t.withRank.perQuery
        .filter((q) => q.ndcg10FirstStage !== null && q.ndcg10Reranked !== null && q.ndcg10FirstStage < 0.5 === hard)
        .map((q) => q.ndcg10Reranked! - q.ndcg10FirstStage!);
      if (deltas.length === 0) return '0 | n/a';
      return `${deltas.length} | ${signed(0, deltas.reduce((a, b) => a + b, 0) / deltas.length)}`;
    };
    const all = t.withRank.perQuery.filter((q) => q.ndcg10FirstStage !== null && q.ndcg10Reranked !== null);
    const wins = all.filter((q) => q.ndcg10Reranked! > q.ndcg10FirstStage! + 1e-12).length;
    const losses = all.filter((q) => q.ndcg10Reranked! < q.ndcg10FirstStage! - 1e-12).length;
    return `| ${t.name} | ${part(true)} | ${part(false)} | ${wins} / ${losses} / ${all.length - wins - losses} |`;
  });
  return [
    'Per test query (with rank), split by how good the BM25 order already was:',
    '',
    '| collection | queries with BM25 nDCG@10 < 0.5 | mean Δ | queries with BM25 nDCG@10 >= 0.5 | mean Δ | better / worse / same |',
    '|---|---|---|---|---|---|',
    ...rows,
  ];
}

/** Limit line naming the test collections where the reranking gain is within ±0.005. */
function noMeasurableGain(tests: readonly TestResult[]): string[] {
  const flat = tests.filter((t) => {
    const b = t.withRank.ndcg10.firstStage;
    const r = t.withRank.ndcg10.reranked;
    return b !== null && r !== null && Math.abs(r - b) < 0.005;
  });
  if (flat.length === 0) return [];
  return [
    `- No measurable reranking gain on ${flat.map((t) => `${t.name} (${signed(t.withRank.ndcg10.firstStage, t.withRank.ndcg10.reranked)})`).join(', ')}: the model`,
    '  helps queries where BM25 ranks poorly and costs a little where BM25 is already good (per-query table above); a',
    '  test set of mostly well-served queries shows no net gain. Use it there for the gate, not for reordering.',
  ];
}

/** "1.4x-9.0x" over the collections' test gates (precision kept / precision keep-all). */
function precisionGainRange(tests: readonly TestResult[]): string {
  const ratios = tests
    .map((t) =>
      t.withRank.gate.precisionKept !== null && t.withRank.gate.precisionAll
        ? t.withRank.gate.precisionKept / t.withRank.gate.precisionAll
        : null,
    )
    .filter((r): r is number => r !== null);
  if (ratios.length === 0) return 'n/a';
  return `${Math.min(...ratios).toFixed(1)}x to ${Math.max(...ratios).toFixed(1)}x`;
}

/** Grid-table name of a point's method. */
function methodOf(point: TrainFastPathResult['chosen']['point']): string {
  const warm = point.lambdaMart?.warmStart;
  return warm ? `lambdamart from best pointwise (leaves ×${warm.scale})` : point.objective;
}

export function renderModelCard(input: ModelCardInput): string {
  const { training, tests, options } = input;
  const p = training.chosen.point;
  const th = training.threshold;
  const lines: string[] = [];
  const push = (...l: string[]): void => {
    lines.push(...l);
  };

  push(
    '# fast-path-lexical: the fast-path relevance model',
    '',
    'Gradient-boosted trees over lexical (query, passage) features computed natively by relevance-gate, trained on',
    'real relevance judgments. It scores a pair in microseconds and returns `relevance`, a probability-like value in',
    `[0, 1]. Recommended gate threshold: **${th.threshold.toFixed(4)}**, chosen for precision >= ${options.targetPrecision} on the`,
    `validation queries (see below). Files: \`model.json\` (XGBoost JSON, ${training.chosen.trees} trees), \`meta.json\`, \`splits.json\`,`,
    `\`corpus-stats.msgpack\` (statistics of all ${options.names.length} training collections, ${input.statsTerms} terms; used only when the caller`,
    'gives none), `training-report.json` (every number below, machine-readable).',
    '',
    '## Intended use',
    '',
    '- Rerank or gate the top 10-100 passages of a first-stage retriever before they reach an LLM, when a cross-encoder',
    '  is too slow or as the cheap first tier of the router.',
    '- Give it corpus statistics of YOUR collection (`relevance-gate stats --docs docs.jsonl --out stats.msgpack`, then',
    '  `loadFastPathScorer(dir, { statsPath })`): the features are IDF/BM25-based and were trained with per-collection statistics.',
    "- Pass the retriever's order as `passage.features.retrieval_rank` (1 = best) when you have it: the model was trained",
    '  with the rank present for half of the training queries and absent for the other half, and is better with it',
    '  (both are measured below).',
    '',
    '## Features',
    '',
    `Schema \`${FEATURE_SCHEMA_VERSION}\`, tokenizer \`${TOKENIZER_VERSION}\` (docs/features.md). In model column order:`,
    '',
    '| # | feature | kind | meaning |',
    '|---|---|---|---|',
    ...FEATURE_DEFINITIONS.map((d, i) => `| ${i} | \`${d.name}\` | ${d.kind} | ${d.meaning.replace(/\|/g, '\\|')} |`),
    '',
    ...featureSupplyLines(input.meta),
    '',
    '## Training data',
    '',
    `Collections from \`../shared/data\` (see its README and each SOURCE.md). QUERIES are split, never documents; seed ${options.seed}.`,
    `Split method: ${training.splits.method}. The query ids of every split are in \`splits.json\`.`,
    `Candidates: BM25 top ${options.k} per query (MiniSearch, k1 = 1.2, b = 0.75, stop words removed, no stemming; src/eval/first-stage.ts).`,
    'Labels: qrels grade > 0 = relevant; unjudged candidates count as not relevant.',
    'Collections with fewer than 100 training queries have their training queries repeated (a weight: ml-xgboost has no',
    'weight API) so the big collections do not drown them.',
    '',
    '| collection | docs | train q | validation q | test q | train pairs | relevant train pairs | rows incl. repeats |',
    '|---|---|---|---|---|---|---|---|',
    ...training.collections.map(
      (c) =>
        `| ${c.name} | ${c.docs} | ${c.queries.train} | ${c.queries.validation} | ${c.queries.test} | ${c.trainPairs} | ${c.trainPositives} | ${c.trainRowsWithCopies} |`,
    ),
    '',
    '## Training and model selection',
    '',
    `ml-xgboost 1.1.2 (WASM build of a pre-1.0 XGBoost), single thread, exact tree method, subsample 1, seed ${options.seed};`,
    `written as XGBoost JSON. Grid (\`${options.grid}\`), each point trained on the train queries and scored on the`,
    `validation queries (BM25 top ${options.k} reranked, retrieval_rank given). Selection: the highest MEAN per-collection nDCG@10 gain`,
    'over BM25 among the points whose WORST collection gain is >= 0 (when none is, the highest worst gain); LambdaMART picks',
    'its number of trees by the same rule after every round (early stopping), then competes with the pointwise points:',
    '',
    `| objective | depth | eta | min child weight | trees | ${options.names.join(' | ')} | mean gain | worst gain |`,
    `|---|---|---|---|---|${options.names.map(() => '---|').join('')}---|---|`,
    ...training.grid.map(
      (g) =>
        `| ${methodOf(g.point)} | ${g.point.maxDepth} | ${g.point.eta} | ${g.point.minChildWeight} | ${g.trees}${g.point.objective === 'lambdamart' ? ` (${g.roundsTrained} rounds trained, max ${g.point.rounds})` : ''} | ` +
        `${options.names.map((n) => f4(g.ndcg10ByCollection[n])).join(' | ')} | ${signed(0, g.selection.meanGain)} | ${signed(0, g.selection.worstGain)} (${g.selection.worstCollection}) |`,
    ),
    `| *BM25 alone* | | | | | ${options.names.map((n) => f4(training.collections.find((c) => c.name === n)?.validationNdcg10.firstStage)).join(' | ')} | | |`,
    '',
    `Chosen: **${methodOf(p)}, depth ${p.maxDepth}, eta ${p.eta}, ${training.chosen.trees} trees** (min_child_weight ${p.minChildWeight}).`,
    'Objectives: `binary:logistic` with label = relevant; `reg:logistic` with label = grade / highest grade of the collection;',
    "`reg:squarederror` with a QUERY-CENTRED label (grade / highest grade, minus its mean over the query's candidates), a",
    'pointwise stand-in for ranking. `lambdamart`: LambdaMART for NDCG (Burges 2010) built on ml-xgboost, which has no',
    'query groups or custom objectives: every round computes the LambdaRank gradients of each training query (RankNet pairs',
    'weighted by the |ΔNDCG| of swapping them, linear gain = qrels grade) from the current scores, fits ONE least-squares',
    'tree to them with ml-xgboost (its structure; min child weight = least rows per leaf), sets each leaf to the Newton step',
    'eta × Σλ / (Σw + 0.001) of the rows reaching it, and adds the tree. The model still scores each (query, passage) pair',
    "alone from its features; the model file's objective is `rank:ndcg` (margin = sum of the leaves, base_score 0).",
    '"lambdamart from best pointwise": the same, boosting from the best pointwise model of the grid (its trees first, leaves',
    'scaled as shown, then the LambdaMART trees; 0 new trees would keep that model). Trees = all trees in the model.',
    ...(input.training.calibration
      ? [
          '',
          `Its margins are mapped to probabilities by Platt scaling fitted on the validation queries' BM25 top ${options.gateK}`,
          `(\`meta.json\` calibration: relevance = 1 / (1 + exp(-(${input.training.calibration.a.toFixed(6)} × margin + ${input.training.calibration.b.toFixed(6)}))).`,
        ]
      : []),
    ...rankingBlendLines(input.training, options.names),
    '',
    '## Recommended threshold',
    '',
    `${th.threshold.toFixed(4)}: on the validation queries' BM25 top ${options.gateK}, pooled over all collections, the threshold with the highest`,
    `recall at precision >= ${options.targetPrecision} (ties: the highest such threshold). Validation: precision ${f3(th.precision)}, recall ${f3(th.recall)},`,
    `${th.kept} of ${training.validationRows > 0 ? training.collections.reduce((n, c) => n + c.queries.validation, 0) * options.gateK : 0} pairs kept. Per collection on validation:`,
    '',
    '| collection | precision keep-all | precision kept | recall kept | kept per query |',
    '|---|---|---|---|---|',
    ...training.collections.map(
      (c) =>
        `| ${c.name} | ${f3(c.validationGate.precisionAll)} | ${f3(c.validationGate.precisionKept)} | ${f3(c.validationGate.recallKept)} | ${c.validationGate.keptPerQuery.toFixed(2)} |`,
    ),
    '',
    '## Results on the TEST queries',
    '',
    `Produced by running \`relevance-gate eval --queries test\` on the written model in a fresh process per collection`,
    `(per-collection corpus statistics built from its docs.jsonl). Reranking: BM25 top ${options.k}, in the order the gate returns`,
    `(${input.training.rankingBlend ? 'the `ranking` signal, see "Ranking blend"' : 'relevance'}). "with rank" = passages`,
    'carry their BM25 rank as retrieval_rank (the eval default); "text only" = `--no-retrieval-rank`.',
    '',
    '| collection | test q | nDCG@10 BM25 | reranked (with rank) | Δ | reranked (text only) | Δ |',
    '|---|---|---|---|---|---|---|',
    ...tests.map((t) => {
      const b = t.withRank.ndcg10.firstStage;
      return `| ${t.name} | ${t.withRank.queries} | ${f4(b)} | ${f4(t.withRank.ndcg10.reranked)} | ${signed(b, t.withRank.ndcg10.reranked)} | ${f4(t.textOnly.ndcg10.reranked)} | ${signed(b, t.textOnly.ndcg10.reranked)} |`;
    }),
    '',
    ...gainByDifficulty(tests),
    '',
    `Gate on the BM25 top ${options.gateK} at the recommended threshold ${th.threshold.toFixed(4)} (pooled over the test queries of each`,
    'collection; recall = share of the relevant passages among the top 20 that the gate keeps):',
    '',
    '| collection | precision keep-all 20 | precision kept | recall kept | kept per query | queries with nothing kept | text only: precision / recall kept |',
    '|---|---|---|---|---|---|---|',
    ...tests.map((t) => {
      const g = t.withRank.gate;
      const x = t.textOnly.gate;
      return `| ${t.name} | ${f3(g.precisionAll)} | ${f3(g.precisionKept)} | ${f3(g.recallKept)} | ${g.keptPerQuery.toFixed(2)} | ${g.queriesWithNothingKept} / ${g.queries} | ${f3(x.precisionKept)} / ${f3(x.recallKept)} |`;
    }),
    '',
    ...renderOperatingPointsSection(tests, options.gateK),
    '## Limits (read before relying on it)',
    '',
    '- Lexical features only: it cannot match synonyms or paraphrases that share no terms, and it knows nothing about',
    '  meaning, negation, staleness or prompt injection. It reorders and filters what BM25-like signals can see.',
    '- Small, old test collections: MED has 30 judged queries (6 test), CISI 76 (15 test), Cranfield 225 (45 test);',
    '  differences of a few nDCG points on them are within noise. Their judgments are from the 1960s-70s and incomplete',
    '  (unjudged = not relevant).',
    "- NFCorpus here is the authors' PRE-PROCESSED text (lower-cased, stop words removed, numbers replaced); scores on",
    '  natural text from that domain may differ. SciFact is claims → abstracts with ~1 relevant document per query.',
    ...(p.objective === 'lambdamart'
      ? [
          '- Trained on five small collections whose validation splits are tiny (MED 6 queries, CISI 15): the number of trees',
          '  and the grid point were chosen on them, so the validation numbers above are optimistic; trust the test table. The',
          `  gains over BM25 ordering are a few nDCG points; the gate (precision kept vs keeping all ${options.gateK}: ${precisionGainRange(tests)}) is its other use.`,
        ]
      : [
          '- A pointwise model (query-centred regression) over collections with very different score scales: it does not',
          '  optimise the ranking within a query directly. The gains over BM25 ordering',
          `  are small (table above); its main use is the gate (precision of what is kept vs keeping all ${options.gateK}: ${precisionGainRange(tests)}).`,
        ]),
    ...noMeasurableGain(tests),
    ...textOnlyWorse(tests, options.k),
    '- The recommended threshold is one number pooled over five collections; precision at that threshold varies a lot',
    '  by collection (table above). Tune the threshold on your own labelled data (`relevance-gate eval`) when you can.',
    '- `relevance` is a probability only in the sense of a logistic model fit on these collections; it is not calibrated',
    '  for other domains.',
    '- Licenses of the training data: Cranfield/CISI/MED carry none (research use); SciFact CC BY-NC 2.0; NFCorpus',
    '  academic use. The model was derived from them; check your use against those terms.',
    '',
    '## Reproduce',
    '',
    '```',
    `npx tsx scripts/train-fast-path.ts --data ../shared/data --out models/fast-path-lexical --grid ${options.grid} --seed ${options.seed} --target-precision ${options.targetPrecision} --check`,
    '```',
    '',
    '`--check` runs the same command again in a fresh process and fails unless every file it writes is byte-identical.',
    'Evaluate any collection in the same layout:',
    '',
    '```',
    'relevance-gate eval --collection ../shared/data/scifact --tier fast-path --model models/fast-path-lexical --json out.json --plot out.svg',
    '```',
    '',
  );
  return lines.join('\n');
}

/** The ranking blend's λ and the validation table it was chosen from (nothing when the model has none). */
function rankingBlendLines(training: TrainFastPathResult, names: readonly string[]): string[] {
  const rb = training.rankingBlend;
  if (rb === null) return [];
  const pct = (v: number | undefined): string =>
    v === undefined ? 'n/a' : `${v >= 0 ? '+' : ''}${(100 * v).toFixed(2)} %`;
  return [
    '',
    '## Ranking blend (the order of what the gate returns)',
    '',
    `The scorer emits a second signal, \`ranking\` = σ((margin + λ · e) / (1 + λ)) with e = bm25_all / (2.2 · query_idf_sum)`,
    `(the extractor's title+body BM25 over its per-query bound), **λ = ${rb.blend.lambda}** (\`meta.json\` rankingBlend). The gate keeps or`,
    'drops on `relevant` (threshold, operating points) and orders what it returns by `ranking`. λ is chosen after the trees,',
    `on the validation queries (BM25 top 100, retrieval_rank given): ${rb.rule}. Relative nDCG@10 gain over BM25 on validation:`,
    '',
    `| λ | ${names.join(' | ')} | worst | mean |`,
    `|---|${names.map(() => '---|').join('')}---|---|`,
    ...rb.grid.map(
      (c) =>
        `| ${c.lambda === rb.blend.lambda ? `**${c.lambda}**` : c.lambda}${c.lambda === rb.best.lambda ? ' (best)' : ''} | ${names.map((n) => pct(c.relativeGain[n])).join(' | ')} | ${pct(c.worstGain)} | ${pct(c.meanGain)} |`,
    ),
    '',
    `Best worst-collection gain at λ = ${rb.best.lambda}; its standard errors per collection: ${names.map((n) => `${n} ${pct(rb.best.standardError[n])}`).join(', ')}. Chosen (bold): the largest λ where no collection is more than that below its gain at the best λ.`,
    'λ = 0 orders by the margin alone (the order of `relevant`).',
  ];
}

/** What training supplied of the passthrough features, as the card says it. */
function featureSupplyLines(meta: Readonly<Record<string, unknown>>): string[] {
  const embedding = meta.embeddingSimilarity as
    | { readonly model?: unknown; readonly modelId?: unknown; readonly trainingDropout?: unknown }
    | undefined;
  if (embedding === undefined)
    return [
      'Training supplied `retrieval_rank` (the BM25 rank) for a random half of the training queries (decided per query,',
      'seeded); `retrieval_score` and `embedding_similarity` were never supplied, so the trees never split on them and',
      'their values do not change scores.',
    ];
  const share = typeof embedding.trainingDropout === 'number' ? Math.round(100 * (1 - embedding.trainingDropout)) : 70;
  return [
    'Training supplied `retrieval_rank` (the BM25 rank) for a random half of the training queries (decided per query,',
    `seeded), and \`embedding_similarity\`, the cosine of the query's and the passage's ${String(embedding.model)} embeddings`,
    `(model id \`${String(embedding.modelId)}\`), for ${share} % of them (an independent seeded draw; every validation and`,
    "test query has both). Pass that model's cosine as `passage.features.embedding_similarity`: another model's",
    'similarities have another scale. `retrieval_score` was never supplied, so the trees never split on it.',
  ];
}

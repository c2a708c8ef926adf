/**
 * A decision log with judgments as fit data: each logged live request whose query has judgments
 * (matched by request id, else by query hash, as replay matches them) becomes one gate list of the
 * fit, its passages in input order with the signals the model gave them and the judged labels
 * (unjudged = not relevant, as in the collections' qrels). What the fit then learns is the
 * deployment's own traffic, not a benchmark's.
 *
 * Kept out: shadow decisions (another model's signals), requests of other models, and requests with
 * an unscored passage (their list is not what the model saw whole; counted).
 */
import { createHash } from 'node:crypto';
import type { DecisionLogContents, DecisionRecord, Judgments } from '../../decision-log/index.js';
import { InvalidArgumentError } from '../../errors.js';
import { modelIdOf } from '../../operating-points/types.js';
import { RANKING, RELEVANT } from '../../signals.js';
import type { ScoredCollection } from './fit-scorer-points.js';
import type { JudgedGateList } from './operating-points.js';

export interface LogListsOptions {
  /** The collection name the log's lists go under in the fit's report. */
  readonly name: string;
  /** Candidates per list the gate sees: each logged list is cut to its first gateK passages. */
  readonly gateK: number;
  /** Keep only decisions of this served model name (the log's `model`); default: every live decision. */
  readonly model?: string;
}

export interface LogLists {
  readonly collection: ScoredCollection;
  /** Live decisions read. */
  readonly decisions: number;
  /** Of those, lists with judgments used. */
  readonly judged: number;
  /** Skipped for an unscored passage. */
  readonly withUnscored: number;
}

function judgmentsOf(decision: DecisionRecord, judgments: Judgments): ReadonlyMap<string, number> | undefined {
  return judgments.get(decision.requestId) ?? judgments.get(decision.queryHash);
}

export function logLists(contents: DecisionLogContents, judgments: Judgments, options: LogListsOptions): LogLists {
  const live = contents.decisions.filter(
    (d) => d.shadowOf === undefined && (options.model === undefined || d.model === options.model),
  );
  const models = new Set(live.map((d) => modelIdOf(d.scorerId)));
  if (models.size > 1)
    throw new InvalidArgumentError(
      `the log holds decisions of ${models.size} models (${[...models].join(', ')}): choose one served model (--log-model)`,
    );
  const lists: JudgedGateList[] = [];
  let withUnscored = 0;
  for (const decision of live) {
    const judged = judgmentsOf(decision, judgments);
    if (judged === undefined) continue;
    const passages = [...decision.passages].sort((a, b) => a.rank - b.rank).slice(0, options.gateK);
    if (passages.some((p) => typeof p.signals?.[RELEVANT] !== 'number')) {
      withUnscored++;
      continue;
    }
    const ranking = passages.every((p) => typeof p.signals?.[RANKING] === 'number');
    lists.push({
      relevances: passages.map((p) => p.signals?.[RELEVANT] as number),
      relevant: passages.map((p) => (judged.get(p.id) ?? 0) > 0),
      docIds: passages.map((p) => p.id),
      judgments: judged,
      ...(ranking ? { order: passages.map((p) => p.signals?.[RANKING] as number) } : {}),
    });
  }
  const model = models.values().next().value;
  if (model === undefined || lists.length === 0)
    throw new InvalidArgumentError(
      `the log ${options.name} has no live decision${options.model === undefined ? '' : ` of model ${options.model}`} with judgments`,
    );
  const fingerprint = createHash('sha256')
    .update(lists.map((l) => l.docIds.join('\u0000')).join('\u0001'))
    .digest('hex');
  return {
    collection: { name: options.name, fingerprint, model, gateK: options.gateK, lists },
    decisions: live.length,
    judged: lists.length,
    withUnscored,
  };
}

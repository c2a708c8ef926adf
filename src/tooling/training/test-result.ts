/** One collection's test-query evaluation of a trained model, as the model card reports it. */
import type { EvalReport } from '../eval/run-eval.js';

export interface TestResult {
  readonly name: string;
  /** Passages carry their BM25 rank as retrieval_rank (the default of `relevance-gate eval`). */
  readonly withRank: EvalReport;
  /** Text only: no caller-supplied features. */
  readonly textOnly: EvalReport;
}

/** Public surface of the LLM-judge tier (re-exported from the package root). */
export { createLlmJudge, type LlmJudge, type LlmJudgeStats } from './judge.js';
export {
  type LlmJudgeOptions,
  DEFAULT_CONCURRENCY as LLM_JUDGE_DEFAULT_CONCURRENCY,
  DEFAULT_TOP_LOGPROBS as LLM_JUDGE_DEFAULT_TOP_LOGPROBS,
  LLM_JUDGE_TIER,
} from './options.js';
export { DEFAULT_QUESTIONS, questionSetVersion, type JudgeQuestion } from './questions.js';
export {
  PROMPT_VERSION as LLM_JUDGE_PROMPT_VERSION,
  DEFAULT_JUDGE_SYSTEM_PROMPT as LLM_JUDGE_SYSTEM_PROMPT,
} from './prompt.js';
export { llmJudgeTier, type LlmJudgeTierOptions, type LlmJudgeTierSpec } from './tier.js';
export { LlmEndpointError, LlmResponseFormatError } from './errors.js';
export {
  readPosition as readYesProbability,
  normalizeToken as normalizeAnswerToken,
  type AnswerPosition,
  type TokenLogprob,
  type JudgeAnswer,
} from './logprobs.js';

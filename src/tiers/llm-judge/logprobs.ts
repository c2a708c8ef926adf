/**
 * From answer tokens to probabilities. A yes/no answer position carries the chosen token and its
 * `top_logprobs`; P(yes) is the yes-like probability mass normalised over the yes-like and no-like
 * tokens found there (every case and leading-space variant: "yes", " Yes", "YES", "▁yes", ...):
 *
 *   P(yes) = Σ exp(lp_yes) / (Σ exp(lp_yes) + Σ exp(lp_no))
 *
 * computed with log-sum-exp. The raw value kept is the log-odds ln Σexp(lp_yes) − ln Σexp(lp_no);
 * when one side is absent from the list its mass is bounded by the smallest listed logprob (a
 * token not listed is less likely than every listed one), so the raw value stays finite.
 */

export interface TokenLogprob {
  readonly token: string;
  readonly logprob: number;
}

/** One generated token with its alternatives (`top` is empty when the endpoint sent none). */
export interface AnswerPosition {
  readonly token: string;
  readonly logprob: number;
  readonly top: readonly TokenLogprob[];
}

/** One question's answer for one passage. */
export interface JudgeAnswer {
  /** P(yes) in [0, 1]. */
  readonly probability: number;
  /** Log-odds of yes over no (finite); undefined for coarse answers. */
  readonly logit: number | undefined;
  /** True when the endpoint gave no usable alternatives: the probability is 0/1 from the text. */
  readonly coarse: boolean;
}

export interface AnswerVocabulary {
  /** Normalised (lower-case, no surrounding space or punctuation) words read as yes. */
  readonly yes: ReadonlySet<string>;
  readonly no: ReadonlySet<string>;
}

export const DEFAULT_VOCABULARY: AnswerVocabulary = Object.freeze({
  yes: new Set(['yes']),
  no: new Set(['no']),
});

/** Word markers tokenizers put in front of a token (SentencePiece ▁, byte-level BPE Ġ/Ċ). */
const LEADING = /^[\s\u2581\u0120\u010a]+/u;
const TRAILING_PUNCT = /[\s\p{P}]+$/u;
const SEPARATOR = /^[\s\p{P}\p{S}\d\u2581\u0120\u010a]*$/u;

/** Lower-case, leading space markers and trailing punctuation removed: " Yes." → "yes". */
export function normalizeToken(token: string): string {
  return token.replace(LEADING, '').replace(TRAILING_PUNCT, '').toLowerCase();
}

export type TokenClass = 'yes' | 'no' | 'separator' | 'other';

export function classifyToken(token: string, vocabulary: AnswerVocabulary): TokenClass {
  const word = normalizeToken(token);
  if (vocabulary.yes.has(word)) return 'yes';
  if (vocabulary.no.has(word)) return 'no';
  return SEPARATOR.test(token) ? 'separator' : 'other';
}

function logSumExp(values: readonly number[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) if (v > max) max = v;
  if (max === Number.NEGATIVE_INFINITY) return max;
  let sum = 0;
  for (const v of values) sum += Math.exp(v - max);
  return max + Math.log(sum);
}

/** The alternatives of a position, with the chosen token added when the list lacks it. */
function candidates(position: AnswerPosition): readonly TokenLogprob[] {
  const top = position.top;
  for (const t of top) if (t.token === position.token && t.logprob === position.logprob) return top;
  return [...top, { token: position.token, logprob: position.logprob }];
}

export interface PositionReading {
  /** The answer, or undefined when no yes/no token is found there. */
  readonly answer: JudgeAnswer | undefined;
  /** Share of the position's probability mass on yes/no tokens (0 when none was found). */
  readonly answerMass: number;
}

/**
 * P(yes) of one position from its logprobs. Without alternatives (`top` empty), the chosen
 * token's own logprob is the only evidence: P(yes) = exp(lp) when it says yes, 1 − exp(lp) when
 * no (all remaining mass counted for the other answer), marked coarse.
 */
export function readPosition(position: AnswerPosition, vocabulary: AnswerVocabulary): PositionReading {
  if (position.top.length === 0) {
    const cls = classifyToken(position.token, vocabulary);
    if ((cls !== 'yes' && cls !== 'no') || !Number.isFinite(position.logprob))
      return { answer: undefined, answerMass: 0 };
    const p = Math.min(1, Math.max(0, Math.exp(position.logprob)));
    return { answer: { probability: cls === 'yes' ? p : 1 - p, logit: undefined, coarse: true }, answerMass: p };
  }
  const yes: number[] = [];
  const no: number[] = [];
  let floor = Number.POSITIVE_INFINITY;
  for (const t of candidates(position)) {
    if (!Number.isFinite(t.logprob)) continue;
    if (t.logprob < floor) floor = t.logprob;
    const cls = classifyToken(t.token, vocabulary);
    if (cls === 'yes') yes.push(t.logprob);
    else if (cls === 'no') no.push(t.logprob);
  }
  if (yes.length === 0 && no.length === 0) return { answer: undefined, answerMass: 0 };
  const ly = logSumExp(yes);
  const ln = logSumExp(no);
  let probability: number;
  let logit: number;
  if (yes.length === 0) {
    probability = 0;
    logit = floor - ln;
  } else if (no.length === 0) {
    probability = 1;
    logit = ly - floor;
  } else {
    logit = ly - ln;
    // 1 / (1 + e^(ln − ly)) in the form that never overflows.
    probability = logit >= 0 ? 1 / (1 + Math.exp(-logit)) : Math.exp(logit) / (1 + Math.exp(logit));
  }
  const mass = Math.min(1, Math.exp(logSumExp(yes.length === 0 ? no : no.length === 0 ? yes : [ly, ln])));
  return { answer: { probability, logit, coarse: false }, answerMass: mass };
}

/**
 * Reads `count` answers from generated positions in order. Separator tokens (spaces, commas,
 * newlines, numbering) are skipped; a position whose chosen token is neither yes/no nor a
 * separator still counts as an answer if at least half of its mass is on yes/no tokens, otherwise
 * reading stops there (the answers after it cannot be aligned with their questions).
 */
export function readAnswers(
  positions: readonly AnswerPosition[],
  count: number,
  vocabulary: AnswerVocabulary,
): Array<JudgeAnswer | undefined> {
  const out: Array<JudgeAnswer | undefined> = new Array(count).fill(undefined);
  let slot = 0;
  for (const position of positions) {
    if (slot >= count) break;
    const cls = classifyToken(position.token, vocabulary);
    if (cls === 'separator') continue;
    const reading = readPosition(position, vocabulary);
    if (cls === 'other' && (reading.answer === undefined || reading.answerMass < 0.5)) break;
    out[slot++] = reading.answer;
  }
  return out;
}

/** Answers parsed from the text alone (no logprobs): yes → 1, no → 0, marked coarse. */
export function readTextAnswers(
  content: string,
  count: number,
  vocabulary: AnswerVocabulary,
): Array<JudgeAnswer | undefined> {
  const out: Array<JudgeAnswer | undefined> = new Array(count).fill(undefined);
  const words = content.split(/[\s,;|]+/u).filter((w) => w.length > 0);
  let slot = 0;
  for (const word of words) {
    if (slot >= count) break;
    const cls = classifyToken(word, vocabulary);
    if (cls === 'separator') continue;
    if (cls === 'other') break;
    out[slot++] = { probability: cls === 'yes' ? 1 : 0, logit: undefined, coarse: true };
  }
  return out;
}

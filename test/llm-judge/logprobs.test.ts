import { describe, expect, it } from 'vitest';
import {
  classifyToken,
  DEFAULT_VOCABULARY,
  readAnswers,
  readPosition,
  readTextAnswers,
} from '../../src/tiers/llm-judge/logprobs.js';

const V = DEFAULT_VOCABULARY;

describe('P(yes) from top_logprobs', () => {
  it('normalises over every yes-like and no-like variant found, exactly', () => {
    const top = [
      { token: 'Yes', logprob: -0.4 },
      { token: ' yes', logprob: -1.9 },
      { token: 'no', logprob: -2.2 },
      { token: ' NO', logprob: -4.0 },
      { token: 'The', logprob: -5.0 },
      { token: '▁Yes', logprob: -6.5 },
    ];
    const r = readPosition({ token: 'Yes', logprob: -0.4, top }, V);
    const y = Math.exp(-0.4) + Math.exp(-1.9) + Math.exp(-6.5);
    const n = Math.exp(-2.2) + Math.exp(-4.0);
    expect(r.answer?.probability).toBeCloseTo(y / (y + n), 14);
    expect(r.answer?.logit).toBeCloseTo(Math.log(y) - Math.log(n), 12);
    expect(r.answer?.coarse).toBe(false);
    expect(r.answerMass).toBeCloseTo(y + n, 12);
  });

  it('is 0 when only no-like tokens are listed and 1 when only yes-like are, with a finite bounded log-odds', () => {
    const onlyNo = readPosition(
      {
        token: 'No',
        logprob: -0.01,
        top: [
          { token: 'No', logprob: -0.01 },
          { token: 'Not', logprob: -5 },
        ],
      },
      V,
    );
    expect(onlyNo.answer?.probability).toBe(0);
    expect(onlyNo.answer?.logit).toBeCloseTo(-5 - -0.01, 12);
    const onlyYes = readPosition(
      {
        token: ' yes',
        logprob: -0.02,
        top: [
          { token: ' yes', logprob: -0.02 },
          { token: 'Sure', logprob: -7 },
        ],
      },
      V,
    );
    expect(onlyYes.answer?.probability).toBe(1);
    expect(onlyYes.answer?.logit).toBeCloseTo(-0.02 + 7, 12);
  });

  it('adds the chosen token when the list lacks it, and never counts it twice', () => {
    const r = readPosition({ token: 'yes', logprob: -0.5, top: [{ token: 'no', logprob: -1.5 }] }, V);
    expect(r.answer?.probability).toBeCloseTo(Math.exp(-0.5) / (Math.exp(-0.5) + Math.exp(-1.5)), 14);
    const twice = readPosition(
      {
        token: 'yes',
        logprob: -0.5,
        top: [
          { token: 'yes', logprob: -0.5 },
          { token: 'no', logprob: -1.5 },
        ],
      },
      V,
    );
    expect(twice.answer?.probability).toBeCloseTo(r.answer?.probability as number, 14);
  });

  it('ignores entries whose logprob is unknown (NaN: absent in the response)', () => {
    const r = readPosition(
      {
        token: 'yes',
        logprob: Number.NaN,
        top: [
          { token: 'yes', logprob: -0.2 },
          { token: 'no', logprob: Number.NaN },
          { token: ' no', logprob: -1.8 },
        ],
      },
      V,
    );
    expect(r.answer?.probability).toBeCloseTo(Math.exp(-0.2) / (Math.exp(-0.2) + Math.exp(-1.8)), 14);
    expect(readPosition({ token: 'yes', logprob: Number.NaN, top: [] }, V).answer).toBeUndefined();
  });

  it('finds no answer when no yes/no token is present', () => {
    expect(readPosition({ token: 'The', logprob: -0.1, top: [{ token: 'The', logprob: -0.1 }] }, V).answer).toBe(
      undefined,
    );
  });

  it('without alternatives, uses the chosen token logprob and marks the answer coarse', () => {
    const r = readPosition({ token: 'no', logprob: Math.log(0.8), top: [] }, V);
    expect(r.answer?.probability).toBeCloseTo(0.2, 12);
    expect(r.answer?.coarse).toBe(true);
    expect(r.answer?.logit).toBeUndefined();
  });

  it('classifies case, leading-space, marker and trailing-punctuation variants', () => {
    for (const t of ['yes', 'Yes', ' YES', '\u2581yes', '\u0120Yes', 'yes.', ' Yes,'])
      expect(classifyToken(t, V)).toBe('yes');
    for (const t of ['no', 'No', ' NO', 'no.']) expect(classifyToken(t, V)).toBe('no');
    for (const t of [' ', '\n', ',', '1.', '']) expect(classifyToken(t, V)).toBe('separator');
    for (const t of ['nope', 'yesterday', 'Not', 'The']) expect(classifyToken(t, V)).toBe('other');
  });
});

describe('reading several answers', () => {
  // The chosen token is one of the listed alternatives, as real endpoints send it.
  const pos = (word: 'yes' | 'no', pYes: number) => ({
    token: ` ${word}`,
    logprob: Math.log(word === 'yes' ? pYes : 1 - pYes),
    top: [
      { token: ' yes', logprob: Math.log(pYes) },
      { token: ' no', logprob: Math.log(1 - pYes) },
    ],
  });

  it('reads one answer per position, skipping separators', () => {
    const answers = readAnswers(
      [
        pos('yes', 0.9),
        { token: ',', logprob: 0, top: [] },
        pos('no', 0.2),
        { token: '\n', logprob: 0, top: [] },
        pos('yes', 0.7),
      ],
      3,
      V,
    );
    expect(answers.map((a) => a?.probability)).toEqual([
      expect.closeTo(0.9, 12),
      expect.closeTo(0.2, 12),
      expect.closeTo(0.7, 12),
    ]);
  });

  it('stops at a position that is not an answer: later answers cannot be aligned', () => {
    const answers = readAnswers(
      [pos('yes', 0.9), { token: ' maybe', logprob: -0.1, top: [{ token: ' maybe', logprob: -0.1 }] }, pos('no', 0.1)],
      3,
      V,
    );
    expect(answers[0]?.probability).toBeCloseTo(0.9, 12);
    expect(answers[1]).toBeUndefined();
    expect(answers[2]).toBeUndefined();
  });

  it('text fallback: yes → 1, no → 0, coarse; stops at other words', () => {
    const a = readTextAnswers('Yes no, YES', 4, V);
    expect(a.map((x) => x?.probability)).toEqual([1, 0, 1, undefined]);
    expect(a[0]?.coarse).toBe(true);
    expect(readTextAnswers('Sure! yes', 2, V)).toEqual([undefined, undefined]);
  });
});

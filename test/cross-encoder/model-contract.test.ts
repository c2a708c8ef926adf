/** discoverContract on session metadata: what is accepted, what is refused and how it is described. */
import { describe, expect, it } from 'vitest';
import { ModelContractError } from '../../src/tiers/cross-encoder/errors.js';
import { discoverContract, sigmoid, type ValueMetadataLike } from '../../src/tiers/cross-encoder/model-contract.js';

const int64 = (name: string): ValueMetadataLike => ({
  name,
  isTensor: true,
  type: 'int64',
  shape: ['batch', 'sequence'],
});
const out = (name: string, shape: Array<number | string>, type = 'float32'): ValueMetadataLike => ({
  name,
  isTensor: true,
  type,
  shape,
});
const BERT = [int64('input_ids'), int64('attention_mask'), int64('token_type_ids')];

describe('discoverContract', () => {
  it('accepts BERT inputs with logits [b,1], [b] and [b,2]', () => {
    expect(discoverContract(BERT, [out('logits', ['batch', 1])]).head).toEqual({ kind: 'single', name: 'logits' });
    expect(discoverContract(BERT, [out('score', ['batch'])]).head).toEqual({ kind: 'single', name: 'score' });
    const binary = discoverContract(BERT, [out('logits', ['batch', 2])]);
    expect(binary.head).toEqual({ kind: 'binary', name: 'logits' });
    expect(binary.signalNames).toEqual(['relevant']);
    expect(binary.tokenTypeIds).toBe('token_type_ids');
  });

  it('makes token_type_ids optional', () => {
    expect(discoverContract(BERT.slice(0, 2), [out('logits', ['batch', 1])]).tokenTypeIds).toBeNull();
  });

  it('turns several [b,1] outputs into named signals in output order', () => {
    const c = discoverContract(BERT, [
      out('relevant', ['batch', 1]),
      out('injection', ['batch', 1]),
      out('evidence', ['batch']),
    ]);
    expect(c.head).toEqual({ kind: 'multi', names: ['relevant', 'injection', 'evidence'] });
    expect(c.signalNames).toEqual(['relevant', 'injection', 'evidence']);
  });

  it.each([
    [
      'missing input_ids',
      [int64('attention_mask')],
      [out('logits', ['batch', 1])],
      /missing required input "input_ids"/,
    ],
    [
      'unknown input',
      [...BERT, int64('position_ids')],
      [out('logits', ['batch', 1])],
      /unexpected input "position_ids"/,
    ],
    [
      'int32 ids',
      [{ ...int64('input_ids'), type: 'int32' }, int64('attention_mask')],
      [out('logits', ['batch', 1])],
      /must be an int64/,
    ],
    ['3 classes', BERT, [out('logits', ['batch', 3])], /must be \[batch,1\] or \[batch,2\]/],
    ['symbolic classes', BERT, [out('logits', ['batch', 'classes'])], /must be \[batch,1\] or \[batch,2\]/],
    ['rank 3 output', BERT, [out('hidden', ['batch', 'sequence', 128])], /must be \[batch,1\] or \[batch,2\]/],
    ['float16 output', BERT, [out('logits', ['batch', 1], 'float16')], /must be a float32/],
    ['multi with a [b,2]', BERT, [out('a', ['batch', 1]), out('b', ['batch', 2])], /each must be \[batch,1\]/],
  ] as const)('refuses %s, saying what was expected and what was found', (_name, inputs, outputs, why) => {
    let err: unknown;
    try {
      discoverContract(inputs, outputs);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ModelContractError);
    expect((err as Error).message).toMatch(why);
    expect((err as Error).message).toMatch(/expected inputs input_ids/);
    expect((err as Error).message).toMatch(/found inputs \{/);
  });
});

describe('sigmoid', () => {
  it('is the logistic function in float64, finite and monotone at the extremes', () => {
    expect(sigmoid(0)).toBe(0.5);
    expect(sigmoid(2)).toBeCloseTo(1 / (1 + Math.exp(-2)), 15);
    expect(sigmoid(-800)).toBe(0);
    expect(sigmoid(800)).toBe(1);
    expect(sigmoid(-30)).toBeGreaterThan(0);
    expect(sigmoid(-30) + sigmoid(30)).toBeCloseTo(1, 15);
  });
});

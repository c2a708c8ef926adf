/** discoverContract on session metadata: what is accepted, what is refused and how it is described. */
import { describe, expect, it } from 'vitest';
import { ModelContractError } from '../../src/tiers/cross-encoder/errors.js';
import { modelConfigFields } from '../../src/tiers/cross-encoder/model-config.js';
import {
  columnProbabilities,
  discoverContract,
  sigmoid,
  type ValueMetadataLike,
} from '../../src/tiers/cross-encoder/model-contract.js';

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
      'an input it cannot fill',
      [...BERT, int64('visual_embeds')],
      [out('logits', ['batch', 1])],
      /unexpected input "visual_embeds"/,
    ],
    [
      'float ids',
      [{ ...int64('input_ids'), type: 'float32' }, int64('attention_mask')],
      [out('logits', ['batch', 1])],
      /"input_ids" must be an int64 or int32/,
    ],
    ['3 classes without id2label', BERT, [out('logits', ['batch', 3])], /3 classes but config.json has no id2label/],
    ['symbolic classes without id2label', BERT, [out('logits', ['batch', 'classes'])], /symbolic class dimension/],
    ['rank 3 output', BERT, [out('hidden', ['batch', 'sequence', 128])], /must be \[batch\] or \[batch,C\]/],
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

describe('discoverContract with config.json', () => {
  const fields = (config: Record<string, unknown>) => modelConfigFields(config);
  const NLI = fields({
    model_type: 'roberta',
    pad_token_id: 1,
    id2label: { 2: 'ENTAILMENT', 0: 'CONTRADICTION', 1: 'NEUTRAL' },
  });

  it('names a [b,C] head by id2label in label-id order, softmax when multi-class', () => {
    const c = discoverContract(BERT.slice(0, 2), [out('logits', ['batch', 3])], NLI);
    expect(c.head).toEqual({ kind: 'labels', name: 'logits', width: 3, activation: 'softmax' });
    expect(c.signalNames).toEqual(['CONTRADICTION', 'NEUTRAL', 'ENTAILMENT']);
    expect(c.activation).toBe('softmax');
    expect(c.padTokenId).toBe(1);
  });

  it('sizes a symbolic class dimension by id2label', () => {
    const c = discoverContract(BERT, [out('logits', ['batch', 'num_labels'])], NLI);
    expect(c.head).toEqual({ kind: 'labels', name: 'logits', width: 3, activation: 'softmax' });
  });

  it('uses a sigmoid per label for multi-label and regression heads and for one named logit', () => {
    const multi = fields({ id2label: { 0: 'toxic', 1: 'insult' }, problem_type: 'multi_label_classification' });
    expect(discoverContract(BERT, [out('logits', ['batch', 2])], multi).activation).toBe('sigmoid');
    const regression = fields({ id2label: { 0: 'a', 1: 'b' }, problem_type: 'regression' });
    expect(discoverContract(BERT, [out('logits', ['batch', 2])], regression).activation).toBe('sigmoid');
    const one = discoverContract(BERT, [out('logits', ['batch', 1])], fields({ id2label: { 0: 'score' } }));
    expect(one.head).toEqual({ kind: 'labels', name: 'logits', width: 1, activation: 'sigmoid' });
    expect(one.signalNames).toEqual(['score']);
  });

  it("keeps HF's default labels on [b,1] and [b,2] as the relevance head", () => {
    const defaults1 = discoverContract(BERT, [out('logits', ['batch', 1])], fields({ id2label: { 0: 'LABEL_0' } }));
    expect(defaults1.head).toEqual({ kind: 'single', name: 'logits' });
    const defaults2 = fields({ id2label: { 0: 'LABEL_0', 1: 'LABEL_1' } });
    const binary = discoverContract(BERT, [out('logits', ['batch', 2])], defaults2);
    expect(binary.head).toEqual({ kind: 'binary', name: 'logits' });
    expect(binary.signalNames).toEqual(['relevant']);
    // …but 3 default labels are what the config names: one signal each.
    const three = fields({ id2label: { 0: 'LABEL_0', 1: 'LABEL_1', 2: 'LABEL_2' } });
    expect(discoverContract(BERT, [out('logits', ['batch', 3])], three).signalNames).toEqual([
      'LABEL_0',
      'LABEL_1',
      'LABEL_2',
    ]);
  });

  it('reads every input element type, int64 or int32', () => {
    const c = discoverContract(
      [{ ...int64('input_ids'), type: 'int32' }, int64('attention_mask'), { ...int64('position_ids'), type: 'int32' }],
      [out('logits', ['batch', 1])],
      fields({ model_type: 'bert' }),
    );
    expect(c.inputTypes).toEqual({ input_ids: 'int32', attention_mask: 'int64', position_ids: 'int32' });
  });

  it.each([
    ['bert', 'sequential'],
    ['modernbert', 'sequential'],
    ['deberta-v2', 'sequential'],
    ['roberta', 'padding-offset'],
    ['xlm-roberta', 'padding-offset'],
    ['camembert', 'padding-offset'],
  ] as const)('fills position_ids of a %s model %s', (modelType, scheme) => {
    const c = discoverContract(
      [...BERT, int64('position_ids')],
      [out('logits', ['batch', 1])],
      fields({ model_type: modelType }),
    );
    expect(c.positionIds).toBe('position_ids');
    expect(c.positionScheme).toBe(scheme);
  });

  it('refuses position_ids when config.json has no model_type, and labels it cannot use', () => {
    expect(() => discoverContract([...BERT, int64('position_ids')], [out('logits', ['batch', 1])], {})).toThrow(
      /"position_ids" needs config.json model_type/,
    );
    const bad = (id2label: unknown) => () =>
      discoverContract(BERT, [out('logits', ['batch', 3])], fields({ id2label }));
    expect(bad({ 0: 'a', 1: 'b' })).toThrow(/has 2 labels but output "logits" has 3/);
    expect(bad({ 0: 'a', 1: 'a', 2: 'b' })).toThrow(/names "a" twice/);
    expect(bad({ 0: 'a', 1: '', 2: 'b' })).toThrow(/empty label/);
    expect(bad({ 0: 'a', 2: 'b', 3: 'c' })).toThrow(/id2label ids are not/);
    expect(bad(['a', 'b', 'c'])).toThrow(/id2label is not an object/);
  });
});

describe('columnProbabilities', () => {
  it('softmax is stable for large logits and sums to 1; sigmoid is per column', () => {
    const into = new Float64Array(4);
    columnProbabilities([0, 1000, 1001, 999], 1, 3, 'softmax', into);
    const e = [Math.exp(-1), 1, Math.exp(-2)];
    const sum = e[0] + e[1] + e[2];
    expect(into[0]).toBe(0);
    expect(into[1]).toBeCloseTo(e[0] / sum, 15);
    expect(into[2]).toBeCloseTo(e[1] / sum, 15);
    expect(into[1] + into[2] + into[3]).toBeCloseTo(1, 15);
    columnProbabilities([2, -3], 0, 2, 'sigmoid', into);
    expect(into[0]).toBe(sigmoid(2));
    expect(into[1]).toBe(sigmoid(-3));
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

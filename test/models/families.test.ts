/**
 * The model families people deploy, generated at test sizes (real vocabulary and window) next to
 * real tokenizer folders: onnxruntime loads each graph, its I/O metadata is the family's export
 * contract, it runs on real token ids, padding is masked exactly, config.json carries the real
 * labels and fields. All are speed/shape models: random weights, scores mean nothing.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import type { Tokenizer } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import {
  buildCrossEncoderModelProto,
  type CrossEncoderModelDirInfo,
  countParameters,
  FAMILY_PRESETS,
  type ModelPresetName,
  type WriteCrossEncoderModelDirOptions,
  writeCrossEncoderModelDir,
} from '../../src/tooling/model-gen/index.js';
import {
  type EncodedPair,
  encodePairs,
  feedsFor,
  loadTokenizer,
  maxAbsDiff,
  runLogits,
  SESSION_OPTIONS,
  scifactPairs,
  tokenizerFolder,
} from './helpers.js';

interface FamilyCase {
  readonly key: string;
  readonly preset: ModelPresetName;
  readonly folder: string;
  readonly options: WriteCrossEncoderModelDirOptions;
  /** Folder whose tokenizer.json gives the token ids fed to the graph. */
  readonly idsFrom: string;
  readonly inputs: string[];
  readonly labels: string[];
  readonly modelType: string;
  readonly architecture: string;
  /** Files copied from the real folder. */
  readonly copied: string[];
}

const CASES: FamilyCase[] = [
  {
    key: 'bert',
    preset: 'minilm-l6',
    folder: 'ms-marco-MiniLM-L-6-v2',
    options: { layers: 2, hidden: 64 },
    idsFrom: 'ms-marco-MiniLM-L-6-v2',
    inputs: ['input_ids', 'attention_mask', 'token_type_ids'],
    labels: ['LABEL_0'],
    modelType: 'bert',
    architecture: 'BertForSequenceClassification',
    copied: ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt'],
  },
  {
    key: 'roberta',
    preset: 'roberta-nli',
    folder: 'roberta-large-mnli',
    options: { layers: 2, hidden: 64 },
    idsFrom: 'roberta-large-mnli',
    inputs: ['input_ids', 'attention_mask'],
    labels: ['CONTRADICTION', 'NEUTRAL', 'ENTAILMENT'],
    modelType: 'roberta',
    architecture: 'RobertaForSequenceClassification',
    copied: ['tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt'],
  },
  {
    key: 'xlm-roberta',
    preset: 'xlmr-reranker',
    folder: 'bge-reranker-large',
    options: { layers: 2, hidden: 32 },
    // No XLM-R tokenizer.json is available; RoBERTa BPE ids are valid XLM-R ids with the same specials (<s>=0 <pad>=1 </s>=2).
    idsFrom: 'roberta-large-mnli',
    inputs: ['input_ids', 'attention_mask'],
    labels: ['LABEL_0'],
    modelType: 'xlm-roberta',
    architecture: 'XLMRobertaForSequenceClassification',
    copied: ['tokenizer_config.json', 'special_tokens_map.json'],
  },
  {
    key: 'modernbert',
    preset: 'modernbert-reranker',
    folder: 'modernbert-large',
    options: { layers: 2, hidden: 64 },
    idsFrom: 'modernbert-large',
    inputs: ['input_ids', 'attention_mask'],
    labels: ['LABEL_0'],
    modelType: 'modernbert',
    architecture: 'ModernBertForSequenceClassification',
    copied: ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'],
  },
  {
    key: 'deberta',
    preset: 'deberta-injection',
    folder: 'deberta-v3-base-injection-finetune',
    options: { layers: 2, hidden: 64 },
    // No DeBERTa-v3 tokenizer.json is available; ModernBERT BPE ids (< 50368) are valid ids of the 128100 vocabulary.
    idsFrom: 'modernbert-large',
    inputs: ['input_ids', 'attention_mask'],
    labels: ['safe', 'prompt_injection'],
    modelType: 'deberta-v2',
    architecture: 'DebertaV2ForSequenceClassification',
    copied: [],
  },
];

let root: string;
const infos = new Map<string, CrossEncoderModelDirInfo>();
const sessions = new Map<string, ort.InferenceSession>();
const tokenizers = new Map<string, Tokenizer>();
const PAIRS = scifactPairs(12);

async function session(key: string): Promise<ort.InferenceSession> {
  let s = sessions.get(key);
  if (s === undefined) {
    s = await ort.InferenceSession.create(infos.get(key)!.modelPath, SESSION_OPTIONS);
    sessions.set(key, s);
  }
  return s;
}

async function rowsFor(c: FamilyCase, pairs = PAIRS, maxLength = 256): Promise<EncodedPair[]> {
  let tok = tokenizers.get(c.idsFrom);
  if (tok === undefined) {
    tok = loadTokenizer(tokenizerFolder(c.idsFrom));
    tokenizers.set(c.idsFrom, tok);
  }
  return encodePairs(tok, pairs, maxLength);
}

const realConfig = (folder: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(tokenizerFolder(folder), 'config.json'), 'utf8')) as Record<string, unknown>;
const writtenConfig = (key: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(infos.get(key)!.dir, 'config.json'), 'utf8')) as Record<string, unknown>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-model-families-'));
  for (const c of CASES) {
    infos.set(
      c.key,
      await writeCrossEncoderModelDir(join(root, c.key), c.preset, {
        ...c.options,
        tokenizerDir: tokenizerFolder(c.folder),
        seed: 42,
      }),
    );
  }
}, 60_000);

afterAll(async () => {
  for (const s of sessions.values()) await s.release();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

describe.each(CASES)('$key family ($preset with $folder)', (c) => {
  it('declares the export contract: int64 [batch_size, sequence_length] inputs, logits float32 [batch_size, C]', async () => {
    const s = await session(c.key);
    expect(s.inputNames).toEqual(c.inputs);
    for (const meta of s.inputMetadata) {
      expect(meta.isTensor && meta.type).toBe('int64');
      expect(meta.isTensor && meta.shape).toEqual(['batch_size', 'sequence_length']);
    }
    expect(s.outputNames).toEqual(['logits']);
    const out = s.outputMetadata[0]!;
    expect(out.isTensor && out.type).toBe('float32');
    expect(out.isTensor && out.shape).toEqual(['batch_size', c.labels.length]);
  });

  it('runs on real token ids; each pair scores the same alone and right-padded in a batch', async () => {
    const s = await session(c.key);
    const spec = infos.get(c.key)!.spec;
    const padId = spec.padTokenId ?? 0;
    const rows = await rowsFor(c);
    const alone = await Promise.all(rows.map(async (r) => (await runLogits(s, [r], r.ids.length, { padId }))[0]!));
    for (const row of alone) {
      expect(row).toHaveLength(c.labels.length);
      expect(row.every(Number.isFinite)).toBe(true);
    }
    expect(new Set(alone.map((r) => r[0]!.toFixed(4))).size).toBeGreaterThan(rows.length / 2);
    const longest = Math.max(...rows.map((r) => r.ids.length));
    const batched = await runLogits(s, rows, longest + 13, { padId });
    expect(maxAbsDiff(batched, alone)).toBeLessThanOrEqual(1e-4);
  });

  it('writes config.json over the real config: real labels, vocabulary, window and pad id, generated sizes', () => {
    const real = realConfig(c.folder);
    const config = writtenConfig(c.key);
    const spec = infos.get(c.key)!.spec;
    expect(config.model_type).toBe(c.modelType);
    expect(config.architectures).toEqual([c.architecture]);
    expect(config.id2label).toEqual(Object.fromEntries(c.labels.map((l, i) => [String(i), l])));
    expect(config.label2id).toEqual(Object.fromEntries(c.labels.map((l, i) => [l, i])));
    if (real.id2label !== undefined) expect(config.id2label).toEqual(real.id2label);
    if (real.label2id !== undefined) expect(config.label2id).toEqual(real.label2id);
    for (const key of ['vocab_size', 'max_position_embeddings', 'pad_token_id'] as const) {
      expect(config[key], key).toBe(real[key]);
    }
    expect(config).toMatchObject({
      hidden_size: spec.hiddenSize,
      num_hidden_layers: 2,
      num_attention_heads: spec.numHeads,
      intermediate_size: spec.intermediateSize,
      relevance_gate: { kind: 'speed/shape model, random weights, NOT a relevance model', seed: 42 },
    });
    expect(config.hidden_size).not.toBe(real.hidden_size);
    expect(spec.vocabSize).toBe(real.vocab_size);
    const readme = readFileSync(join(infos.get(c.key)!.dir, 'README.md'), 'utf8');
    expect(readme).toContain('speed/shape model: random weights, scores mean nothing');
  });

  it('copies the real tokenizer files byte for byte', () => {
    const info = infos.get(c.key)!;
    expect([...info.tokenizerFiles].sort()).toEqual([...c.copied].sort());
    for (const name of c.copied) {
      expect(readFileSync(join(info.dir, name)).equals(readFileSync(join(tokenizerFolder(c.folder), name))), name).toBe(
        true,
      );
    }
  });

  it('countParameters equals the weights in the graph', () => {
    // The formula is size-generic; a 1-layer, hidden-16 copy of the spec keeps the check cheap.
    const spec = { ...infos.get(c.key)!.spec, numLayers: 1, hiddenSize: 16, numHeads: 2, intermediateSize: 24 };
    const proto = buildCrossEncoderModelProto(spec, { seed: 1 });
    const inGraph = proto.graph.initializer
      .filter((t) => !t.name.startsWith('const_'))
      .reduce((sum, t) => sum + t.dims.reduce((a, b) => a * b, 1), 0);
    expect(countParameters(spec)).toBe(inGraph);
  });
});

describe('windows', () => {
  it('RoBERTa positions are padding_idx + cumsum: 512 tokens run, 513 are refused (514 positions)', async () => {
    const s = await session('roberta');
    const row = (n: number): EncodedPair => ({
      ids: Array.from({ length: n }, (_, i) => (i === 0 ? 0 : i === n - 1 ? 2 : 1000 + i)),
      typeIds: [],
    });
    expect((await runLogits(s, [row(512)], 512, { padId: 1 }))[0]).toHaveLength(3);
    await expect(runLogits(s, [row(513)], 513, { padId: 1 })).rejects.toThrow();
  });

  it('ModernBERT keeps the 8192 window: runs past 512 tokens, refuses 8193', async () => {
    const s = await session('modernbert');
    const row = (n: number): EncodedPair => ({
      ids: Array.from({ length: n }, (_, i) => (i === 0 ? 50281 : i === n - 1 ? 50282 : 100 + ((i * 7919) % 50000))),
      typeIds: [],
    });
    expect((await runLogits(s, [row(1024)], 1024))[0]).toHaveLength(1);
    await expect(runLogits(s, [row(8193)], 8193)).rejects.toThrow();
    const proto = buildCrossEncoderModelProto(infos.get('modernbert')!.spec, { seed: 1 });
    const cos = proto.graph.initializer.find((t) => t.name === 'const_rope_cos')!;
    expect(cos.dims[0]).toBe(8192);
  }, 30_000);

  it('DeBERTa relative attention has no absolute table: 600 tokens run', async () => {
    const s = await session('deberta');
    const ids = Array.from({ length: 600 }, (_, i) => 1 + ((i * 7919) % 50000));
    const out = await runLogits(s, [{ ids, typeIds: [] }], 600);
    expect(out[0]!.every(Number.isFinite)).toBe(true);
  });
});

describe('input options', () => {
  it('int32 inputs: every integer input is int32 and scores equal the int64 graph', async () => {
    const c = CASES.find((x) => x.key === 'roberta')!;
    const info = await writeCrossEncoderModelDir(join(root, 'roberta-int32'), 'roberta-nli', {
      ...c.options,
      tokenizerDir: tokenizerFolder(c.folder),
      inputDtype: 'int32',
      seed: 42,
    });
    const s = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
    try {
      expect(s.inputMetadata.map((m) => m.isTensor && m.type)).toEqual(['int32', 'int32']);
      const rows = await rowsFor(c, PAIRS.slice(0, 4));
      const length = Math.max(...rows.map((r) => r.ids.length));
      const a = await runLogits(s, rows, length, { padId: 1 });
      const b = await runLogits(await session('roberta'), rows, length, { padId: 1 });
      expect(a).toEqual(b);
      const config = JSON.parse(readFileSync(join(info.dir, 'config.json'), 'utf8'));
      expect(config.relevance_gate.inputs).toEqual([
        { name: 'input_ids', dtype: 'int32', shape: ['batch_size', 'sequence_length'] },
        { name: 'attention_mask', dtype: 'int32', shape: ['batch_size', 'sequence_length'] },
      ]);
    } finally {
      await s.release();
    }
  });

  it.each([
    ['bert', (_r: number, i: number) => i],
    ['roberta', (_r: number, i: number) => 2 + i],
    ['modernbert', (_r: number, i: number) => i],
  ] as const)(
    '%s with a position_ids input: the natural positions reproduce the plain graph, stretched ones do not',
    async (key, natural) => {
      const c = CASES.find((x) => x.key === key)!;
      const info = await writeCrossEncoderModelDir(join(root, `${key}-positions`), c.preset, {
        ...c.options,
        tokenizerDir: tokenizerFolder(c.folder),
        extraInputs: ['position_ids'],
        seed: 42,
      });
      const s = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
      try {
        expect(s.inputNames).toEqual([...c.inputs, 'position_ids']);
        const rows = await rowsFor(c, PAIRS.slice(0, 3));
        const length = Math.max(...rows.map((r) => r.ids.length));
        const padId = info.spec.padTokenId ?? 0;
        const withPositions = await runLogits(s, rows, length, { padId, positionIds: natural });
        const plain = await runLogits(await session(key), rows, length, { padId });
        expect(maxAbsDiff(withPositions, plain)).toBeLessThanOrEqual(1e-5);
        // Stretched, not shifted: RoPE (ModernBERT) is invariant to a uniform shift.
        const stretched = await runLogits(s, rows, length, { padId, positionIds: (r, i) => natural(r, 2 * i) });
        expect(Math.abs(stretched[0]![0]! - plain[0]![0]!)).toBeGreaterThan(1e-4);
      } finally {
        await s.release();
      }
    },
  );

  it('an extra input of another name is required but its values are ignored', async () => {
    const c = CASES.find((x) => x.key === 'modernbert')!;
    const info = await writeCrossEncoderModelDir(join(root, 'modernbert-extra'), c.preset, {
      ...c.options,
      extraInputs: ['segment_hint'],
      seed: 42,
    });
    const s = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
    try {
      expect(s.inputNames).toEqual(['input_ids', 'attention_mask', 'segment_hint']);
      const rows = await rowsFor(c, PAIRS.slice(0, 2));
      const length = Math.max(...rows.map((r) => r.ids.length));
      const feeds = feedsFor(s, rows, length);
      const zeros = (await s.run(feeds)).logits!.data as Float32Array;
      const sevens = new ort.Tensor('int64', new BigInt64Array(rows.length * length).fill(7n), [rows.length, length]);
      const other = (await s.run({ ...feeds, segment_hint: sevens })).logits!.data as Float32Array;
      expect(Array.from(other)).toEqual(Array.from(zeros));
      const { segment_hint: _omitted, ...missing } = feeds;
      await expect(s.run(missing)).rejects.toThrow(/segment_hint/);
      expect(info.tokenizerFiles).toEqual([]);
    } finally {
      await s.release();
    }
  });

  it('DeBERTa token_type_ids are optional: with them the graph has 3 inputs, type_vocab_size 2, and types matter', async () => {
    const c = CASES.find((x) => x.key === 'deberta')!;
    const info = await writeCrossEncoderModelDir(join(root, 'deberta-types'), c.preset, {
      ...c.options,
      tokenizerDir: tokenizerFolder(c.folder),
      tokenTypeInput: true,
      seed: 42,
    });
    const s = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
    try {
      expect(s.inputNames).toEqual(['input_ids', 'attention_mask', 'token_type_ids']);
      const config = JSON.parse(readFileSync(join(info.dir, 'config.json'), 'utf8'));
      expect(config.type_vocab_size).toBe(2);
      const [row] = await rowsFor(c, PAIRS.slice(0, 1));
      const n = row!.ids.length;
      const typeA = await runLogits(s, [{ ids: row!.ids, typeIds: new Array(n).fill(0) }], n);
      const typeB = await runLogits(s, [{ ids: row!.ids, typeIds: row!.ids.map((_, i) => (i > n / 2 ? 1 : 0)) }], n);
      expect(Math.abs(typeA[0]![0]! - typeB[0]![0]!)).toBeGreaterThan(1e-4);
    } finally {
      await s.release();
    }
  });
});

describe('heads and config fields', () => {
  it('head option: a ModernBERT NLI head writes logits [b, 3] and the roberta-large-mnli labels', async () => {
    const info = await writeCrossEncoderModelDir(join(root, 'modernbert-nli'), 'modernbert-reranker', {
      layers: 1,
      hidden: 32,
      head: 'nli',
      tokenizerDir: tokenizerFolder('modernbert-large'),
    });
    const config = JSON.parse(readFileSync(join(info.dir, 'config.json'), 'utf8'));
    expect(config.id2label).toEqual(realConfig('roberta-large-mnli').id2label);
    const s = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
    try {
      const out = s.outputMetadata[0]!;
      expect(out.isTensor && out.shape).toEqual(['batch_size', 3]);
    } finally {
      await s.release();
    }
  });

  it('writes problem_type when the spec gives one', async () => {
    const info = await writeCrossEncoderModelDir(join(root, 'problem-type'), {
      ...FAMILY_PRESETS['roberta-nli'],
      name: 'roberta-nli-single-label',
      numLayers: 1,
      hiddenSize: 32,
      numHeads: 2,
      intermediateSize: 64,
      problemType: 'single_label_classification',
    });
    const config = JSON.parse(readFileSync(join(info.dir, 'config.json'), 'utf8'));
    expect(config.problem_type).toBe('single_label_classification');
    expect(config.model_type).toBe('roberta');
  });

  it('refuses a tokenizer folder of another family, bad sizes and DeBERTa position_ids', async () => {
    await expect(
      writeCrossEncoderModelDir(join(root, 'bad-family'), 'roberta-nli', {
        layers: 1,
        hidden: 32,
        tokenizerDir: tokenizerFolder('ms-marco-TinyBERT-L-2-v2'),
      }),
    ).rejects.toThrow(/"bert" model/);
    await expect(
      writeCrossEncoderModelDir(join(root, 'bad-heads'), 'roberta-nli', { layers: 1, hidden: 30, heads: 4 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      writeCrossEncoderModelDir(join(root, 'bad-layers'), 'roberta-nli', { layers: 0 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      writeCrossEncoderModelDir(join(root, 'bad-deberta'), 'deberta-injection', {
        layers: 1,
        hidden: 32,
        extraInputs: ['position_ids'],
      }),
    ).rejects.toThrow(/position_ids/);
    await expect(
      writeCrossEncoderModelDir(join(root, 'bad-modernbert'), 'modernbert-reranker', {
        layers: 1,
        hidden: 32,
        tokenTypeInput: true,
      }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

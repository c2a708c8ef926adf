/**
 * The generated cross-encoders are SPEED/SHAPE models (random weights, NOT relevance models).
 * These tests check what the rest of the tier relies on: onnxruntime loads them, names, dtypes
 * and shapes match the contract, batch and sequence are dynamic, padding is masked exactly
 * (which is what makes cross-request batching correct), generation is deterministic, and the
 * folder loads in transformers.js from local files only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register as registerModelsCommand } from '../../src/cli/commands/models.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { decodeOnnxModel } from '../../src/tooling/model-gen/onnx-proto.js';
import {
  buildCrossEncoderOnnx,
  countParameters,
  CROSS_ENCODER_PRESETS,
  defaultTokenizerJsonPath,
  TokenizerSourceError,
  writeCrossEncoderModelDir,
  type CrossEncoderModelDirInfo,
  type CrossEncoderPresetName,
} from '../../src/tooling/model-gen/index.js';
import { TINY_PRESETS } from './data.js';

const SESSION_OPTIONS: ort.InferenceSession.SessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1 };

let root: string;
const dirs = new Map<CrossEncoderPresetName, CrossEncoderModelDirInfo>();
const sessions = new Map<CrossEncoderPresetName, ort.InferenceSession>();
let tokenizer: Tokenizer;

async function session(preset: CrossEncoderPresetName): Promise<ort.InferenceSession> {
  let s = sessions.get(preset);
  if (s === undefined) {
    s = await ort.InferenceSession.create(dirs.get(preset)!.modelPath, SESSION_OPTIONS);
    sessions.set(preset, s);
  }
  return s;
}

interface EncodedPair {
  ids: number[];
  typeIds: number[];
}

/** Pads rows to `length` (ids 0, mask 0, type 0) and builds the feeds the session asks for. */
function feeds(
  s: ort.InferenceSession,
  rows: readonly EncodedPair[],
  length: number,
  maskPadding = true,
): Record<string, ort.Tensor> {
  const b = rows.length;
  const ids = new BigInt64Array(b * length);
  const mask = new BigInt64Array(b * length);
  const types = new BigInt64Array(b * length);
  rows.forEach((row, r) => {
    if (row.ids.length > length) throw new Error('row longer than the padded length');
    for (let i = 0; i < length; i++) mask[r * length + i] = i < row.ids.length || !maskPadding ? 1n : 0n;
    row.ids.forEach((id, i) => {
      ids[r * length + i] = BigInt(id);
    });
    row.typeIds.forEach((t, i) => {
      types[r * length + i] = BigInt(t);
    });
  });
  const all: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor('int64', ids, [b, length]),
    attention_mask: new ort.Tensor('int64', mask, [b, length]),
    token_type_ids: new ort.Tensor('int64', types, [b, length]),
  };
  return Object.fromEntries(s.inputNames.map((n) => [n, all[n]!]));
}

async function logits(
  s: ort.InferenceSession,
  rows: readonly EncodedPair[],
  length: number,
  output = 'logits',
  maskPadding = true,
): Promise<ort.Tensor> {
  const out = await s.run(feeds(s, rows, length, maskPadding));
  return out[output]!;
}

/** Synthetic rows of a given length: [CLS] a… [SEP] b… [SEP] with varied ids. */
function syntheticRow(length: number, salt: number): EncodedPair {
  const ids = Array.from({ length }, (_, i) => 1000 + ((i * 7919 + salt * 104729) % 28000));
  const split = Math.max(2, Math.floor(length / 3));
  ids[0] = 101;
  ids[split] = 102;
  ids[length - 1] = 102;
  return { ids, typeIds: ids.map((_, i) => (i > split ? 1 : 0)) };
}

const PAIRS: [string, string][] = [
  [
    'what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft',
    'experimental investigation of the aerodynamics of a wing in a slipstream',
  ],
  [
    'how can the aerodynamic performance of channel flow ground effect machines be calculated',
    'the boundary layer in simple shear flow past a flat plate',
  ],
  ['what is a fox', 'a fox is a small canine with a bushy tail'],
  [
    'papers on shock-sound wave interaction',
    'the propagation of weak shock waves through a region of turbulence is studied; results show the sound generated',
  ],
  ['heat transfer', 'no'],
];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-model-gen-'));
  const presets: CrossEncoderPresetName[] = [...TINY_PRESETS, 'tinybert-l2'];
  for (const preset of presets)
    dirs.set(preset, await writeCrossEncoderModelDir(join(root, preset), preset, { seed: 42 }));
  tokenizer = Tokenizer.fromFile(join(dirs.get('tiny')!.dir, 'tokenizer.json'));
}, 30_000);

afterAll(async () => {
  for (const s of sessions.values()) await s.release();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

async function encodePairs(pairs: readonly [string, string][]): Promise<EncodedPair[]> {
  return Promise.all(
    pairs.map(async ([q, p]) => {
      const e = await tokenizer.encode(q, p);
      return { ids: e.getIds(), typeIds: e.getTypeIds() };
    }),
  );
}

describe('tiny model: contract shape', () => {
  it('declares int64 [batch_size, sequence_length] inputs and a float logits [batch_size, 1] output', async () => {
    const s = await session('tiny');
    expect(s.inputNames).toEqual(['input_ids', 'attention_mask', 'token_type_ids']);
    expect(s.outputNames).toEqual(['logits']);
    for (const meta of s.inputMetadata) {
      expect(meta.isTensor).toBe(true);
      if (meta.isTensor) {
        expect(meta.type).toBe('int64');
        expect(meta.shape).toEqual(['batch_size', 'sequence_length']);
      }
    }
    const out = s.outputMetadata[0]!;
    expect(out.isTensor && out.type === 'float32' && out.shape).toEqual(['batch_size', 1]);
  });

  it('runs at batch 1 and 5, sequence 8 and 64, with finite logits that differ between pairs', async () => {
    const s = await session('tiny');
    for (const batch of [1, 5]) {
      for (const length of [8, 64]) {
        const rows = Array.from({ length: batch }, (_, r) => syntheticRow(length, r + length));
        const t = await logits(s, rows, length);
        expect(t.dims).toEqual([batch, 1]);
        const values = Array.from(t.data as Float32Array);
        expect(values.every(Number.isFinite)).toBe(true);
        if (batch > 1) expect(new Set(values.map((v) => v.toFixed(4))).size).toBe(batch);
      }
    }
  });

  it('records that it is a speed/shape model in the ONNX metadata', async () => {
    const model = decodeOnnxModel(new Uint8Array(await readFile(dirs.get('tiny')!.modelPath)));
    expect(model.ir_version).toBe(8);
    expect(model.opset_import).toEqual([{ domain: '', version: 17 }]);
    const meta = Object.fromEntries(model.metadata_props.map((p) => [p.key, p.value]));
    expect(meta['relevance_gate.kind']).toMatch(/NOT a relevance model/);
    expect(meta['relevance_gate.seed']).toBe('42');
    expect(model.doc_string).toMatch(/NOT a relevance model/);
  });
});

describe('padding invariance (what makes cross-request batching correct)', () => {
  it('gives each real pair the same logit alone and inside a padded, reordered batch', async () => {
    const s = await session('tiny');
    const rows = await encodePairs(PAIRS);
    const alone = await Promise.all(rows.map(async (r) => (await logits(s, [r], r.ids.length)).data[0] as number));
    expect(new Set(alone.map((v) => v.toFixed(4))).size).toBe(rows.length);

    const order = [3, 0, 4, 2, 1];
    const longest = Math.max(...rows.map((r) => r.ids.length));
    for (const length of [longest, longest + 17, 128]) {
      const batched = (
        await logits(
          s,
          order.map((i) => rows[i]!),
          length,
        )
      ).data as Float32Array;
      order.forEach((pairIndex, position) => {
        expect(Math.abs(batched[position]! - alone[pairIndex]!)).toBeLessThanOrEqual(1e-4);
      });
    }
  });

  it('is not vacuous: attending to the padding changes the logits', async () => {
    const s = await session('tiny');
    const rows = await encodePairs(PAIRS);
    const masked = (await logits(s, rows, 96)).data as Float32Array;
    const unmasked = (await logits(s, rows, 96, 'logits', false)).data as Float32Array;
    const maxChange = Math.max(...Array.from(masked, (v, i) => Math.abs(v - unmasked[i]!)));
    expect(maxChange).toBeGreaterThan(1e-2);
  });

  it('an all-padding filler row yields finite logits and leaves the other rows unchanged', async () => {
    const s = await session('tiny');
    const rows = await encodePairs(PAIRS.slice(0, 2));
    const length = Math.max(...rows.map((r) => r.ids.length));
    const plain = (await logits(s, rows, length)).data as Float32Array;
    const withFiller = (await logits(s, [rows[0]!, { ids: [], typeIds: [] }, rows[1]!], length)).data as Float32Array;
    expect(Number.isFinite(withFiller[1]!)).toBe(true);
    expect(Math.abs(withFiller[0]! - plain[0]!)).toBeLessThanOrEqual(1e-4);
    expect(Math.abs(withFiller[2]! - plain[1]!)).toBeLessThanOrEqual(1e-4);
  });

  it('runs at the 512-token position limit and refuses longer sequences', async () => {
    const s = await session('tiny');
    expect((await logits(s, [syntheticRow(512, 1)], 512)).dims).toEqual([1, 1]);
    await expect(logits(s, [syntheticRow(513, 1)], 513)).rejects.toThrow();
  });

  it('holds on the tinybert-l2 sizes (2 layers, 2 heads)', async () => {
    const s = await session('tinybert-l2');
    const rows = await encodePairs(PAIRS);
    const alone = await Promise.all(rows.map(async (r) => (await logits(s, [r], r.ids.length)).data[0] as number));
    const batched = (await logits(s, rows, 80)).data as Float32Array;
    alone.forEach((v, i) => {
      expect(Math.abs(batched[i]! - v)).toBeLessThanOrEqual(1e-4);
    });
  });
});

describe('contract-test variants', () => {
  it('tiny-no-token-type has no token_type_ids input and still runs', async () => {
    const s = await session('tiny-no-token-type');
    expect(s.inputNames).toEqual(['input_ids', 'attention_mask']);
    const t = await logits(s, [syntheticRow(12, 1), syntheticRow(12, 2)], 12);
    expect(t.dims).toEqual([2, 1]);
  });

  it('tiny-two-logits outputs logits [b, 2]', async () => {
    const s = await session('tiny-two-logits');
    expect(s.outputNames).toEqual(['logits']);
    const t = await logits(s, [syntheticRow(10, 1), syntheticRow(10, 2), syntheticRow(10, 3)], 10);
    expect(t.dims).toEqual([3, 2]);
  });

  it('tiny-multi-signal outputs four named [b, 1] heads and no logits', async () => {
    const s = await session('tiny-multi-signal');
    expect(s.outputNames).toEqual(['relevant', 'evidence', 'contradicts_premise', 'injection']);
    const out = await s.run(feeds(s, [syntheticRow(9, 1), syntheticRow(9, 2)], 9));
    for (const name of s.outputNames) {
      expect(out[name]!.dims).toEqual([2, 1]);
      expect(Array.from(out[name]!.data as Float32Array).every(Number.isFinite)).toBe(true);
    }
    // Separate heads, not copies of one another.
    expect(out.relevant!.data[0]).not.toBe(out.evidence!.data[0]);
  });

  it('tiny-three-logits outputs logits [b, 3] (outside the contract)', async () => {
    const s = await session('tiny-three-logits');
    expect((await logits(s, [syntheticRow(8, 1)], 8)).dims).toEqual([1, 3]);
  });

  it('tiny-int32-input-ids declares input_ids int32 and refuses int64 ids', async () => {
    const s = await session('tiny-int32-input-ids');
    const meta = s.inputMetadata.find((m) => m.name === 'input_ids')!;
    expect(meta.isTensor && meta.type).toBe('int32');
    await expect(s.run(feeds(s, [syntheticRow(8, 1)], 8))).rejects.toThrow();
  });

  it('tiny-no-input-ids has a `tokens` input instead of input_ids', async () => {
    const s = await session('tiny-no-input-ids');
    expect(s.inputNames).toEqual(['tokens', 'attention_mask', 'token_type_ids']);
  });
});

describe('benchmark presets', () => {
  it('tinybert-l2 has the ms-marco-TinyBERT-L-2-v2 shapes', () => {
    const model = decodeOnnxModel(buildCrossEncoderOnnx(CROSS_ENCODER_PRESETS['tinybert-l2'], { seed: 1 }));
    const dims = new Map(model.graph.initializer.map((t) => [t.name, t.dims]));
    expect(dims.get('bert.embeddings.word_embeddings.weight')).toEqual([30522, 128]);
    expect(dims.get('bert.embeddings.position_embeddings.weight')).toEqual([512, 128]);
    expect(dims.get('bert.embeddings.token_type_embeddings.weight')).toEqual([2, 128]);
    expect(dims.get('bert.encoder.layer.1.intermediate.dense.weight')).toEqual([128, 512]);
    expect(dims.has('bert.encoder.layer.2.attention.self.query.weight')).toBe(false);
    expect(dims.get('classifier.weight')).toEqual([128, 1]);
    const heads = model.graph.initializer.find((t) => t.name === 'const_split_heads_shape')!;
    expect(Array.from(new BigInt64Array(new Uint8Array(heads.raw_data).buffer))).toEqual([0n, 0n, 2n, 64n]);
  });

  it('parameter counts match the real checkpoints', () => {
    // BertForSequenceClassification with one label, as in the published cross-encoders.
    expect(countParameters(CROSS_ENCODER_PRESETS['tinybert-l2'])).toBe(4_386_049);
    expect(countParameters(CROSS_ENCODER_PRESETS['minilm-l6'])).toBe(22_713_601);
    expect(dirs.get('tinybert-l2')!.onnxBytes).toBeGreaterThan(4 * 4_386_049);
    expect(dirs.get('tinybert-l2')!.onnxBytes).toBeLessThan(4 * 4_386_049 + 200_000);
  });
});

describe('determinism', () => {
  it('same seed gives identical bytes; another seed gives other weights and other logits', async () => {
    const spec = CROSS_ENCODER_PRESETS.tiny;
    const a = buildCrossEncoderOnnx(spec, { seed: 7 });
    const b = buildCrossEncoderOnnx(spec, { seed: 7 });
    const c = buildCrossEncoderOnnx(spec, { seed: 8 });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    expect(a.length).toBe(c.length);
    expect(Buffer.from(a).equals(Buffer.from(c))).toBe(false);

    const rows = [syntheticRow(16, 1)];
    const sa = await ort.InferenceSession.create(a, SESSION_OPTIONS);
    const sc = await ort.InferenceSession.create(c, SESSION_OPTIONS);
    const la = (await logits(sa, rows, 16)).data[0] as number;
    const lc = (await logits(sc, rows, 16)).data[0] as number;
    await sa.release();
    await sc.release();
    expect(Math.abs(la - lc)).toBeGreaterThan(1e-3);
  });

  it('writing the same preset twice gives the same file hash', async () => {
    const again = await writeCrossEncoderModelDir(join(root, 'tiny-again'), 'tiny', { seed: 42 });
    expect(again.onnxSha256).toBe(dirs.get('tiny')!.onnxSha256);
  });
});

describe('model folder', () => {
  it('has the Hugging Face layout and says it is not a relevance model', async () => {
    const dir = dirs.get('tinybert-l2')!.dir;
    for (const f of [
      'config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'special_tokens_map.json',
      'README.md',
      'onnx/model.onnx',
    ]) {
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      architectures: ['BertForSequenceClassification'],
      model_type: 'bert',
      hidden_size: 128,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      intermediate_size: 512,
      vocab_size: 30522,
      max_position_embeddings: 512,
      type_vocab_size: 2,
      num_labels: 1,
      id2label: { '0': 'LABEL_0' },
      relevance_gate: {
        kind: 'speed/shape model, random weights, NOT a relevance model',
        seed: 42,
        preset: 'tinybert-l2',
      },
    });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toMatch(/NOT A RELEVANCE MODEL/);
    expect(readFileSync(join(dir, 'tokenizer.json')).equals(readFileSync(defaultTokenizerJsonPath()))).toBe(true);
    const tokConfig = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    expect(tokConfig).toMatchObject({ tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512 });
  });

  it('loads in transformers.js from local files only and matches onnxruntime', async () => {
    const { AutoModelForSequenceClassification, AutoTokenizer, env } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    const dir = dirs.get('tinybert-l2')!.dir;
    const hfTokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    const model = await AutoModelForSequenceClassification.from_pretrained(dir, {
      local_files_only: true,
      dtype: 'fp32',
      device: 'cpu',
    });
    try {
      const [queries, passages] = [PAIRS.map((p) => p[0]), PAIRS.map((p) => p[1])];
      const inputs = hfTokenizer(queries, { text_pair: passages, padding: true, truncation: true });
      const output = (await model(inputs)) as { logits: { dims: number[]; data: Float32Array } };
      expect(output.logits.dims).toEqual([PAIRS.length, 1]);

      const reference = await encodePairs(PAIRS);
      const s = await session('tinybert-l2');
      for (let i = 0; i < reference.length; i++) {
        const direct = (await logits(s, [reference[i]!], reference[i]!.ids.length)).data[0] as number;
        expect(Math.abs(output.logits.data[i]! - direct)).toBeLessThanOrEqual(1e-4);
      }
    } finally {
      await model.dispose();
    }
  }, 30_000);
});

describe('errors and CLI', () => {
  it('rejects unknown presets, bad specs and bad seeds with InvalidArgumentError', async () => {
    await expect(writeCrossEncoderModelDir(join(root, 'x'), 'nope' as CrossEncoderPresetName)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(
      writeCrossEncoderModelDir(join(root, 'x'), { ...CROSS_ENCODER_PRESETS.tiny, name: 'bad', numHeads: 3 }),
    ).rejects.toThrow(/not divisible/);
    await expect(writeCrossEncoderModelDir(join(root, 'x'), 'tiny', { seed: -1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(
      writeCrossEncoderModelDir(join(root, 'x'), {
        ...CROSS_ENCODER_PRESETS.tiny,
        name: 'dup',
        outputs: [
          { name: 'a', size: 1 },
          { name: 'a', size: 1 },
        ],
      }),
    ).rejects.toThrow(/duplicate/);
  });

  it('says where the tokenizer was expected when it is missing', async () => {
    const missing = join(root, 'no-such', 'tokenizer.json');
    await expect(writeCrossEncoderModelDir(join(root, 'y'), 'tiny', { tokenizerJsonPath: missing })).rejects.toSatisfy(
      (e: unknown) => e instanceof TokenizerSourceError && e.message.includes(missing),
    );
  });

  it('refuses a tokenizer whose ids do not fit the vocabulary', async () => {
    await expect(
      writeCrossEncoderModelDir(join(root, 'z'), {
        ...CROSS_ENCODER_PRESETS.tiny,
        name: 'small-vocab',
        vocabSize: 1000,
      }),
    ).rejects.toBeInstanceOf(TokenizerSourceError);
  });

  it('`models --out DIR --only tiny,tiny-two-logits` writes one folder per preset', async () => {
    const out = join(root, 'cli');
    const program = new Command().exitOverride();
    registerModelsCommand(program);
    const writes: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      writes.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      await program.parseAsync(['models', '--out', out, '--only', 'tiny,tiny-two-logits', '--seed', '3'], {
        from: 'user',
      });
    } finally {
      process.stdout.write = write;
    }
    expect(writes.join('')).toMatch(/NOT a relevance model/);
    for (const preset of ['tiny', 'tiny-two-logits']) {
      expect(existsSync(join(out, preset, 'onnx', 'model.onnx'))).toBe(true);
      expect(JSON.parse(readFileSync(join(out, preset, 'config.json'), 'utf8')).relevance_gate.seed).toBe(3);
    }
    expect(existsSync(join(out, 'tinybert-l2'))).toBe(false);
  });
});

/**
 * The model importer on tiny BERT checkpoints written here (Hugging Face names and layout, the
 * package's bert-base-uncased tokenizer): the output layout, descriptor and provenance; the graphs
 * against an independent float64 forward pass (bi-encoder embeddings per pooling mode, cross-encoder
 * logits); the byte-for-byte agreement with the model generator when the weights are its own; the
 * existing cross-encoder tier loading the output; F16 / BF16 weights; the typed refusals; and the
 * up-to-date skip. The real-model parity (all-MiniLM-L6-v2) is minilm-parity.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import {
  buildCrossEncoderModelProto,
  decodeOnnxModel,
  HEAD_FILE,
  type ImportedModelDescriptor,
  importModel,
  MissingModelFileError,
  MissingTensorsError,
  ModelImportError,
  parseSafetensors,
  readSafetensors,
  SafetensorsFormatError,
  TensorShapeError,
  tensorAsFloat32,
  UnknownTensorsError,
  UnsupportedArchitectureError,
  UnsupportedDtypeError,
  UnsupportedWeightsFormatError,
} from '../../src/tooling/model-gen/index.js';
import { cosine, encodeTexts, maxAbs, runEmbeddings, textTokenizer } from './embed.js';
import { SESSION_OPTIONS } from './helpers.js';
import {
  type CheckpointTensor,
  checkpointTensors,
  fromHalfBits,
  rawTensor,
  referenceEmbedding,
  referenceHidden,
  referenceLogits,
  safetensorsBytes,
  TINY_SPEC,
  toHalfBits,
  writeCheckpointFolder,
} from './import-fixture.js';

const run = promisify(execFile);

const TEXTS = [
  'What is BM25?',
  'BM25 is a bag-of-words ranking function used by search engines to estimate the relevance of documents.',
  '',
  'Café déjà vu — naïve façade, 東京 and emoji 🙂 mixed in.',
  'a',
  'Zinc supplementation reduces the duration of the common cold in adults, according to several trials.',
];
const MAX_LENGTH = 64;

let root: string;
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'rg-import-'));
});
afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

async function rowsOf(dir: string) {
  return encodeTexts(textTokenizer(join(dir, 'tokenizer.json'), MAX_LENGTH), TEXTS);
}

describe('bi-encoder import (sentence-transformers layout, BertModel names)', () => {
  let src: string;
  let out: string;
  let tensors: Map<string, CheckpointTensor>;

  beforeAll(async () => {
    src = join(root, 'hf-bi');
    out = join(root, 'bi');
    tensors = writeCheckpointFolder(src, {
      sentenceTransformers: { pooling: 'mean_tokens', normalize: true, maxSeqLength: 128 },
      provenance: {
        name: 'tiny',
        hf_id: 'test/tiny',
        package: { name: 'tiny-pkg', version: '1.0' },
        model_license: 'apache-2.0',
      },
    });
    await importModel(src, { kind: 'bi-encoder', outDir: out });
  }, 60_000);

  it('writes the layout: fp32 + int8 graphs, copied tokenizer and config files, descriptor, provenance', () => {
    for (const f of [
      'onnx/model.onnx',
      'onnx/model_int8.onnx',
      'config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'modules.json',
      'sentence_bert_config.json',
      '1_Pooling/config.json',
      'relevance-gate-model.json',
      'PROVENANCE.json',
    ]) {
      expect(existsSync(join(out, f)), f).toBe(true);
    }
    expect(existsSync(join(out, 'model.safetensors'))).toBe(false);
    expect(existsSync(join(out, HEAD_FILE))).toBe(false);
    expect(readFileSync(join(out, 'tokenizer.json')).equals(readFileSync(join(src, 'tokenizer.json')))).toBe(true);
    const d = JSON.parse(readFileSync(join(out, 'relevance-gate-model.json'), 'utf8')) as ImportedModelDescriptor;
    expect(d).toMatchObject({
      format: 1,
      kind: 'bi-encoder',
      pooling: 'mean',
      normalize: true,
      dimensions: TINY_SPEC.hiddenSize,
      maxLength: 128,
      lowercase: true,
      tokenizerLowercases: true,
      inputs: ['input_ids', 'attention_mask', 'token_type_ids'],
      output: { name: 'embeddings', shape: ['batch_size', TINY_SPEC.hiddenSize] },
      files: {
        fp32: 'onnx/model.onnx',
        int8: 'onnx/model_int8.onnx',
        tokenizer: 'tokenizer.json',
        config: 'config.json',
      },
      head: null,
    });
    expect(d.source).toMatchObject({
      folder: '../hf-bi',
      name: 'tiny',
      hfId: 'test/tiny',
      modelType: 'bert',
      package: { name: 'tiny-pkg', version: '1.0' },
      license: 'apache-2.0',
      weights: ['model.safetensors'],
      weightDtypes: ['F32'],
      normalize: true,
    });
    expect(d.source.files['model.safetensors']!.sha256).toBe(sha(join(src, 'model.safetensors')));
    const prov = JSON.parse(readFileSync(join(out, 'PROVENANCE.json'), 'utf8'));
    expect(prov.source.provenance).toEqual(JSON.parse(readFileSync(join(src, 'PROVENANCE.json'), 'utf8')));
    expect(prov.model).toMatchObject({ name: 'tiny', hf_id: 'test/tiny', license: 'apache-2.0' });
    expect(Object.keys(prov.files).sort()).toEqual(
      [
        '1_Pooling/config.json',
        'config.json',
        'modules.json',
        'onnx/model.onnx',
        'onnx/model_int8.onnx',
        'relevance-gate-model.json',
        'sentence_bert_config.json',
        'tokenizer.json',
        'tokenizer_config.json',
      ].sort(),
    );
    for (const [rel, f] of Object.entries(prov.files as Record<string, { sha256: string; size: number }>)) {
      expect(sha(join(out, rel)), rel).toBe(f.sha256);
      expect(statSync(join(out, rel)).size).toBe(f.size);
    }
  });

  it('the graph declares the contract and its ONNX metadata names the source', async () => {
    const session = await ort.InferenceSession.create(join(out, 'onnx/model.onnx'), SESSION_OPTIONS);
    try {
      expect(session.inputNames).toEqual(['input_ids', 'attention_mask', 'token_type_ids']);
      for (const meta of session.inputMetadata) expect(meta).toMatchObject({ isTensor: true, type: 'int64' });
      expect(session.outputNames).toEqual(['embeddings']);
      expect(session.outputMetadata[0]).toMatchObject({ type: 'float32', shape: ['batch_size', TINY_SPEC.hiddenSize] });
    } finally {
      await session.release();
    }
    const model = decodeOnnxModel(new Uint8Array(readFileSync(join(out, 'onnx/model.onnx'))));
    const meta = Object.fromEntries(model.metadata_props.map((p) => [p.key, p.value]));
    expect(meta['relevance_gate.kind']).toBe('imported bi-encoder');
    expect(meta['relevance_gate.source']).toBe('test/tiny');
    expect(meta['relevance_gate.pooling']).toBe('mean');
  });

  it('embeddings match an independent float64 forward pass (mean pooling, L2-normalised), batched with padding', async () => {
    const rows = await rowsOf(out);
    const session = await ort.InferenceSession.create(join(out, 'onnx/model.onnx'), SESSION_OPTIONS);
    try {
      const batched = await runEmbeddings(session, rows, TEXTS.length);
      const single = await runEmbeddings(session, rows, 1);
      for (let i = 0; i < TEXTS.length; i++) {
        const ref = referenceEmbedding(referenceHidden(tensors, TINY_SPEC, rows[i]!.ids, rows[i]!.typeIds), 'mean');
        expect(maxAbs(batched[i]!, ref), TEXTS[i]).toBeLessThan(2e-6);
        expect(maxAbs(batched[i]!, single[i]!), `padding changes text ${i}`).toBeLessThan(1e-6);
        expect(Math.hypot(...batched[i]!)).toBeCloseTo(1, 6);
      }
    } finally {
      await session.release();
    }
  });

  it('int8 embeddings stay close to fp32 (dynamic quantization of the same graph)', async () => {
    const rows = await rowsOf(out);
    const fp32 = await ort.InferenceSession.create(join(out, 'onnx/model.onnx'), SESSION_OPTIONS);
    const int8 = await ort.InferenceSession.create(join(out, 'onnx/model_int8.onnx'), SESSION_OPTIONS);
    try {
      const a = await runEmbeddings(fp32, rows);
      const b = await runEmbeddings(int8, rows);
      for (let i = 0; i < rows.length; i++) expect(cosine(a[i]!, b[i]!)).toBeGreaterThan(0.95);
      // Per-channel weights: each MatMulInteger's weight has a zero point (and scale) per output column.
      const q = decodeOnnxModel(new Uint8Array(readFileSync(join(out, 'onnx/model_int8.onnx'))));
      const init = new Map(q.graph.initializer.map((t) => [t.name, t]));
      const matMuls = q.graph.node.filter((n) => n.op_type === 'MatMulInteger');
      expect(matMuls.length).toBe(6 * TINY_SPEC.numLayers);
      for (const n of matMuls) {
        const w = init.get(n.input[1]!)!;
        expect(w.data_type).toBe(3); // INT8
        expect(init.get(n.input[3]!)!.dims).toEqual([w.dims[1]]);
        expect(init.get(n.input[1]!.replace(/_quantized$/, '_scale'))!.dims).toEqual([w.dims[1]]);
      }
      const meta = Object.fromEntries(q.metadata_props.map((p) => [p.key, p.value]));
      expect(meta['relevance_gate.quantization']).toBe('dynamic qint8 per-channel');
    } finally {
      await fp32.release();
      await int8.release();
    }
  });

  it.each(['cls', 'max', 'mean_sqrt_len'] as const)(
    'pooling %s (from 1_Pooling/config.json, or the option)',
    async (mode) => {
      const key = { cls: 'cls_token', max: 'max_tokens', mean_sqrt_len: 'mean_sqrt_len_tokens' }[mode];
      const dir = join(root, `hf-${mode}`);
      writeCheckpointFolder(dir, {
        tensors: checkpointTensors(TINY_SPEC, { perturbLayerNorm: true }),
        sentenceTransformers: { pooling: key, normalize: true, maxSeqLength: 128 },
      });
      const fromFolder = await importModel(dir, { kind: 'bi-encoder', outDir: join(root, `bi-${mode}`) });
      const fromOption = await importModel(src, {
        kind: 'bi-encoder',
        outDir: join(root, `bi-${mode}-opt`),
        pooling: mode,
      });
      expect(fromFolder.descriptor.pooling).toBe(mode);
      expect(fromOption.descriptor.pooling).toBe(mode);
      const rows = await rowsOf(fromFolder.dir);
      for (const result of [fromFolder, fromOption]) {
        const session = await ort.InferenceSession.create(join(result.dir, 'onnx/model.onnx'), SESSION_OPTIONS);
        try {
          const got = await runEmbeddings(session, rows, TEXTS.length);
          for (let i = 0; i < rows.length; i++) {
            const ref = referenceEmbedding(referenceHidden(tensors, TINY_SPEC, rows[i]!.ids, rows[i]!.typeIds), mode);
            expect(maxAbs(got[i]!, ref), `${mode} text ${i}`).toBeLessThan(2e-6);
          }
        } finally {
          await session.release();
        }
      }
    },
  );

  it('skips an up-to-date output, rebuilds when an input or an output file changes, or with force', async () => {
    const model = join(out, 'onnx/model.onnx');
    const before = statSync(model).mtimeMs;
    const again = await importModel(src, { kind: 'bi-encoder', outDir: out });
    expect(again.skipped).toBe(true);
    expect(statSync(model).mtimeMs).toBe(before);

    writeFileSync(join(out, 'tokenizer_config.json'), '{}');
    const repaired = await importModel(src, { kind: 'bi-encoder', outDir: out });
    expect(repaired.skipped).toBe(false);
    expect(
      readFileSync(join(out, 'tokenizer_config.json')).equals(readFileSync(join(src, 'tokenizer_config.json'))),
    ).toBe(true);

    const forced = await importModel(src, { kind: 'bi-encoder', outDir: out, force: true });
    expect(forced.skipped).toBe(false);

    const cfg = JSON.parse(readFileSync(join(src, 'sentence_bert_config.json'), 'utf8'));
    writeFileSync(join(src, 'sentence_bert_config.json'), JSON.stringify({ ...cfg, max_seq_length: 96 }));
    const changed = await importModel(src, { kind: 'bi-encoder', outDir: out });
    expect(changed.skipped).toBe(false);
    expect(changed.descriptor.maxLength).toBe(96);
    expect((await importModel(src, { kind: 'bi-encoder', outDir: out })).skipped).toBe(true);
    // Another kind or option is another output.
    expect((await importModel(src, { kind: 'bi-encoder', outDir: out, pooling: 'cls' })).skipped).toBe(false);
  });
});

describe('cross-encoder import', () => {
  it('a bi-encoder checkpoint gets its own pooler and a seeded classifier, recorded and written to head.safetensors', async () => {
    const src = join(root, 'hf-cross-from-bi');
    const tensors = writeCheckpointFolder(src, {
      sentenceTransformers: { pooling: 'mean_tokens', normalize: true, maxSeqLength: 128 },
    });
    const result = await importModel(src, { kind: 'cross-encoder', outDir: join(root, 'cross-from-bi'), seed: 5 });
    const d = result.descriptor;
    expect(d).toMatchObject({
      kind: 'cross-encoder',
      dimensions: 1,
      output: { name: 'logits', shape: ['batch_size', 1] },
    });
    expect(d.head).toMatchObject({ pooler: 'checkpoint', classifier: 'seeded', seed: 5, file: HEAD_FILE });
    expect(d.head!.note).toMatch(/NOT relevance/);
    // sentence-transformers pipeline files are not copied into a cross-encoder folder.
    expect(existsSync(join(result.dir, 'modules.json'))).toBe(false);
    expect(existsSync(join(result.dir, '1_Pooling'))).toBe(false);
    const head = await readSafetensors(join(result.dir, HEAD_FILE));
    expect([...head.tensors.keys()].sort()).toEqual(['classifier.bias', 'classifier.weight']);
    expect(head.tensors.get('classifier.weight')!.shape).toEqual([1, TINY_SPEC.hiddenSize]);
    const all = new Map(tensors);
    for (const t of head.tensors.values()) all.set(t.name, { shape: t.shape, values: tensorAsFloat32(head, t) });

    const rows = await encodeTexts(textTokenizer(join(result.dir, 'tokenizer.json'), MAX_LENGTH), TEXTS);
    const session = await ort.InferenceSession.create(join(result.dir, 'onnx/model.onnx'), SESSION_OPTIONS);
    try {
      const got = await runEmbeddings(session, rows, TEXTS.length, 'logits');
      for (let i = 0; i < rows.length; i++) {
        const ref = referenceLogits(all, referenceHidden(all, TINY_SPEC, rows[i]!.ids, rows[i]!.typeIds));
        expect(maxAbs(got[i]!, ref)).toBeLessThan(1e-5);
      }
    } finally {
      await session.release();
    }
    // Seeded: the same seed gives the same head, another seed another one.
    const again = await importModel(src, { kind: 'cross-encoder', outDir: join(root, 'cross-from-bi-2'), seed: 5 });
    expect(readFileSync(join(again.dir, HEAD_FILE)).equals(readFileSync(join(result.dir, HEAD_FILE)))).toBe(true);
    const other = await importModel(src, { kind: 'cross-encoder', outDir: join(root, 'cross-from-bi-3'), seed: 6 });
    expect(readFileSync(join(other.dir, HEAD_FILE)).equals(readFileSync(join(result.dir, HEAD_FILE)))).toBe(false);
  }, 60_000);

  it('a BertForSequenceClassification checkpoint of the generator’s own weights imports to the generator’s graph (same initializers, same logits)', async () => {
    const seed = 11;
    const src = join(root, 'hf-seq-cls');
    writeCheckpointFolder(src, {
      prefix: 'bert.',
      classifier: true,
      tensors: checkpointTensors(TINY_SPEC, { seed }),
      config: { id2label: { 0: 'LABEL_0' } },
    });
    const result = await importModel(src, { kind: 'cross-encoder', outDir: join(root, 'seq-cls') });
    expect(result.descriptor.head).toMatchObject({
      pooler: 'checkpoint',
      classifier: 'checkpoint',
      seed: null,
      file: null,
    });
    expect(existsSync(join(result.dir, HEAD_FILE))).toBe(false);
    const generated = buildCrossEncoderModelProto(TINY_SPEC, { seed });
    const imported = decodeOnnxModel(new Uint8Array(readFileSync(join(result.dir, 'onnx/model.onnx'))));
    const byName = new Map(imported.graph.initializer.map((t) => [t.name, t]));
    expect(imported.graph.initializer.length).toBe(generated.graph.initializer.length);
    for (const t of generated.graph.initializer) {
      const got = byName.get(t.name);
      expect(got, t.name).toBeDefined();
      expect(Buffer.from(got!.raw_data).equals(Buffer.from(t.raw_data)), t.name).toBe(true);
    }
    expect(imported.graph.node.map((n) => [n.op_type, n.input, n.output])).toEqual(
      generated.graph.node.map((n) => [n.op_type, n.input, n.output]),
    );
  });

  it('the existing cross-encoder tier loads the imported folder (fp32 and the int8 variant) and scores with its logits', async () => {
    const src = join(root, 'hf-seq-cls');
    const dir = join(root, 'seq-cls');
    const tensors = new Map<string, CheckpointTensor>();
    const file = await readSafetensors(join(src, 'model.safetensors'));
    for (const t of file.tensors.values())
      if (t.dtype === 'F32') tensors.set(t.name, { shape: t.shape, values: tensorAsFloat32(file, t) });
    const query = 'what reduces the common cold?';
    const passages = TEXTS.slice(1);
    const ce = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength: MAX_LENGTH });
    try {
      expect(ce.info.contract.head).toEqual({ kind: 'single', name: 'logits' });
      const scores = await ce.score(query, passages);
      const pair = textTokenizer(join(dir, 'tokenizer.json'), MAX_LENGTH);
      for (let i = 0; i < passages.length; i++) {
        const { ids, typeIds } = await pair.encodePair(query, passages[i]!);
        const ref = referenceLogits(tensors, referenceHidden(tensors, TINY_SPEC, ids, typeIds, 'bert.'), 'bert.');
        expect(Math.abs(scores.logits[i]! - ref[0]!)).toBeLessThan(1e-5);
      }
    } finally {
      await ce.close();
    }
    const q = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength: MAX_LENGTH, variant: 'int8' });
    try {
      expect(q.info.modelPath).toBe(join(dir, 'onnx/model_int8.onnx'));
      expect((await q.score(query, passages)).logits.length).toBe(passages.length);
    } finally {
      await q.close();
    }
  }, 60_000);
});

describe('weights in F16 and BF16', () => {
  it('widens half and bfloat16 exactly', () => {
    const values = [0, 1, -2, 0.5, 65504, 2 ** -24, 0.1, -3.25, 1e-3];
    for (const dtype of ['F16', 'BF16'] as const) {
      const file = parseSafetensors(safetensorsBytes([rawTensor('t', dtype, [values.length], values)]));
      const got = tensorAsFloat32(file, file.tensors.get('t')!);
      const expected = values.map((v) => {
        if (dtype === 'F16') return fromHalfBits(toHalfBits(v));
        const f = new DataView(new ArrayBuffer(4));
        f.setFloat32(0, v);
        f.setUint32(0, f.getUint32(0) & 0xffff0000);
        return f.getFloat32(0);
      });
      expect(Array.from(got)).toEqual(expected);
    }
  });

  it.each(['F16', 'BF16'] as const)(
    'imports %s weights (recorded) with embeddings close to the float32 ones',
    async (dtype) => {
      const tensors = checkpointTensors(TINY_SPEC, { perturbLayerNorm: true });
      const f32 = join(root, `hf-${dtype}-f32`);
      const low = join(root, `hf-${dtype}`);
      writeCheckpointFolder(f32, { tensors });
      writeCheckpointFolder(low, { tensors, dtype });
      const a = await importModel(f32, { kind: 'bi-encoder', outDir: join(root, `bi-${dtype}-f32`), int8: false });
      const b = await importModel(low, { kind: 'bi-encoder', outDir: join(root, `bi-${dtype}`), int8: false });
      expect(b.descriptor.source.weightDtypes).toEqual([dtype]);
      expect(b.descriptor.files.int8).toBeNull();
      expect(existsSync(join(b.dir, 'onnx/model_int8.onnx'))).toBe(false);
      const rows = await rowsOf(a.dir);
      const sa = await ort.InferenceSession.create(join(a.dir, 'onnx/model.onnx'), SESSION_OPTIONS);
      const sb = await ort.InferenceSession.create(join(b.dir, 'onnx/model.onnx'), SESSION_OPTIONS);
      try {
        const ea = await runEmbeddings(sa, rows);
        const eb = await runEmbeddings(sb, rows);
        for (let i = 0; i < rows.length; i++) expect(cosine(ea[i]!, eb[i]!)).toBeGreaterThan(0.999);
      } finally {
        await sa.release();
        await sb.release();
      }
    },
  );
});

describe('sharded weights', () => {
  it('reads the shards model.safetensors.index.json lists, to the same graph as one file', async () => {
    const single = join(root, 'hf-single');
    const sharded = join(root, 'hf-sharded');
    const tensors = checkpointTensors(TINY_SPEC, { perturbLayerNorm: true });
    writeCheckpointFolder(single, { tensors });
    writeCheckpointFolder(sharded, { tensors });
    rmSync(join(sharded, 'model.safetensors'));
    const names = [...tensors.keys()]
      .map((n) => (n.startsWith('bert.') ? n.slice(5) : n))
      .filter((n) => !n.startsWith('classifier.'));
    const halves = [names.slice(0, 10), names.slice(10)];
    const weightMap: Record<string, string> = {};
    halves.forEach((part, k) => {
      const file = `model-0000${k + 1}-of-00002.safetensors`;
      const raw = part.map((n) => {
        const t = tensors.get(
          n.startsWith('pooler.') || n.startsWith('embeddings.') || n.startsWith('encoder.') ? `bert.${n}` : n,
        )!;
        weightMap[n] = file;
        return rawTensor(n, 'F32', t.shape, t.values);
      });
      writeFileSync(join(sharded, file), safetensorsBytes(raw));
    });
    writeFileSync(
      join(sharded, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: {}, weight_map: weightMap }),
    );
    const a = await importModel(single, { kind: 'bi-encoder', outDir: join(root, 'bi-single'), int8: false });
    const b = await importModel(sharded, { kind: 'bi-encoder', outDir: join(root, 'bi-sharded'), int8: false });
    expect(b.descriptor.source.weights).toEqual([
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ]);
    const init = (dir: string) =>
      new Map(
        decodeOnnxModel(new Uint8Array(readFileSync(join(dir, 'onnx/model.onnx')))).graph.initializer.map((t) => [
          t.name,
          Buffer.from(t.raw_data).toString('base64'),
        ]),
      );
    expect(init(b.dir)).toEqual(init(a.dir));
    rmSync(join(sharded, 'model-00002-of-00002.safetensors'));
    await expect(
      importModel(sharded, { kind: 'bi-encoder', outDir: join(root, 'bi-sharded-2') }),
    ).rejects.toMatchObject({
      code: 'RG_ERR_IMPORT_MISSING_FILE',
      missing: 'weights',
    });
  });
});

describe('refusals (typed errors)', () => {
  const fresh = (name: string, options: Parameters<typeof writeCheckpointFolder>[1] = {}) => {
    const dir = join(root, `bad-${name}`);
    writeCheckpointFolder(dir, options);
    return dir;
  };
  const refuse = async (dir: string, kind: 'bi-encoder' | 'cross-encoder' = 'bi-encoder') => {
    try {
      await importModel(dir, { kind, outDir: join(root, `out-${Math.random().toString(36).slice(2)}`) });
    } catch (err) {
      expect(err).toBeInstanceOf(ModelImportError);
      return err as ModelImportError;
    }
    throw new Error(`${dir} was imported`);
  };

  it('missing config.json, tokenizer, weights', async () => {
    const noConfig = fresh('no-config');
    rmSync(join(noConfig, 'config.json'));
    const a = await refuse(noConfig);
    expect(a).toBeInstanceOf(MissingModelFileError);
    expect(a).toMatchObject({ code: 'RG_ERR_IMPORT_MISSING_FILE', missing: 'config' });

    const noTokenizer = fresh('no-tokenizer');
    rmSync(join(noTokenizer, 'tokenizer.json'));
    expect(await refuse(noTokenizer)).toMatchObject({ code: 'RG_ERR_IMPORT_MISSING_FILE', missing: 'tokenizer' });

    const noWeights = fresh('no-weights');
    rmSync(join(noWeights, 'model.safetensors'));
    expect(await refuse(noWeights)).toMatchObject({ code: 'RG_ERR_IMPORT_MISSING_FILE', missing: 'weights' });
  });

  it('pytorch_model.bin (pickle) is refused with the export route', async () => {
    const dir = fresh('pickle');
    rmSync(join(dir, 'model.safetensors'));
    writeFileSync(join(dir, 'pytorch_model.bin'), Buffer.from([0x80, 0x02]));
    const err = await refuse(dir);
    expect(err).toBeInstanceOf(UnsupportedWeightsFormatError);
    expect(err.code).toBe('RG_ERR_IMPORT_WEIGHTS_FORMAT');
    expect(err.message).toContain('pytorch_model.bin');
    expect(err.message).toContain('optimum-cli export onnx');
    expect(err.message).toContain('docs/models.md');
  });

  it('unknown and missing tensors are named', async () => {
    const unknown = await refuse(
      fresh('unknown', { extra: [rawTensor('encoder.layer.0.attention.self.rotary.weight', 'F32', [2], [1, 2])] }),
    );
    expect(unknown).toBeInstanceOf(UnknownTensorsError);
    expect((unknown as UnknownTensorsError).tensors).toEqual(['encoder.layer.0.attention.self.rotary.weight']);
    expect(unknown.message).toContain('encoder.layer.0.attention.self.rotary.weight');

    const missing = await refuse(
      fresh('missing', { drop: ['encoder.layer.1.output.dense.bias', 'embeddings.LayerNorm.weight'] }),
    );
    expect(missing).toBeInstanceOf(MissingTensorsError);
    expect((missing as MissingTensorsError).tensors).toEqual([
      'embeddings.LayerNorm.weight',
      'encoder.layer.1.output.dense.bias',
    ]);

    // A bi-encoder checkpoint imported as a cross-encoder may lack the head; an encoder tensor may not.
    const noPooler = await importModel(fresh('no-pooler', { pooler: false }), {
      kind: 'cross-encoder',
      outDir: join(root, 'no-pooler'),
    });
    expect(noPooler.descriptor.head).toMatchObject({ pooler: 'seeded', classifier: 'seeded' });
    const head = await readSafetensors(join(noPooler.dir, HEAD_FILE));
    expect([...head.tensors.keys()].sort()).toEqual([
      'classifier.bias',
      'classifier.weight',
      'pooler.dense.bias',
      'pooler.dense.weight',
    ]);
    expect(
      await refuse(fresh('missing-cross', { drop: ['encoder.layer.0.intermediate.dense.weight'] }), 'cross-encoder'),
    ).toBeInstanceOf(MissingTensorsError);
  });

  it('unsupported architecture, activation, positions, modules, pooling', async () => {
    for (const [name, config] of [
      ['roberta', { model_type: 'roberta' }],
      ['gelu-new', { hidden_act: 'gelu_new' }],
      ['relative', { position_embedding_type: 'relative_key' }],
    ] as const) {
      const err = await refuse(fresh(name, { config }));
      expect(err, name).toBeInstanceOf(UnsupportedArchitectureError);
      expect(err.code).toBe('RG_ERR_IMPORT_UNSUPPORTED_ARCHITECTURE');
      expect(err.message).toContain('optimum-cli export onnx');
    }
    const dense = fresh('dense', {
      sentenceTransformers: { pooling: 'mean_tokens', normalize: true, maxSeqLength: 64 },
    });
    const modules = JSON.parse(readFileSync(join(dense, 'modules.json'), 'utf8'));
    modules.push({ idx: 3, name: '3', path: '3_Dense', type: 'sentence_transformers.models.Dense' });
    writeFileSync(join(dense, 'modules.json'), JSON.stringify(modules));
    expect((await refuse(dense)).message).toContain('sentence_transformers.models.Dense');
    const weighted = fresh('weighted', {
      sentenceTransformers: { pooling: 'weightedmean_tokens', normalize: true, maxSeqLength: 64 },
    });
    expect(await refuse(weighted)).toBeInstanceOf(UnsupportedArchitectureError);
  });

  it('dtypes other than F32 / F16 / BF16, shapes that do not fit config.json, malformed safetensors', async () => {
    const dtype = await refuse(fresh('i32', { dtypeOf: { 'encoder.layer.0.attention.self.query.bias': 'I32' } }));
    expect(dtype).toBeInstanceOf(UnsupportedDtypeError);
    expect(dtype).toMatchObject({
      code: 'RG_ERR_IMPORT_UNSUPPORTED_DTYPE',
      tensor: 'encoder.layer.0.attention.self.query.bias',
      dtype: 'I32',
    });
    expect(await refuse(fresh('f64', { dtypeOf: { 'embeddings.LayerNorm.bias': 'F64' } }))).toBeInstanceOf(
      UnsupportedDtypeError,
    );

    const shape = await refuse(fresh('shape', { config: { intermediate_size: 48 } }));
    expect(shape).toBeInstanceOf(TensorShapeError);
    expect(shape.message).toContain('encoder.layer.0.intermediate.dense.weight');

    const broken = fresh('broken');
    const bytes = readFileSync(join(broken, 'model.safetensors'));
    writeFileSync(join(broken, 'model.safetensors'), bytes.subarray(0, bytes.length - 100));
    expect(await refuse(broken)).toBeInstanceOf(SafetensorsFormatError);
    writeFileSync(join(broken, 'model.safetensors'), Buffer.from([255, 255, 255, 255, 0, 0, 0, 0, 123]));
    expect(await refuse(broken)).toBeInstanceOf(SafetensorsFormatError);
  });
});

describe('relevance-gate import-model (CLI)', () => {
  const cli = ['--import', 'tsx', 'src/cli/main.ts'];

  it('prints its usage line (the fetch script keys on it) and imports', async () => {
    const help = await run('node', [...cli, 'import-model', '--help']);
    expect(help.stdout).toMatch(/^Usage: relevance-gate import-model/m);
    const src = join(root, 'hf-cli');
    writeCheckpointFolder(src, { sentenceTransformers: { pooling: 'mean_tokens', normalize: true, maxSeqLength: 64 } });
    const out = join(root, 'cli-bi');
    const first = await run('node', [...cli, 'import-model', src, '--as', 'bi-encoder', '--out', out]);
    expect(first.stdout).toMatch(/bi-encoder, 32 dims, mean pooling/);
    const second = await run('node', [...cli, 'import-model', src, '--as', 'bi-encoder', '--out', out]);
    expect(second.stdout).toMatch(/is up to date/);
    await expect(run('node', [...cli, 'import-model', src, '--as', 'sparse', '--out', out])).rejects.toMatchObject({
      stderr: expect.stringContaining('--as must be bi-encoder or cross-encoder'),
    });
  }, 60_000);
});

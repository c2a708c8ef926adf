/**
 * Quantized variants: the int8 graphs (DynamicQuantizeLinear → MatMulInteger, weights int8/uint8
 * per tensor) under the sentence-transformers / Optimum / transformers.js file names load in
 * onnxruntime, keep the fp32 graph's contract, and their logits track the fp32 graph's on 240 real
 * scifact pairs (max abs difference, Spearman rank correlation). Speed/shape models: random weights.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CrossEncoderModelDirInfo,
  decodeOnnxModel,
  type ModelPresetName,
  ONNX_VARIANT_FILES,
  type OnnxVariant,
  writeCrossEncoderModelDir,
} from '../../src/tooling/model-gen/index.js';
import {
  type EncodedPair,
  encodePairs,
  loadTokenizer,
  maxAbsDiff,
  runBatched,
  SESSION_OPTIONS,
  scifactPairs,
  spearman,
  tokenizerFolder,
} from './helpers.js';

const QUANTIZED: OnnxVariant[] = ['qint8_avx512_vnni', 'quint8_avx2', 'quantized'];
const PAIR_COUNT = 240;

interface QuantCase {
  readonly key: string;
  readonly preset: ModelPresetName;
  readonly folder: string;
}

const CASES: QuantCase[] = [
  { key: 'bert', preset: 'minilm-l6', folder: 'ms-marco-MiniLM-L-6-v2' },
  { key: 'roberta', preset: 'roberta-nli', folder: 'roberta-large-mnli' },
  { key: 'modernbert', preset: 'modernbert-reranker', folder: 'modernbert-large' },
];

let root: string;
const infos = new Map<string, CrossEncoderModelDirInfo>();
const rows = new Map<string, EncodedPair[]>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-model-quant-'));
  const pairs = scifactPairs(PAIR_COUNT);
  for (const c of CASES) {
    const info = await writeCrossEncoderModelDir(join(root, c.key), c.preset, {
      layers: 2,
      hidden: 64,
      tokenizerDir: tokenizerFolder(c.folder),
      variants: ['O4', ...QUANTIZED],
      seed: 42,
    });
    infos.set(c.key, info);
    rows.set(c.key, await encodePairs(loadTokenizer(tokenizerFolder(c.folder)), pairs, 160));
  }
}, 60_000);

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

describe.each(CASES)('$key ($preset) quantized variants', (c) => {
  it('writes the published file names; O4 is the fp32 graph, the int8 files are about a quarter of its size', () => {
    const info = infos.get(c.key)!;
    const fp32 = readFileSync(info.modelPath);
    expect(Object.keys(info.onnxFiles).sort()).toEqual(['O4', 'fp32', ...QUANTIZED].sort());
    expect(readFileSync(join(info.dir, ONNX_VARIANT_FILES.O4)).equals(fp32)).toBe(true);
    for (const v of QUANTIZED) {
      expect(info.onnxFiles[v]!.path).toBe(join(info.dir, ONNX_VARIANT_FILES[v]));
      // int8 weights; fp32 constants (ModernBERT's RoPE tables) and norms stay as they are.
      expect(info.onnxFiles[v]!.bytes).toBeLessThan(fp32.length * 0.35);
    }
    const config = JSON.parse(readFileSync(join(info.dir, 'config.json'), 'utf8'));
    expect(config.relevance_gate.onnx.files).toMatchObject({
      fp32: 'onnx/model.onnx',
      qint8_avx512_vnni: 'onnx/model_qint8_avx512_vnni.onnx',
      quint8_avx2: 'onnx/model_quint8_avx2.onnx',
      quantized: 'onnx/model_quantized.onnx',
      O4: 'onnx/model_O4.onnx',
    });
  });

  it('has the quantize_dynamic form: no float MatMul weight left, int8 or uint8 weights with scalar scale and zero point', () => {
    const info = infos.get(c.key)!;
    for (const v of QUANTIZED) {
      const model = decodeOnnxModel(new Uint8Array(readFileSync(info.onnxFiles[v]!.path)));
      const init = new Map(model.graph.initializer.map((t) => [t.name, t]));
      const ops = model.graph.node.map((n) => n.op_type);
      expect(ops).toContain('DynamicQuantizeLinear');
      expect(ops).toContain('MatMulInteger');
      for (const n of model.graph.node) {
        if (n.op_type === 'MatMul') expect(init.has(n.input[1]!), `${n.name} has a float weight`).toBe(false);
        if (n.op_type === 'MatMulInteger') {
          const w = init.get(n.input[1]!)!;
          expect(w.data_type).toBe(v === 'quint8_avx2' ? 2 : 3); // UINT8 : INT8
          expect(init.get(n.input[3]!)!.dims).toEqual([]);
          if (v !== 'quint8_avx2') expect(Array.from(init.get(n.input[3]!)!.raw_data ?? [0])).toEqual([0]);
        }
      }
      const meta = Object.fromEntries(model.metadata_props.map((p) => [p.key, p.value]));
      expect(meta['relevance_gate.kind']).toMatch(/NOT a relevance model/);
      expect(model.doc_string).toContain('speed/shape model: random weights, scores mean nothing');
      expect(meta['relevance_gate.quantization']).toBe(v === 'quint8_avx2' ? 'dynamic quint8' : 'dynamic qint8');
    }
  });

  it(`runs in onnxruntime with the fp32 contract and tracks the fp32 logits over ${PAIR_COUNT} scifact pairs`, async () => {
    const info = infos.get(c.key)!;
    const padId = info.spec.padTokenId ?? 0;
    const encoded = rows.get(c.key)!;
    const fp32 = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
    try {
      const reference = await runBatched(fp32, encoded, 16, { padId });
      // model_quantized.onnx is the qint8 graph byte for byte (checked here), so it is run once.
      expect(
        readFileSync(info.onnxFiles.quantized!.path).equals(readFileSync(info.onnxFiles.qint8_avx512_vnni!.path)),
      ).toBe(true);
      for (const v of ['qint8_avx512_vnni', 'quint8_avx2'] as const) {
        const q = await ort.InferenceSession.create(info.onnxFiles[v]!.path, SESSION_OPTIONS);
        try {
          expect(q.inputNames).toEqual(fp32.inputNames);
          expect(q.inputMetadata).toEqual(fp32.inputMetadata);
          expect(q.outputMetadata).toEqual(fp32.outputMetadata);
          const got = await runBatched(q, encoded, 16, { padId });
          const width = reference[0]!.length;
          const correlations = Array.from({ length: width }, (_, j) =>
            spearman(
              reference.map((r) => r[j]!),
              got.map((r) => r[j]!),
            ),
          );
          const spread = Math.max(...reference.flat()) - Math.min(...reference.flat());
          const diff = maxAbsDiff(reference, got);
          console.log(
            `[quantized] ${c.key} ${v}: ${encoded.length} pairs, max |Δlogit| ${diff.toFixed(4)} ` +
              `(fp32 logit range ${spread.toFixed(3)}), Spearman ${correlations.map((r) => r.toFixed(4)).join('/')}`,
          );
          for (const r of correlations) expect(r).toBeGreaterThan(0.95);
          expect(diff).toBeLessThan(0.2 * spread);
        } finally {
          await q.release();
        }
      }
    } finally {
      await fp32.release();
    }
  }, 60_000);
});

/**
 * Tiny BERT checkpoints in the Hugging Face layout (config.json, the package's bert-base-uncased
 * tokenizer, model.safetensors with Hugging Face tensor names and [out, in] Linear weights), for
 * the importer's tests; and an independent float64 BERT forward pass over the same tensors.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildCrossEncoderModelProto,
  CROSS_ENCODER_PRESETS,
  type CrossEncoderModelSpec,
} from '../../src/tooling/model-gen/index.js';
import { defaultTokenizerJsonPath } from '../../src/tooling/model-gen/write-model-dir.js';

/** 2 layers, hidden 32, 2 heads, FFN 64, bert-base-uncased vocabulary and window. */
export const TINY_SPEC: CrossEncoderModelSpec = {
  ...CROSS_ENCODER_PRESETS.tiny,
  name: 'tiny-import',
  numLayers: 2,
  description: 'importer test checkpoint',
};

export interface CheckpointTensor {
  readonly shape: readonly number[];
  /** float32 values in the checkpoint's orientation (Linear weights [out, in]). */
  readonly values: Float32Array;
}

export type Dtype = 'F32' | 'F16' | 'BF16' | 'I32' | 'I64' | 'F64';

export interface RawTensor {
  readonly name: string;
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly bytes: Uint8Array;
}

const EMBEDDING_TABLE = /embeddings\.(word|position|token_type)_embeddings\.weight$/;

/** float32 → float16 bits (round to nearest even; normal range, subnormals flushed, overflow to inf). */
export function toHalfBits(value: number): number {
  const f = new DataView(new ArrayBuffer(4));
  f.setFloat32(0, value);
  const bits = f.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  let mantissa = bits & 0x7fffff;
  if (exponent <= 0) return sign;
  if (exponent >= 0x1f) return sign | 0x7c00;
  const rest = mantissa & 0x1fff;
  mantissa >>>= 13;
  let half = sign | (exponent << 10) | mantissa;
  if (rest > 0x1000 || (rest === 0x1000 && (mantissa & 1) === 1)) half += 1;
  return half;
}

/** float16 bits → value, written independently of the importer's decoder. */
export function fromHalfBits(bits: number): number {
  const sign = bits >> 15 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (e - 15) * (1 + m / 1024);
}

export function rawTensor(name: string, dtype: Dtype, shape: readonly number[], values: ArrayLike<number>): RawTensor {
  const width = { F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, F64: 8 }[dtype];
  const bytes = new Uint8Array(values.length * width);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (dtype === 'F32') view.setFloat32(4 * i, v, true);
    else if (dtype === 'F64') view.setFloat64(8 * i, v, true);
    else if (dtype === 'I32') view.setInt32(4 * i, v, true);
    else if (dtype === 'I64') view.setBigInt64(8 * i, BigInt(v), true);
    else if (dtype === 'F16') view.setUint16(2 * i, toHalfBits(v), true);
    else {
      const f = new DataView(new ArrayBuffer(4));
      f.setFloat32(0, v);
      view.setUint16(2 * i, f.getUint32(0) >>> 16, true);
    }
  }
  return { name, dtype, shape, bytes };
}

/** A safetensors file of raw tensors (any dtype), header padded to 8 bytes. */
export function safetensorsBytes(tensors: readonly RawTensor[]): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.byteLength] };
    offset += t.bytes.byteLength;
  }
  let json = JSON.stringify(header);
  while (Buffer.byteLength(json) % 8 !== 0) json += ' ';
  const head = Buffer.from(json);
  const out = new Uint8Array(8 + head.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.byteLength), true);
  out.set(head, 8);
  let at = 8 + head.byteLength;
  for (const t of tensors) {
    out.set(t.bytes, at);
    at += t.bytes.byteLength;
  }
  return out;
}

/**
 * The tensors of a seeded BERT sequence classifier (pooler + classifier with `labels` logits), in
 * the checkpoint's names and orientation (`bert.` prefix). `perturbLayerNorm`: LayerNorm weights
 * and biases moved off 1 / 0 so their mapping is tested.
 */
export function checkpointTensors(
  spec: CrossEncoderModelSpec = TINY_SPEC,
  options: { seed?: number; perturbLayerNorm?: boolean; labels?: number } = {},
): Map<string, CheckpointTensor> {
  const full = { ...spec, outputs: [{ name: 'logits', size: options.labels ?? 1 }] };
  const proto = buildCrossEncoderModelProto(full, { seed: options.seed ?? 7 });
  const out = new Map<string, CheckpointTensor>();
  let k = 0;
  for (const t of proto.graph.initializer) {
    if (t.name.startsWith('const_') || t.data_type !== 1) continue;
    const view = new DataView(t.raw_data.buffer, t.raw_data.byteOffset, t.raw_data.byteLength);
    let values = Float32Array.from({ length: t.raw_data.byteLength / 4 }, (_, i) => view.getFloat32(4 * i, true));
    let shape = [...t.dims];
    if (shape.length === 2 && !EMBEDDING_TABLE.test(t.name)) {
      const [rows, cols] = [shape[0]!, shape[1]!];
      const transposed = new Float32Array(values.length);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) transposed[c * rows + r] = values[r * cols + c]!;
      values = transposed;
      shape = [cols, rows];
    }
    if (options.perturbLayerNorm && t.name.includes('LayerNorm')) {
      const base = t.name.endsWith('.weight') ? 1 : 0;
      values = values.map((_, i) => base + 0.2 * Math.sin(1.7 * i + ++k));
    }
    out.set(t.name, { shape, values });
  }
  return out;
}

export interface CheckpointFolderOptions {
  /** Tensor-name prefix of the encoder: '' (BertModel) or 'bert.' (BertForSequenceClassification). */
  readonly prefix?: '' | 'bert.';
  readonly pooler?: boolean;
  readonly classifier?: boolean;
  readonly dtype?: 'F32' | 'F16' | 'BF16';
  /** The I64 `embeddings.position_ids` buffer transformers saves. */
  readonly positionIdsBuffer?: boolean;
  /** sentence-transformers files: pooling mode key, Normalize, max_seq_length. */
  readonly sentenceTransformers?: { pooling: string; normalize: boolean; maxSeqLength: number } | null;
  readonly config?: Record<string, unknown>;
  /** Extra tensors (unknown to the graph). */
  readonly extra?: readonly RawTensor[];
  /** Checkpoint names left out. */
  readonly drop?: readonly string[];
  /** dtype override per checkpoint name. */
  readonly dtypeOf?: Readonly<Record<string, Dtype>>;
  readonly provenance?: Record<string, unknown>;
  readonly tensors?: Map<string, CheckpointTensor>;
}

/** Writes a Hugging Face folder; returns its tensors under their checkpoint names (float32 as written). */
export function writeCheckpointFolder(
  dir: string,
  options: CheckpointFolderOptions = {},
  spec: CrossEncoderModelSpec = TINY_SPEC,
): Map<string, CheckpointTensor> {
  mkdirSync(dir, { recursive: true });
  const prefix = options.prefix ?? '';
  const source = options.tensors ?? checkpointTensors(spec, { perturbLayerNorm: true });
  const tensors = new Map<string, CheckpointTensor>();
  for (const [name, t] of source) {
    const isPooler = name.startsWith('bert.pooler.');
    const isClassifier = name.startsWith('classifier.');
    if (isPooler && options.pooler === false) continue;
    if (isClassifier && options.classifier !== true) continue;
    tensors.set(name.startsWith('bert.') ? `${prefix}${name.slice(5)}` : name, t);
  }
  const raw: RawTensor[] = [];
  if (options.positionIdsBuffer !== false) {
    raw.push(
      rawTensor(
        `${prefix}embeddings.position_ids`,
        'I64',
        [1, spec.maxPositionEmbeddings],
        Array.from({ length: spec.maxPositionEmbeddings }, (_, i) => i),
      ),
    );
  }
  for (const [name, t] of tensors) {
    if (options.drop?.includes(name)) continue;
    raw.push(rawTensor(name, options.dtypeOf?.[name] ?? options.dtype ?? 'F32', t.shape, t.values));
  }
  raw.push(...(options.extra ?? []));
  writeFileSync(join(dir, 'model.safetensors'), safetensorsBytes(raw));
  const config = {
    architectures: [options.classifier ? 'BertForSequenceClassification' : 'BertModel'],
    model_type: 'bert',
    hidden_act: 'gelu',
    hidden_size: spec.hiddenSize,
    intermediate_size: spec.intermediateSize,
    num_attention_heads: spec.numHeads,
    num_hidden_layers: spec.numLayers,
    vocab_size: spec.vocabSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    type_vocab_size: spec.typeVocabSize,
    layer_norm_eps: spec.layerNormEps,
    pad_token_id: 0,
    position_embedding_type: 'absolute',
    ...(options.config ?? {}),
  };
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  copyFileSync(defaultTokenizerJsonPath(), join(dir, 'tokenizer.json'));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ do_lower_case: true, tokenizer_class: 'BertTokenizer', model_max_length: 512 }),
  );
  const st = options.sentenceTransformers === undefined ? null : options.sentenceTransformers;
  if (st !== null) {
    writeFileSync(
      join(dir, 'modules.json'),
      JSON.stringify([
        { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
        { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
        ...(st.normalize
          ? [{ idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' }]
          : []),
      ]),
    );
    mkdirSync(join(dir, '1_Pooling'), { recursive: true });
    const modes = ['cls_token', 'mean_tokens', 'max_tokens', 'mean_sqrt_len_tokens'];
    writeFileSync(
      join(dir, '1_Pooling', 'config.json'),
      JSON.stringify({
        word_embedding_dimension: spec.hiddenSize,
        ...Object.fromEntries(modes.map((m) => [`pooling_mode_${m}`, m === st.pooling])),
        [`pooling_mode_${st.pooling}`]: true,
      }),
    );
    writeFileSync(
      join(dir, 'sentence_bert_config.json'),
      JSON.stringify({ max_seq_length: st.maxSeqLength, do_lower_case: false }),
    );
  }
  if (options.provenance !== undefined) {
    writeFileSync(join(dir, 'PROVENANCE.json'), JSON.stringify(options.provenance, null, 2));
  }
  return tensors;
}

// ---- float64 reference forward pass ------------------------------------------------------------

/** erf to ~1e-16 (W. J. Cody's rational approximations, the coefficients of Netlib SPECFUN CALERF). */
export function erf(x: number): number {
  const y = Math.abs(x);
  if (y <= 0.46875) {
    const a = [3.1611237438705655, 113.86415415105016, 377.485237685302, 3209.3775891384694, 0.18577770618460315];
    const b = [23.601290952344122, 244.02463793444417, 1282.6165260773723, 2844.2368334391704];
    const z = y * y;
    let num = a[4]! * z;
    let den = z;
    for (let i = 0; i < 3; i++) {
      num = (num + a[i]!) * z;
      den = (den + b[i]!) * z;
    }
    return (x * (num + a[3]!)) / (den + b[3]!);
  }
  let erfc: number;
  if (y <= 4) {
    const c = [
      0.5641884969886701, 8.883149794388377, 66.11919063714163, 298.6351381974001, 881.952221241769, 1712.0476126340707,
      2051.0783778260716, 1230.3393547979972, 2.1531153547440383e-8,
    ];
    const d = [
      15.744926110709835, 117.6939508913125, 537.1811018620099, 1621.3895745666903, 3290.7992357334597,
      4362.619090143247, 3439.3676741437216, 1230.3393548037495,
    ];
    let num = c[8]! * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + c[i]!) * y;
      den = (den + d[i]!) * y;
    }
    erfc = (Math.exp(-y * y) * (num + c[7]!)) / (den + d[7]!);
  } else {
    const p = [
      0.30532663496123236, 0.36034489994980445, 0.12578172611122926, 0.016083785148742275, 0.0006587491615298378,
      0.016315387137302097,
    ];
    const q = [2.568520192289822, 1.8729528499234604, 0.5279051029514285, 0.06051834131244132, 0.0023352049762686918];
    const z = 1 / (y * y);
    let num = p[5]! * z;
    let den = z;
    for (let i = 0; i < 4; i++) {
      num = (num + p[i]!) * z;
      den = (den + q[i]!) * z;
    }
    erfc = (Math.exp(-y * y) * (1 / Math.sqrt(Math.PI) - (z * (num + p[4]!)) / (den + q[4]!))) / y;
  }
  return Math.sign(x) * (1 - erfc);
}

type Matrix = Float64Array[];

/**
 * Last hidden state of one unpadded sequence, float64, from tensors under their checkpoint names
 * with prefix `prefix` (Linear weights [out, in]).
 */
export function referenceHidden(
  tensors: Map<string, CheckpointTensor>,
  spec: CrossEncoderModelSpec,
  ids: readonly number[],
  typeIds: readonly number[],
  prefix = '',
): Matrix {
  const t = (name: string) => tensors.get(`${prefix}${name}`)!.values;
  const h = spec.hiddenSize;
  const n = ids.length;
  const layerNorm = (x: Matrix, name: string): Matrix => {
    const g = t(`${name}.weight`);
    const b = t(`${name}.bias`);
    return x.map((row) => {
      const mean = row.reduce((a, v) => a + v, 0) / h;
      const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / h;
      const inv = 1 / Math.sqrt(variance + spec.layerNormEps);
      return Float64Array.from(row, (v, i) => (v - mean) * inv * g[i]! + b[i]!);
    });
  };
  const dense = (x: Matrix, name: string, outDim: number): Matrix => {
    const w = t(`${name}.weight`);
    const b = t(`${name}.bias`);
    const inDim = x[0]!.length;
    return x.map((row) => {
      const out = new Float64Array(outDim);
      for (let o = 0; o < outDim; o++) {
        let sum = b[o]!;
        for (let i = 0; i < inDim; i++) sum += w[o * inDim + i]! * row[i]!;
        out[o] = sum;
      }
      return out;
    });
  };
  const word = t('embeddings.word_embeddings.weight');
  const pos = t('embeddings.position_embeddings.weight');
  const type = t('embeddings.token_type_embeddings.weight');
  let x: Matrix = ids.map((id, p) =>
    Float64Array.from({ length: h }, (_, i) => word[id * h + i]! + pos[p * h + i]! + type[typeIds[p]! * h + i]!),
  );
  x = layerNorm(x, 'embeddings.LayerNorm');
  const heads = spec.numHeads;
  const dh = h / heads;
  for (let l = 0; l < spec.numLayers; l++) {
    const p = `encoder.layer.${l}`;
    const q = dense(x, `${p}.attention.self.query`, h);
    const k = dense(x, `${p}.attention.self.key`, h);
    const v = dense(x, `${p}.attention.self.value`, h);
    const ctx: Matrix = Array.from({ length: n }, () => new Float64Array(h));
    for (let hd = 0; hd < heads; hd++) {
      for (let i = 0; i < n; i++) {
        const scores = new Float64Array(n);
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let d = 0; d < dh; d++) s += q[i]![hd * dh + d]! * k[j]![hd * dh + d]!;
          scores[j] = s / Math.sqrt(dh);
        }
        const max = Math.max(...scores);
        let total = 0;
        for (let j = 0; j < n; j++) total += scores[j] = Math.exp(scores[j]! - max);
        for (let j = 0; j < n; j++) {
          for (let d = 0; d < dh; d++) ctx[i]![hd * dh + d]! += (scores[j]! / total) * v[j]![hd * dh + d]!;
        }
      }
    }
    const att = dense(ctx, `${p}.attention.output.dense`, h).map((row, i) => row.map((val, c) => val + x[i]![c]!));
    x = layerNorm(att, `${p}.attention.output.LayerNorm`);
    const inter = dense(x, `${p}.intermediate.dense`, spec.intermediateSize).map((row) =>
      row.map((val) => 0.5 * val * (1 + erf(val / Math.SQRT2))),
    );
    const ffn = dense(inter, `${p}.output.dense`, h).map((row, i) => row.map((val, c) => val + x[i]![c]!));
    x = layerNorm(ffn, `${p}.output.LayerNorm`);
  }
  return x;
}

/** Pooled and L2-normalised embedding (sentence-transformers' Pooling + Normalize). */
export function referenceEmbedding(hidden: Matrix, mode: 'mean' | 'cls' | 'max' | 'mean_sqrt_len'): Float64Array {
  const h = hidden[0]!.length;
  const n = hidden.length;
  let v: Float64Array;
  if (mode === 'cls') v = Float64Array.from(hidden[0]!);
  else if (mode === 'max') v = Float64Array.from({ length: h }, (_, i) => Math.max(...hidden.map((r) => r[i]!)));
  else {
    const sum = Float64Array.from({ length: h }, (_, i) => hidden.reduce((a, r) => a + r[i]!, 0));
    const div = mode === 'mean' ? n : Math.sqrt(n);
    v = sum.map((s) => s / div);
  }
  const norm = Math.max(Math.sqrt(v.reduce((a, x) => a + x * x, 0)), 1e-12);
  return v.map((x) => x / norm);
}

/** Logits of BertForSequenceClassification from the hidden state (pooler + classifier). */
export function referenceLogits(tensors: Map<string, CheckpointTensor>, hidden: Matrix, prefix = ''): Float64Array {
  const wp = tensors.get(`${prefix}pooler.dense.weight`)!.values;
  const bp = tensors.get(`${prefix}pooler.dense.bias`)!.values;
  const wc = tensors.get('classifier.weight')!.values;
  const bc = tensors.get('classifier.bias')!.values;
  const h = hidden[0]!.length;
  const cls = hidden[0]!;
  const pooled = Float64Array.from({ length: h }, (_, o) => {
    let s = bp[o]!;
    for (let i = 0; i < h; i++) s += wp[o * h + i]! * cls[i]!;
    return Math.tanh(s);
  });
  const labels = bc.length;
  return Float64Array.from({ length: labels }, (_, o) => {
    let s = bc[o]!;
    for (let i = 0; i < h; i++) s += wc[o * h + i]! * pooled[i]!;
    return s;
  });
}

/**
 * A tiny random-weight bi-encoder folder in the layout `relevance-gate import-model --as
 * bi-encoder` writes (onnx/model.onnx, onnx/model_int8.onnx, tokenizer files, config.json,
 * relevance-gate-model.json, PROVENANCE.json), for the embedding tier's tests. The graph is a bag
 * of words: word + token-type embeddings, mean-pooled over the attention mask and L2-normalised,
 * output `embeddings` [batch, dims]. Random weights: texts that share words come out closer than
 * texts that do not, and nothing else means anything. Built with the model generator's ONNX encoder.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder } from '../../src/tooling/model-gen/graph-builder.js';
import { encodeOnnxModel, OnnxDataType, type OnnxValueInfo } from '../../src/tooling/model-gen/onnx-proto.js';
import { defaultTokenizerJsonPath } from '../../src/tooling/model-gen/index.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

/** bert-base-uncased, the tokenizer the package ships for generated models. */
export const VOCAB_SIZE = 30522;

export interface TinyBiEncoderOptions {
  readonly dims?: number;
  readonly seed?: number;
  readonly maxLength?: number;
  /** Name of the pooled output (default 'embeddings'). */
  readonly outputName?: string;
  /** Written as relevance-gate-model.json; null: no manifest. Merged over the defaults. */
  readonly manifest?: Record<string, unknown> | null;
  /** Dimensions the manifest declares (default: the graph's). */
  readonly declaredDims?: number;
}

function valueInfo(name: string, elemType: number, dims: Array<string | number>): OnnxValueInfo {
  return {
    name,
    type: {
      tensor_type: {
        elem_type: elemType as OnnxValueInfo['type']['tensor_type']['elem_type'],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d })) },
      },
    },
  };
}

/** The ONNX bytes of the bag-of-words bi-encoder. */
export function tinyBiEncoderOnnx(dims: number, seed: number, outputName = 'embeddings'): Uint8Array {
  const g = new GraphBuilder();
  const random = mulberry32(seed);
  const table = (n: number) => Float32Array.from({ length: n * dims }, () => (random() - 0.5) * 2);
  const words = g.floatTensor('word_embeddings', [VOCAB_SIZE, dims], table(VOCAB_SIZE));
  const types = g.floatTensor(
    'token_type_embeddings',
    [2, dims],
    table(2).map((v) => v * 0.1),
  );
  const axis1 = g.int64Tensor('axis_1', [1], [1]);
  const axis2 = g.int64Tensor('axis_2', [1], [2]);
  const tiny = g.floatScalar('tiny', 1e-9);
  const x = g.op('/emb', 'Add', [
    g.op('/emb', 'Gather', [words, 'input_ids'], { axis: { int: 0 } }),
    g.op('/emb', 'Gather', [types, 'token_type_ids'], { axis: { int: 0 } }),
  ]);
  const mask = g.op('/pool', 'Unsqueeze', [
    g.op('/pool', 'Cast', ['attention_mask'], { to: { int: OnnxDataType.FLOAT } }),
    axis2,
  ]);
  const sum = g.op('/pool', 'ReduceSum', [g.op('/pool', 'Mul', [x, mask]), axis1], { keepdims: { int: 0 } });
  const count = g.op('/pool', 'ReduceSum', [mask, axis1], { keepdims: { int: 0 } });
  const mean = g.op('/pool', 'Div', [sum, g.op('/pool', 'Max', [count, tiny])]);
  const norm = g.op('/norm', 'ReduceL2', [mean], { axes: { ints: [1] }, keepdims: { int: 1 } });
  g.op('/norm', 'Div', [mean, g.op('/norm', 'Max', [norm, tiny])], {}, outputName);
  return encodeOnnxModel({
    ir_version: 8,
    opset_import: [{ domain: '', version: 17 }],
    producer_name: 'relevance-gate tests',
    producer_version: '1',
    doc_string: 'tiny bag-of-words bi-encoder with random weights (tests only)',
    graph: {
      name: 'tiny_bi_encoder',
      node: g.nodes,
      initializer: g.initializers,
      input: ['input_ids', 'attention_mask', 'token_type_ids'].map((n) =>
        valueInfo(n, OnnxDataType.INT64, ['batch_size', 'sequence_length']),
      ),
      output: [valueInfo(outputName, OnnxDataType.FLOAT, ['batch_size', dims])],
    },
    metadata_props: [{ key: 'relevance_gate.kind', value: 'speed/shape model: random weights, not a relevance model' }],
  });
}

/** Writes the folder; returns its path. */
export function writeTinyBiEncoderDir(dir: string, options: TinyBiEncoderOptions = {}): string {
  const dims = options.dims ?? 16;
  const maxLength = options.maxLength ?? 128;
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  const onnx = tinyBiEncoderOnnx(dims, options.seed ?? 7, options.outputName);
  writeFileSync(join(dir, 'onnx', 'model.onnx'), onnx);
  // The int8 variant of a real import quantizes the weights; here it is the same graph.
  writeFileSync(join(dir, 'onnx', 'model_int8.onnx'), onnx);
  copyFileSync(defaultTokenizerJsonPath(), join(dir, 'tokenizer.json'));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ do_lower_case: true, model_max_length: 512, tokenizer_class: 'BertTokenizer' }),
  );
  writeFileSync(
    join(dir, 'special_tokens_map.json'),
    JSON.stringify({
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
    }),
  );
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      vocab_size: VOCAB_SIZE,
      hidden_size: dims,
      num_hidden_layers: 1,
      max_position_embeddings: 512,
      pad_token_id: 0,
      relevance_gate: { kind: 'speed/shape model: random weights, not a relevance model' },
    }),
  );
  if (options.manifest !== null) {
    writeFileSync(
      join(dir, 'relevance-gate-model.json'),
      JSON.stringify({
        format: 1,
        kind: 'bi-encoder',
        pooling: 'mean',
        normalize: true,
        dimensions: options.declaredDims ?? dims,
        maxLength,
        lowercase: true,
        source: { name: 'tiny-bag-of-words', note: 'random weights, tests only' },
        ...(options.manifest ?? {}),
      }),
    );
  }
  writeFileSync(join(dir, 'PROVENANCE.json'), JSON.stringify({ name: 'tiny-bag-of-words', generated: 'tests' }));
  return dir;
}

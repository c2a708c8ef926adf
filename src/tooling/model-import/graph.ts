/**
 * The ONNX graphs of an imported checkpoint, built by the model generator's own BERT builder
 * (src/tooling/model-gen/bert-onnx.ts) with the checkpoint's tensors as its weight source:
 *
 *  - bi-encoder: inputs input_ids, attention_mask, token_type_ids (int64 [batch, sequence]) →
 *    encoder → pooling (mean over attention_mask, CLS, max or mean/√len, as sentence-transformers'
 *    Pooling computes them) → L2 normalisation (x / max(‖x‖, 1e-12)) → `embeddings` float32
 *    [batch, dims];
 *  - cross-encoder: same inputs → encoder → pooler (first token → dense → tanh) → classifier →
 *    `logits` float32 [batch, labels], the cross-encoder tier's contract.
 */
import { buildBertLikeBody, buildBertLikeEncoder, ONNX_IR_VERSION, ONNX_OPSET } from '../model-gen/bert-onnx.js';
import { BATCH_DIM, GraphContext, tensorValueInfo, type WeightSource } from '../model-gen/graph-context.js';
import type { CrossEncoderModelSpec } from '../model-gen/model-spec.js';
import { OnnxDataType, type OnnxModel, type OnnxValueInfo } from '../model-gen/onnx-proto.js';
import type { PoolingMode } from './hf-folder.js';

export type ImportedModelKind = 'bi-encoder' | 'cross-encoder';
export const IMPORTED_MODEL_KINDS: readonly ImportedModelKind[] = ['bi-encoder', 'cross-encoder'];

/** Name of the bi-encoder graph's output. */
export const EMBEDDINGS_OUTPUT = 'embeddings';
/** Name of the cross-encoder graph's output. */
export const LOGITS_OUTPUT = 'logits';

/** sentence-transformers' clamp of the token count (Pooling: torch.clamp(sum_mask, min=1e-9)). */
const MIN_TOKEN_COUNT = 1e-9;
/** torch.nn.functional.normalize's eps. */
const MIN_NORM = 1e-12;
/** sentence-transformers' fill for padded tokens in max pooling. */
const MAX_POOL_FILL = -1e9;

/** Pooling over the last hidden state [B, S, H] with the int64 mask [B, S] → [B, H]. */
function pool(ctx: GraphContext, hidden: string, mask: string, mode: PoolingMode): string {
  const { g } = ctx;
  const scope = '/pooling';
  if (mode === 'cls') return ctx.firstToken(scope, hidden);
  const axis1 = ctx.ints('const_pooling_axis_1', [1], [1]);
  const maskF = g.op(scope, 'Cast', [mask], { to: { int: OnnxDataType.FLOAT } });
  const maskE = g.op(scope, 'Unsqueeze', [maskF, ctx.ints('const_pooling_axis_2', [1], [2])]); // [B,S,1]
  if (mode === 'max') {
    // Padded tokens become -1e9 exactly (h·0 + fill), real ones stay h (h·1 + 0).
    const fill = g.op(scope, 'Mul', [
      g.op(scope, 'Sub', [ctx.scalar('const_one', 1), maskE]),
      ctx.scalar('const_max_pool_fill', MAX_POOL_FILL),
    ]);
    const masked = g.op(scope, 'Add', [g.op(scope, 'Mul', [hidden, maskE]), fill]);
    return g.op(scope, 'ReduceMax', [masked], { axes: { ints: [1] }, keepdims: { int: 0 } });
  }
  const summed = g.op(scope, 'ReduceSum', [g.op(scope, 'Mul', [hidden, maskE]), axis1], { keepdims: { int: 0 } }); // [B,H]
  const count = g.op(scope, 'Max', [
    g.op(scope, 'ReduceSum', [maskE, axis1], { keepdims: { int: 0 } }), // [B,1]
    ctx.scalar('const_min_token_count', MIN_TOKEN_COUNT),
  ]);
  return g.op(scope, 'Div', [summed, mode === 'mean' ? count : g.op(scope, 'Sqrt', [count])]);
}

/** x / max(‖x‖₂, 1e-12) per row, written to `output`. */
function l2Normalize(ctx: GraphContext, x: string, output: string): string {
  const { g } = ctx;
  const scope = '/normalize';
  const squares = g.op(scope, 'ReduceSum', [g.op(scope, 'Mul', [x, x]), ctx.ints('const_pooling_axis_1', [1], [1])], {
    keepdims: { int: 1 },
  });
  const norm = g.op(scope, 'Max', [g.op(scope, 'Sqrt', [squares]), ctx.scalar('const_min_norm', MIN_NORM)]);
  return g.op(scope, 'Div', [x, norm], {}, output);
}

export interface ImportedGraphOptions {
  readonly kind: ImportedModelKind;
  readonly spec: CrossEncoderModelSpec;
  readonly weights: WeightSource;
  /** Seed of any parameter the checkpoint lacks (an explicit head). */
  readonly seed: number;
  /** Bi-encoder pooling. */
  readonly pooling: PoolingMode;
  /** One line saying what the model is and where it came from (ONNX doc_string). */
  readonly description: string;
  /** Extra ONNX metadata_props. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface ImportedGraph {
  readonly model: OnnxModel;
  readonly context: GraphContext;
}

export function buildImportedGraph(options: ImportedGraphOptions): ImportedGraph {
  const { kind, spec } = options;
  const ctx = new GraphContext(spec, options.seed, options.weights);
  let inputs: OnnxValueInfo[];
  let outputs: OnnxValueInfo[];
  if (kind === 'bi-encoder') {
    const encoder = buildBertLikeEncoder(ctx);
    const pooled = pool(ctx, encoder.hidden, encoder.input.mask, options.pooling);
    l2Normalize(ctx, pooled, EMBEDDINGS_OUTPUT);
    inputs = encoder.input.declared;
    outputs = [tensorValueInfo(EMBEDDINGS_OUTPUT, OnnxDataType.FLOAT, [BATCH_DIM, spec.hiddenSize])];
  } else {
    ({ inputs, outputs } = buildBertLikeBody(ctx));
  }
  const name = `relevance_gate_imported_${kind.replace('-', '_')}_${spec.name.replace(/[^A-Za-z0-9_]/g, '_')}`;
  return {
    context: ctx,
    model: {
      ir_version: ONNX_IR_VERSION,
      opset_import: [{ domain: '', version: ONNX_OPSET }],
      producer_name: 'relevance-gate import-model',
      producer_version: '1',
      doc_string: options.description,
      graph: {
        name,
        doc_string: options.description,
        node: ctx.g.nodes,
        initializer: ctx.g.initializers,
        input: inputs,
        output: outputs,
      },
      metadata_props: [
        { key: 'relevance_gate.kind', value: `imported ${kind}` },
        ...Object.entries(options.metadata).map(([key, value]) => ({ key, value })),
      ],
    },
  };
}

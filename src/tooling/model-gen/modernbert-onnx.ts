/**
 * ModernBERT-for-sequence-classification, simplified but with the real contract: inputs
 * `input_ids`, `attention_mask` (no token types), vocabulary 50368, an 8192-token window.
 *
 * tok_embeddings → LayerNorm (no bias) → N × pre-norm blocks [attn_norm (none in layer 0) →
 * Wqkv (no bias) → rotary q/k → attention with the padding mask → Wo (no bias) + residual;
 * mlp_norm → Wi (h → 2·I, no bias) → GELU(input) · gate (GeGLU) → Wo (no bias) + residual] →
 * final_norm → pooling (mean over unmasked tokens, or the first token) → head.dense (no bias) →
 * GELU → head.norm → classifier (with bias).
 *
 * Simplified against the checkpoint: every layer attends globally with one RoPE base (the real
 * model alternates 128-token local attention, base 10000, with global layers every third layer,
 * base 160000). Positions come from precomputed cos/sin tables of 8192 rows, so a longer sequence
 * fails to broadcast and onnxruntime refuses it, like the window of the real model.
 */
import type { FamilyBody, GraphContext } from './graph-context.js';
import { OnnxDataType } from './onnx-proto.js';

/** cos/sin tables [maxPositions, headDim] with the frequencies repeated (rotate_half layout). */
function ropeTables(maxPositions: number, headDim: number, theta: number): { cos: Float32Array; sin: Float32Array } {
  const half = headDim / 2;
  const cos = new Float32Array(maxPositions * headDim);
  const sin = new Float32Array(maxPositions * headDim);
  for (let i = 0; i < half; i++) {
    const invFreq = 1 / theta ** ((2 * i) / headDim);
    for (let p = 0; p < maxPositions; p++) {
      const angle = p * invFreq;
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[p * headDim + i] = c;
      cos[p * headDim + i + half] = c;
      sin[p * headDim + i] = s;
      sin[p * headDim + i + half] = s;
    }
  }
  return { cos, sin };
}

export function buildModernBertBody(ctx: GraphContext): FamilyBody {
  const { g, spec, h } = ctx;
  const heads = spec.numHeads;
  const headDim = h / heads;
  const inner = spec.intermediateSize;
  const input = ctx.inputs();
  const noBias = { bias: false } as const;

  // ---- embeddings ---------------------------------------------------------------------------
  const emb = '/model/embeddings';
  const table = ctx.normal('model.embeddings.tok_embeddings.weight', [spec.vocabSize, h], ctx.embeddingStd);
  const words = g.op(emb, 'Gather', [table, input.ids], { axis: { int: 0 } });
  let hidden = ctx.layerNorm(emb, 'model.embeddings.norm', words, noBias);

  // ---- rotary tables, sliced (or gathered by position_ids) to [1 or B, 1, S, d] ---------------
  const rope = '/model/rotary_emb';
  const tables = ropeTables(spec.maxPositionEmbeddings, headDim, spec.ropeTheta ?? 160000);
  const cosTable = g.floatTensor('const_rope_cos', [spec.maxPositionEmbeddings, headDim], tables.cos);
  const sinTable = g.floatTensor('const_rope_sin', [spec.maxPositionEmbeddings, headDim], tables.sin);
  const headAxis = ctx.ints('const_axis_1_1d', [1], [1]);
  let cos: string;
  let sin: string;
  if (input.positionIds !== null) {
    cos = g.op(rope, 'Unsqueeze', [
      g.op(rope, 'Gather', [cosTable, input.positionIds], { axis: { int: 0 } }),
      headAxis,
    ]);
    sin = g.op(rope, 'Unsqueeze', [
      g.op(rope, 'Gather', [sinTable, input.positionIds], { axis: { int: 0 } }),
      headAxis,
    ]);
  } else {
    const seqLen = ctx.sequenceLength(rope, input.idsInput);
    const zero1d = ctx.ints('const_zero_1d', [1], [0]);
    cos = g.op(rope, 'Slice', [cosTable, zero1d, seqLen, zero1d]); // [S, d], broadcast over [B, n]
    sin = g.op(rope, 'Slice', [sinTable, zero1d, seqLen, zero1d]);
  }
  const halfSplit = ctx.ints('const_rope_split', [2], [headDim / 2, headDim / 2]);
  /** x · cos + rotate_half(x) · sin, rotate_half(x) = [−x₂, x₁]. x: [B, n, S, d]. */
  const rotate = (scope: string, x: string): string => {
    const [x1, x2] = g.opMulti(scope, 'Split', [x, halfSplit], 2, { axis: { int: -1 } });
    const rotated = g.op(scope, 'Concat', [g.op(scope, 'Neg', [x2]), x1], { axis: { int: -1 } });
    return g.op(scope, 'Add', [g.op(scope, 'Mul', [x, cos]), g.op(scope, 'Mul', [rotated, sin])]);
  };

  const additiveMask = ctx.additiveMask('/model/attention_mask', input.mask);
  const qkvShape = ctx.ints('const_qkv_shape', [5], [0, 0, 3, heads, headDim]);

  // ---- layers -------------------------------------------------------------------------------
  for (let layer = 0; layer < spec.numLayers; layer++) {
    const scope = `/model/layers.${layer}`;
    const param = `model.layers.${layer}`;
    const normed = layer === 0 ? hidden : ctx.layerNorm(`${scope}/attn_norm`, `${param}.attn_norm`, hidden, noBias);
    const att = `${scope}/attn`;
    const qkv = ctx.linear(`${att}/Wqkv`, `${param}.attn.Wqkv`, normed, h, 3 * h, false);
    // [B, S, 3, n, d] → [3, B, n, S, d], then q, k, v.
    const split = g.op(att, 'Transpose', [g.op(att, 'Reshape', [qkv, qkvShape])], { perm: { ints: [2, 0, 3, 1, 4] } });
    const pick = (index: number): string =>
      g.op(att, 'Gather', [split, ctx.ints(`const_index_${index}`, [], [index])], { axis: { int: 0 } });
    const q = rotate(`${att}/rotary_q`, pick(0));
    const k = rotate(`${att}/rotary_k`, pick(1));
    const v = pick(2);
    const kT = g.op(att, 'Transpose', [k], { perm: { ints: [0, 1, 3, 2] } });
    const merged = ctx.attention(att, q, kT, v, additiveMask, Math.sqrt(headDim));
    const attOut = ctx.linear(`${att}/Wo`, `${param}.attn.Wo`, merged, h, h, false);
    hidden = g.op(scope, 'Add', [hidden, attOut]);

    const mlp = `${scope}/mlp`;
    const mlpIn = ctx.layerNorm(`${scope}/mlp_norm`, `${param}.mlp_norm`, hidden, noBias);
    const wi = ctx.linear(`${mlp}/Wi`, `${param}.mlp.Wi`, mlpIn, h, 2 * inner, false);
    const [act, gate] = g.opMulti(mlp, 'Split', [wi, ctx.ints('const_geglu_split', [2], [inner, inner])], 2, {
      axis: { int: -1 },
    });
    const geglu = g.op(mlp, 'Mul', [ctx.gelu(mlp, act), gate]);
    hidden = g.op(scope, 'Add', [hidden, ctx.linear(`${mlp}/Wo`, `${param}.mlp.Wo`, geglu, inner, h, false)]);
  }
  hidden = ctx.layerNorm('/model/final_norm', 'model.final_norm', hidden, noBias);

  // ---- pooling + head -----------------------------------------------------------------------
  const pool = '/pooling';
  let pooled: string;
  if ((spec.classifierPooling ?? 'mean') === 'mean') {
    // Σ hidden · mask / Σ mask over the sequence; an all-padding row divides by 1, not 0.
    const maskFloat = g.op(pool, 'Cast', [input.mask], { to: { int: OnnxDataType.FLOAT } });
    const mask3 = g.op(pool, 'Unsqueeze', [maskFloat, ctx.ints('const_axis_2_1d', [1], [2])]); // [B,S,1]
    const summed = g.op(pool, 'ReduceSum', [g.op(pool, 'Mul', [hidden, mask3]), headAxis], { keepdims: { int: 0 } });
    const count = g.op(pool, 'ReduceSum', [maskFloat, headAxis], { keepdims: { int: 1 } }); // [B,1]
    pooled = g.op(pool, 'Div', [summed, g.op(pool, 'Max', [count, ctx.scalar('const_one', 1)])]);
  } else {
    pooled = ctx.firstToken(pool, hidden);
  }
  const dense = ctx.linear('/head/dense', 'head.dense', pooled, h, h, false);
  const headOut = ctx.layerNorm('/head/norm', 'head.norm', ctx.gelu('/head', dense), noBias);
  const outputs = ctx.classifierOutputs(
    headOut,
    (head, single) => (single ? 'classifier' : `classifier.${head}`),
    input.ignoredZero,
  );
  return { inputs: input.declared, outputs };
}

/**
 * DeBERTa-v2/v3-for-sequence-classification with the real contract: inputs `input_ids`,
 * `attention_mask` (+ `token_type_ids` only when type_vocab_size > 0, as the exporter does),
 * vocabulary 128100, logits [batch, C].
 *
 * word embeddings (+ token type) → LayerNorm → × mask → N × [disentangled self-attention:
 * q·kᵀ + c2p + p2c over log-bucketed relative positions (position_buckets 256, shared
 * query/key projections of the LayerNorm'd relative embeddings, scale √(3d)) → output dense +
 * residual → LayerNorm → FFN (GELU) + residual → LayerNorm] → ContextPooler (token 0 → dense →
 * GELU) → classifier.
 *
 * Simplified against transformers: padded query rows are not zeroed (only keys are masked, which
 * leaves every real token's output unchanged), and bucket rounding is done in float32.
 */
import type { FamilyBody, GraphContext } from './graph-context.js';
import { positionBucketsOf } from './model-spec.js';
import { OnnxDataType } from './onnx-proto.js';

export function buildDebertaBody(ctx: GraphContext): FamilyBody {
  const { g, spec, h } = ctx;
  const heads = spec.numHeads;
  const headDim = h / heads;
  const span = positionBucketsOf(spec);
  const input = ctx.inputs();

  // ---- embeddings ---------------------------------------------------------------------------
  const emb = '/deberta/embeddings';
  const wordTable = ctx.normal('deberta.embeddings.word_embeddings.weight', [spec.vocabSize, h], ctx.embeddingStd);
  let embSum = g.op(emb, 'Gather', [wordTable, input.ids], { axis: { int: 0 } });
  if (input.tokenTypes !== null) {
    const typeTable = ctx.normal(
      'deberta.embeddings.token_type_embeddings.weight',
      [spec.typeVocabSize, h],
      ctx.embeddingStd,
    );
    embSum = g.op(emb, 'Add', [embSum, g.op(emb, 'Gather', [typeTable, input.tokenTypes], { axis: { int: 0 } })]);
  }
  const normed = ctx.layerNorm(emb, 'deberta.embeddings.LayerNorm', embSum);
  const maskFloat = g.op(emb, 'Cast', [input.mask], { to: { int: OnnxDataType.FLOAT } });
  const mask3 = g.op(emb, 'Unsqueeze', [maskFloat, ctx.ints('const_axis_2_1d', [1], [2])]);
  let hidden = g.op(emb, 'Mul', [normed, mask3]);

  // ---- relative positions: log buckets of i − j, then gather indices -------------------------
  const rel = '/deberta/encoder/relative_position';
  const seqLen = ctx.sequenceLength(rel, input.idsInput); // [1]
  const seqScalar = g.op(rel, 'Squeeze', [seqLen, ctx.ints('const_zero_1d', [1], [0])]);
  const positions = g.op(rel, 'Range', [
    ctx.ints('const_zero_scalar', [], [0]),
    seqScalar,
    ctx.ints('const_one_scalar', [], [1]),
  ]);
  const relative = g.op(
    rel,
    'Cast',
    [
      g.op(rel, 'Sub', [
        g.op(rel, 'Unsqueeze', [positions, ctx.ints('const_axis_1_1d', [1], [1])]),
        g.op(rel, 'Unsqueeze', [positions, ctx.ints('const_zero_1d', [1], [0])]),
      ]),
    ],
    { to: { int: OnnxDataType.FLOAT } },
  ); // [S, S]
  // make_log_bucket_position(relative, bucket_size = span, max_position = max_position_embeddings)
  const mid = span / 2;
  const maxPosition = spec.maxPositionEmbeddings;
  const absolute = g.op(rel, 'Abs', [relative]);
  const absPos = g.op(rel, 'Where', [
    g.op(rel, 'Less', [absolute, ctx.scalar(`const_bucket_mid_${mid}`, mid)]),
    ctx.scalar(`const_bucket_mid_minus_1_${mid}`, mid - 1),
    absolute,
  ]);
  const logRatio = g.op(rel, 'Div', [
    g.op(rel, 'Log', [g.op(rel, 'Div', [absPos, ctx.scalar(`const_bucket_mid_${mid}`, mid)])]),
    ctx.scalar('const_bucket_log_max', Math.log((maxPosition - 1) / mid)),
  ]);
  const logPos = g.op(rel, 'Add', [
    g.op(rel, 'Ceil', [g.op(rel, 'Mul', [logRatio, ctx.scalar(`const_bucket_mid_minus_1_${mid}`, mid - 1)])]),
    ctx.scalar(`const_bucket_mid_${mid}`, mid),
  ]);
  const bucket = g.op(rel, 'Where', [
    g.op(rel, 'LessOrEqual', [absolute, ctx.scalar(`const_bucket_mid_${mid}`, mid)]),
    relative,
    g.op(rel, 'Mul', [logPos, g.op(rel, 'Sign', [relative])]),
  ]);
  const spanScalar = ctx.scalar('const_att_span', span);
  const lo = ctx.scalar('const_zero', 0);
  const hi = ctx.scalar('const_att_span_max', 2 * span - 1);
  const toIndex = (x: string): string =>
    g.op(rel, 'Cast', [g.op(rel, 'Clip', [g.op(rel, 'Add', [x, spanScalar]), lo, hi])], {
      to: { int: OnnxDataType.INT64 },
    });
  const c2pIndex = toIndex(bucket);
  const p2cIndex = toIndex(g.op(rel, 'Neg', [bucket]));
  // [B, n, S, S] for GatherElements.
  const batch = g.op(rel, 'Shape', [input.idsInput], { start: { int: 0 }, end: { int: 1 } });
  const scoreShape = g.op(rel, 'Concat', [batch, ctx.ints('const_num_heads_1d', [1], [heads]), seqLen, seqLen], {
    axis: { int: 0 },
  });
  const c2pGather = g.op(rel, 'Expand', [c2pIndex, scoreShape]);
  const p2cGather = g.op(rel, 'Expand', [p2cIndex, scoreShape]);

  const relTable = ctx.normal('deberta.encoder.rel_embeddings.weight', [2 * span, h], ctx.embeddingStd);
  const relEmbeddings = ctx.layerNorm('/deberta/encoder/LayerNorm', 'deberta.encoder.LayerNorm', relTable); // [2k, H]
  const additiveMask = ctx.additiveMask('/deberta/encoder/attention_mask', input.mask);
  const relHeadsShape = ctx.ints('const_rel_heads_shape', [3], [2 * span, heads, headDim]);
  const scale = Math.sqrt(headDim * 3); // scale_factor = 1 + |{c2p, p2c}|
  const scaleScalar = ctx.scalar(`const_attention_scale_${scale}`, scale);

  // ---- layers -------------------------------------------------------------------------------
  for (let layer = 0; layer < spec.numLayers; layer++) {
    const scope = `/deberta/encoder/layer.${layer}`;
    const param = `deberta.encoder.layer.${layer}`;
    const att = `${scope}/attention/self`;
    /** One projection applied to the hidden states and (share_att_key) to the relative embeddings. */
    const projection = (name: string): { weight: string; bias: string } => ({
      weight: ctx.normal(`${param}.attention.self.${name}.weight`, [h, h], ctx.std(h)),
      bias: ctx.normal(`${param}.attention.self.${name}.bias`, [h], 0.02),
    });
    const apply = (p: { weight: string; bias: string }, x: string, sub: string): string =>
      g.op(`${att}/${sub}`, 'Add', [g.op(`${att}/${sub}`, 'MatMul', [x, p.weight]), p.bias]);
    const qp = projection('query_proj');
    const kp = projection('key_proj');
    const vp = projection('value_proj');
    const q = ctx.splitHeads(att, apply(qp, hidden, 'query_proj')); // [B,n,S,d]
    const k = ctx.splitHeads(att, apply(kp, hidden, 'key_proj')); // [B,n,S,d]
    const v = ctx.splitHeads(att, apply(vp, hidden, 'value_proj'));
    const kT = g.op(att, 'Transpose', [k], { perm: { ints: [0, 1, 3, 2] } });
    // Relative embeddings through the same projections: [2k, H] → [n, d, 2k].
    const relHeads = (p: { weight: string; bias: string }, sub: string): string =>
      g.op(att, 'Transpose', [g.op(att, 'Reshape', [apply(p, relEmbeddings, sub), relHeadsShape])], {
        perm: { ints: [1, 2, 0] },
      });
    const posKeyT = relHeads(kp, 'pos_key_proj');
    const posQueryT = relHeads(qp, 'pos_query_proj');
    const c2p = g.op(att, 'GatherElements', [g.op(att, 'MatMul', [q, posKeyT]), c2pGather], { axis: { int: -1 } });
    const p2cByKey = g.op(att, 'GatherElements', [g.op(att, 'MatMul', [k, posQueryT]), p2cGather], {
      axis: { int: -1 },
    });
    const p2c = g.op(att, 'Transpose', [p2cByKey], { perm: { ints: [0, 1, 3, 2] } });
    const merged = ctx.attention(att, q, kT, v, additiveMask, scale, [
      g.op(att, 'Div', [c2p, scaleScalar]),
      g.op(att, 'Div', [p2c, scaleScalar]),
    ]);

    const attOut = ctx.linear(`${scope}/attention/output/dense`, `${param}.attention.output.dense`, merged, h, h);
    const afterAttention = ctx.layerNorm(
      `${scope}/attention/output`,
      `${param}.attention.output.LayerNorm`,
      g.op(`${scope}/attention/output`, 'Add', [attOut, hidden]),
    );
    const ffnScope = `${scope}/intermediate`;
    const inner = ctx.linear(
      `${ffnScope}/dense`,
      `${param}.intermediate.dense`,
      afterAttention,
      h,
      spec.intermediateSize,
    );
    const ffnOut = ctx.linear(
      `${scope}/output/dense`,
      `${param}.output.dense`,
      ctx.gelu(ffnScope, inner),
      spec.intermediateSize,
      h,
    );
    hidden = ctx.layerNorm(
      `${scope}/output`,
      `${param}.output.LayerNorm`,
      g.op(`${scope}/output`, 'Add', [ffnOut, afterAttention]),
    );
  }

  // ---- ContextPooler + classifier -----------------------------------------------------------
  const first = ctx.firstToken('/pooler', hidden);
  const pooled = ctx.gelu('/pooler', ctx.linear('/pooler/dense', 'pooler.dense', first, h, h));
  const outputs = ctx.classifierOutputs(
    pooled,
    (head, single) => (single ? 'classifier' : `classifier.${head}`),
    input.ignoredZero,
  );
  return { inputs: input.declared, outputs };
}

/**
 * Pieces every family's graph shares: seeded weights (or a checkpoint's, through a WeightSource),
 * Linear / LayerNorm / GELU, the graph inputs (int64 or int32, extra inputs), the additive padding
 * mask and multi-head attention.
 */
import { GraphBuilder } from './graph-builder.js';
import { OnnxDataType, type OnnxDataTypeCode, type OnnxValueInfo } from './onnx-proto.js';
import { type CrossEncoderModelSpec, inputDtypeOf, inputNamesOf, POSITION_IDS } from './model-spec.js';
import { fillNormal } from './seeded-normal.js';

/**
 * Added to attention scores at padded key positions: the most negative float32, as transformers
 * does. exp(min - rowMax) is exactly 0, so padding contributes nothing and a pair scores the same
 * whatever it is batched with.
 */
export const MASK_FILL = -3.4028234663852886e38;

export const BATCH_DIM = 'batch_size';
export const SEQUENCE_DIM = 'sequence_length';

export function tensorValueInfo(name: string, elemType: OnnxDataTypeCode, dims: (string | number)[]): OnnxValueInfo {
  return {
    name,
    type: {
      tensor_type: {
        elem_type: elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d })) },
      },
    },
  };
}

/** The graph's inputs and outputs once a family's body is built into the context. */
export interface FamilyBody {
  readonly inputs: OnnxValueInfo[];
  readonly outputs: OnnxValueInfo[];
}

export interface LayerNormOptions {
  /** Whether the norm has a bias (ModernBERT: no). */
  readonly bias?: boolean;
  readonly outputName?: string;
}

/** The graph's inputs, as int64 values the rest of the graph can use. */
export interface GraphInputs {
  readonly declared: OnnxValueInfo[];
  /** Token ids (int64, or the declared int32 input for the `input-ids-int32` defect). */
  readonly ids: string;
  /** Name of the declared token-id input (for Shape). */
  readonly idsInput: string;
  readonly mask: string;
  readonly tokenTypes: string | null;
  readonly positionIds: string | null;
  /** Extra inputs whose values the graph ignores (already reduced to a float scalar 0). */
  readonly ignoredZero: string | null;
}

/**
 * Where a graph's named parameters come from instead of the seeded generator (model import). The
 * builder asks for every parameter by its Hugging Face name (e.g.
 * `bert.encoder.layer.0.attention.self.query.weight`) with its shape in the graph.
 */
export interface WeightSource {
  /**
   * The parameter's values in the graph's layout `dims`, or undefined to draw it (seeded normal,
   * or the constant of a LayerNorm). `linear`: a Linear weight, which the graph stores transposed
   * ([in, out]) while a checkpoint stores it [out, in].
   */
  read(name: string, dims: readonly number[], linear: boolean): Float32Array | undefined;
}

export class GraphContext {
  readonly g = new GraphBuilder();
  readonly h: number;
  readonly embeddingStd: number;
  private readonly constants = new Map<string, string>();

  constructor(
    readonly spec: CrossEncoderModelSpec,
    readonly seed: number,
    /** Parameters taken from a checkpoint; without it every parameter is drawn. */
    readonly weights?: WeightSource,
  ) {
    this.h = spec.hiddenSize;
    this.embeddingStd = spec.initStd === 'fan-in' ? 1 : spec.initStd;
  }

  std(fanIn: number): number {
    return this.spec.initStd === 'fan-in' ? 1 / Math.sqrt(fanIn) : this.spec.initStd;
  }

  /** A parameter: the weight source's values when it has them, else normal(0, sd) from the seed. */
  normal(name: string, dims: number[], sd: number, linear = false): string {
    const given = this.weights?.read(name, dims, linear);
    if (given !== undefined) return this.g.floatTensor(name, dims, given);
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    fillNormal(values, sd, this.seed, name);
    return this.g.floatTensor(name, dims, values);
  }

  /** A parameter initialised to `value` (LayerNorm), or the weight source's values. */
  constant(name: string, dims: number[], value: number): string {
    const given = this.weights?.read(name, dims, false);
    if (given !== undefined) return this.g.floatTensor(name, dims, given);
    return this.g.floatTensor(name, dims, new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(value));
  }

  /** A named float scalar, added once. */
  scalar(name: string, value: number): string {
    let existing = this.constants.get(name);
    if (existing === undefined) {
      existing = this.g.floatScalar(name, value);
      this.constants.set(name, existing);
    }
    return existing;
  }

  /** A named int64 constant, added once. */
  ints(name: string, dims: number[], values: number[]): string {
    let existing = this.constants.get(name);
    if (existing === undefined) {
      existing = this.g.int64Tensor(name, dims, values);
      this.constants.set(name, existing);
    }
    return existing;
  }

  /** MatMul (+ Add) with weight [in, out] (stored transposed, as the exporter folds it) and small random bias. */
  linear(scope: string, param: string, x: string, fanIn: number, fanOut: number, bias = true): string {
    const w = this.normal(`${param}.weight`, [fanIn, fanOut], this.std(fanIn), true);
    const product = this.g.op(scope, 'MatMul', [x, w]);
    if (!bias) return product;
    const b = this.normal(`${param}.bias`, [fanOut], 0.02);
    return this.g.op(scope, 'Add', [product, b]);
  }

  layerNorm(scope: string, param: string, x: string, options: LayerNormOptions = {}): string {
    const gamma = this.constant(`${param}.weight`, [this.h], 1);
    const inputs = [x, gamma];
    if (options.bias !== false) inputs.push(this.constant(`${param}.bias`, [this.h], 0));
    return this.g.op(
      scope,
      'LayerNormalization',
      inputs,
      { axis: { int: -1 }, epsilon: { float: this.spec.layerNormEps } },
      options.outputName,
    );
  }

  /** GELU, exact form: 0.5 · x · (1 + erf(x / √2)). */
  gelu(scope: string, x: string): string {
    const g = this.g;
    const erf = g.op(scope, 'Erf', [g.op(scope, 'Div', [x, this.scalar('const_sqrt2', Math.SQRT2)])]);
    return g.op(scope, 'Mul', [
      g.op(scope, 'Mul', [x, g.op(scope, 'Add', [erf, this.scalar('const_one', 1)])]),
      this.scalar('const_half', 0.5),
    ]);
  }

  /** Declares the inputs; int32 inputs are cast to int64 once, so the body is dtype-agnostic. */
  inputs(): GraphInputs {
    const g = this.g;
    const declared: OnnxValueInfo[] = [];
    const values = new Map<string, string>();
    for (const name of inputNamesOf(this.spec)) {
      const int32 = inputDtypeOf(this.spec, name) === 'int32';
      declared.push(tensorValueInfo(name, int32 ? OnnxDataType.INT32 : OnnxDataType.INT64, [BATCH_DIM, SEQUENCE_DIM]));
      // The input-ids-int32 defect feeds int32 ids straight to Gather (valid ONNX); inputDtype int32 casts.
      const cast = int32 && this.spec.defect !== 'input-ids-int32';
      values.set(name, cast ? g.op(`/inputs/${name}`, 'Cast', [name], { to: { int: OnnxDataType.INT64 } }) : name);
    }
    const idsInput = this.spec.defect === 'no-input-ids' ? 'tokens' : 'input_ids';
    let ignoredZero: string | null = null;
    for (const name of this.spec.extraInputs ?? []) {
      if (name === POSITION_IDS) continue;
      // Required but ignored: 0 · Σ input, added to the logits, keeps the input in the graph.
      const scope = `/inputs/${name}`;
      const asFloat = g.op(scope, 'Cast', [values.get(name)!], { to: { int: OnnxDataType.FLOAT } });
      const zero = g.op(scope, 'ReduceSum', [g.op(scope, 'Mul', [asFloat, this.scalar('const_zero', 0)])], {
        keepdims: { int: 0 },
      });
      ignoredZero = ignoredZero === null ? zero : g.op(scope, 'Add', [ignoredZero, zero]);
    }
    return {
      declared,
      ids: values.get(idsInput)!,
      idsInput,
      mask: values.get('attention_mask')!,
      tokenTypes: this.spec.tokenTypeInput ? values.get('token_type_ids')! : null,
      positionIds: (this.spec.extraInputs ?? []).includes(POSITION_IDS) ? values.get(POSITION_IDS)! : null,
      ignoredZero,
    };
  }

  /** [S] as a 1-D int64 tensor of length 1, from the token-id input. */
  sequenceLength(scope: string, idsInput: string): string {
    return this.g.op(scope, 'Shape', [idsInput], { start: { int: 1 }, end: { int: 2 } });
  }

  /** Additive key mask [B, 1, 1, S]: 0 where attended, float32 min at padding. */
  additiveMask(scope: string, mask: string): string {
    const g = this.g;
    const maskFloat = g.op(scope, 'Cast', [mask], { to: { int: OnnxDataType.FLOAT } });
    const maskAxes = this.ints('const_mask_unsqueeze_axes', [2], [1, 2]);
    const maskExpanded = g.op(scope, 'Unsqueeze', [maskFloat, maskAxes]);
    const inverted = g.op(scope, 'Sub', [this.scalar('const_one', 1), maskExpanded]);
    return g.op(scope, 'Mul', [inverted, this.scalar('const_mask_fill', MASK_FILL)]);
  }

  /** [B, S, H] → [B, n, S, d] (or [B, n, d, S] with perm [0, 2, 3, 1]). */
  splitHeads(scope: string, x: string, perm: number[] = [0, 2, 1, 3]): string {
    const heads = this.spec.numHeads;
    const shape = this.ints('const_split_heads_shape', [4], [0, 0, heads, this.h / heads]);
    return this.g.op(scope, 'Transpose', [this.g.op(scope, 'Reshape', [x, shape])], { perm: { ints: perm } });
  }

  /**
   * softmax((q·kᵀ) / scale + Σ extraScores + mask) · v, heads merged back to [B, S, H].
   * q, v: [B, n, S, d]; kT: [B, n, d, S].
   */
  attention(
    scope: string,
    q: string,
    kT: string,
    v: string,
    additiveMask: string,
    scale: number,
    extraScores: readonly string[] = [],
  ): string {
    const g = this.g;
    let scores = g.op(scope, 'Div', [
      g.op(scope, 'MatMul', [q, kT]),
      this.scalar(`const_attention_scale_${scale}`, scale),
    ]);
    for (const extra of extraScores) scores = g.op(scope, 'Add', [scores, extra]);
    const probs = g.op(scope, 'Softmax', [g.op(scope, 'Add', [scores, additiveMask])], { axis: { int: -1 } });
    const context = g.op(scope, 'MatMul', [probs, v]);
    const merge = this.ints('const_merge_heads_shape', [3], [0, 0, this.h]);
    return g.op(scope, 'Reshape', [g.op(scope, 'Transpose', [context], { perm: { ints: [0, 2, 1, 3] } }), merge]);
  }

  /** Picks token 0: [B, S, H] → [B, H]. */
  firstToken(scope: string, x: string): string {
    return this.g.op(scope, 'Gather', [x, this.ints('const_first_token', [], [0])], { axis: { int: 1 } });
  }

  /**
   * Final classifier Linear [H → C] per output; output C gets the graph output's name. `ignoredZero`
   * (extra inputs) is added so those inputs stay required.
   */
  classifierOutputs(
    pooled: string,
    paramFor: (head: string, single: boolean) => string,
    ignoredZero: string | null,
  ): OnnxValueInfo[] {
    const g = this.g;
    const outputs: OnnxValueInfo[] = [];
    const single = this.spec.outputs.length === 1;
    for (const head of this.spec.outputs) {
      const param = paramFor(head.name, single);
      const w = this.normal(`${param}.weight`, [this.h, head.size], this.std(this.h), true);
      const b = this.normal(`${param}.bias`, [head.size], 0.02);
      const scope = `/classifier/${head.name}`;
      const product = g.op(scope, 'MatMul', [pooled, w]);
      if (ignoredZero === null) {
        g.op(scope, 'Add', [product, b], {}, head.name);
      } else {
        g.op(scope, 'Add', [g.op(scope, 'Add', [product, b]), ignoredZero], {}, head.name);
      }
      outputs.push(tensorValueInfo(head.name, OnnxDataType.FLOAT, [BATCH_DIM, head.size]));
    }
    return outputs;
  }
}

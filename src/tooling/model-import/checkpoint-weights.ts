/**
 * The graph builder's WeightSource over a checkpoint's safetensors files: each parameter the
 * builder asks for by its Hugging Face name comes from the file (float32, Linear weights
 * transposed to the graph's [in, out]); what the file lacks is recorded as missing, and what the
 * graph never asked for as unused, so the importer can name both.
 */
import type { WeightSource } from '../model-gen/graph-context.js';
import { MissingTensorsError, TensorShapeError } from './errors.js';
import { type SafetensorsFile, type SafetensorsTensor, tensorAsFloat32 } from './safetensors.js';

/** Prefixes a BERT checkpoint's encoder tensors carry: none (BertModel, sentence-transformers) or `bert.` (…ForSequenceClassification). */
const ENCODER_PREFIXES = ['', 'bert.'] as const;
const PROBE = 'embeddings.word_embeddings.weight';

interface Located {
  readonly file: SafetensorsFile;
  readonly tensor: SafetensorsTensor;
}

function transpose(values: Float32Array, rows: number, cols: number): Float32Array {
  // values: [rows, cols] → [cols, rows]
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = values[base + c]!;
  }
  return out;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export class CheckpointWeights implements WeightSource {
  private readonly index = new Map<string, Located>();
  /** The encoder prefix of this checkpoint ('' or 'bert.'). */
  readonly prefix: string;
  /** Checkpoint names the graph took. */
  readonly taken = new Set<string>();
  /** Builder names the checkpoint lacks (drawn from the seed instead), in request order. */
  readonly missing: string[] = [];

  /** `where` names the weights in errors. */
  constructor(files: readonly SafetensorsFile[], where: string) {
    for (const file of files) {
      for (const tensor of file.tensors.values()) this.index.set(tensor.name, { file, tensor });
    }
    const prefix = ENCODER_PREFIXES.find((p) => this.index.has(`${p}${PROBE}`));
    if (prefix === undefined) throw new MissingTensorsError([PROBE], where);
    this.prefix = prefix;
  }

  /** Every tensor name in the checkpoint. */
  names(): string[] {
    return [...this.index.keys()];
  }

  has(name: string): boolean {
    return this.index.has(name);
  }

  /** The checkpoint's name for a builder name (`bert.X` → prefix + X; heads keep their names). */
  checkpointName(builderName: string): string {
    return builderName.startsWith('bert.') ? `${this.prefix}${builderName.slice('bert.'.length)}` : builderName;
  }

  /** The checkpoint tensor's shape, if present. */
  shapeOf(name: string): readonly number[] | undefined {
    return this.index.get(name)?.tensor.shape;
  }

  read(name: string, dims: readonly number[], linear: boolean): Float32Array | undefined {
    const fileName = this.checkpointName(name);
    const found = this.index.get(fileName);
    if (found === undefined) {
      this.missing.push(name);
      return undefined;
    }
    const expected = linear && dims.length === 2 ? [dims[1]!, dims[0]!] : [...dims];
    if (!sameShape(found.tensor.shape, expected)) {
      throw new TensorShapeError(fileName, found.tensor.shape, expected, found.file.path);
    }
    const values = tensorAsFloat32(found.file, found.tensor);
    this.taken.add(fileName);
    return linear && dims.length === 2 ? transpose(values, dims[1]!, dims[0]!) : values;
  }
}

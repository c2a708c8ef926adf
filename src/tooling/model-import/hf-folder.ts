/**
 * What the importer reads from a Hugging Face model folder (transformers or sentence-transformers
 * layout): config.json, the tokenizer files, the weights (model.safetensors, or shards listed by
 * model.safetensors.index.json), and for sentence-transformers folders modules.json,
 * 1_Pooling/config.json and sentence_bert_config.json. Refusals are typed (errors.ts).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  EXPORT_ROUTE,
  MissingModelFileError,
  ModelConfigError,
  UnsupportedArchitectureError,
  UnsupportedWeightsFormatError,
} from './errors.js';

/** Pooling of a bi-encoder: sentence-transformers' modes (1_Pooling/config.json `pooling_mode_*`). */
export type PoolingMode = 'mean' | 'cls' | 'max' | 'mean_sqrt_len';
export const POOLING_MODES: readonly PoolingMode[] = ['mean', 'cls', 'max', 'mean_sqrt_len'];

/** 1_Pooling/config.json keys → our names. */
const POOLING_KEYS: Readonly<Record<string, PoolingMode>> = {
  pooling_mode_mean_tokens: 'mean',
  pooling_mode_cls_token: 'cls',
  pooling_mode_max_tokens: 'max',
  pooling_mode_mean_sqrt_len_tokens: 'mean_sqrt_len',
};

/** Tokenizer files copied to the output when present (as the model generator copies them). */
export const TOKENIZER_FILE_NAMES: readonly string[] = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.txt',
];

/** sentence-transformers files copied to the output when present (they describe the pipeline). */
export const SENTENCE_TRANSFORMERS_FILES: readonly string[] = [
  'modules.json',
  'sentence_bert_config.json',
  'config_sentence_transformers.json',
];

/** Weight files the importer does not read, by how they are recognised. */
const OTHER_WEIGHTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^pytorch_model.*\.bin$|\.pt$|\.pth$|\.ckpt$/, 'PyTorch pickle'],
  [/^pytorch_model\.bin\.index\.json$/, 'PyTorch pickle (sharded)'],
  [/^tf_model\.h5$/, 'TensorFlow'],
  [/^flax_model\.msgpack$/, 'Flax'],
];

export interface SentenceTransformersPipeline {
  /** modules.json types, in order (absent: not a sentence-transformers folder). */
  readonly modules: readonly string[];
  /** The Pooling module's mode, when the folder has one. */
  readonly pooling: PoolingMode | null;
  /** Whether the pipeline ends with Normalize. */
  readonly normalize: boolean;
  /** sentence_bert_config.json max_seq_length. */
  readonly maxSeqLength: number | null;
  /** sentence_bert_config.json do_lower_case: the text is lowercased before the tokenizer. */
  readonly doLowerCase: boolean;
}

export interface HfModelFolder {
  readonly dir: string;
  readonly config: Readonly<Record<string, unknown>>;
  /** Tokenizer files present (relative names); tokenizer.json or vocab.txt among them. */
  readonly tokenizerFiles: readonly string[];
  /** The tokenizer the engine loads: 'tokenizer.json', else 'vocab.txt'. */
  readonly tokenizer: 'tokenizer.json' | 'vocab.txt';
  /** safetensors files holding the weights (relative names), and the index when sharded. */
  readonly weightFiles: readonly string[];
  readonly weightIndex: string | null;
  /** null when the folder is a plain transformers folder. */
  readonly sentenceTransformers: SentenceTransformersPipeline | null;
  /** Relative paths of every file the import reads or copies (hashed into the output's provenance). */
  readonly inputFiles: readonly string[];
  /** The folder's PROVENANCE.json (scripts/fetch-reference-models.sh writes one), parsed. */
  readonly provenance: Readonly<Record<string, unknown>> | null;
  /** Whether tokenizer.json's normalizer lowercases (BertNormalizer lowercase, or a Lowercase step). */
  readonly tokenizerLowercases: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function readJson(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new ModelConfigError(`cannot read ${what} ${path}: ${(cause as Error).message}`, { cause });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ModelConfigError(`${path} is not valid JSON: ${(cause as Error).message}`, { cause });
  }
}

async function readJsonObject(path: string, what: string): Promise<Record<string, unknown>> {
  const value = await readJson(path, what);
  if (!isRecord(value)) throw new ModelConfigError(`${path} must hold a JSON object`);
  return value;
}

const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();

/** Does tokenizer.json's normalizer lowercase the text? */
function normalizerLowercases(normalizer: unknown): boolean {
  if (!isRecord(normalizer)) return false;
  if (normalizer.type === 'BertNormalizer') return normalizer.lowercase === true;
  if (normalizer.type === 'Lowercase') return true;
  if (normalizer.type === 'Sequence' && Array.isArray(normalizer.normalizers)) {
    return normalizer.normalizers.some(normalizerLowercases);
  }
  return false;
}

async function readPipeline(dir: string, files: string[]): Promise<SentenceTransformersPipeline | null> {
  const modulesPath = join(dir, 'modules.json');
  if (!isFile(modulesPath)) return null;
  const modules = await readJson(modulesPath, 'modules.json');
  if (!Array.isArray(modules) || !modules.every(isRecord)) {
    throw new ModelConfigError(`${modulesPath} must hold a list of module objects`);
  }
  const types: string[] = [];
  let pooling: PoolingMode | null = null;
  let normalize = false;
  for (const module of modules as Record<string, unknown>[]) {
    const type = typeof module.type === 'string' ? module.type : '';
    types.push(type);
    const short = type.split('.').pop() ?? '';
    if (short === 'Transformer') continue;
    if (short === 'Normalize') {
      normalize = true;
      continue;
    }
    if (short === 'Pooling') {
      const rel = `${typeof module.path === 'string' && module.path !== '' ? `${module.path}/` : ''}config.json`;
      const path = join(dir, rel);
      if (!isFile(path)) throw new ModelConfigError(`modules.json names a Pooling module but ${path} is missing`);
      files.push(rel);
      const config = await readJsonObject(path, 'the pooling config');
      const modes = Object.entries(config)
        .filter(([key, on]) => key.startsWith('pooling_mode_') && on === true)
        .map(([key]) => key);
      const known = modes.map((key) => POOLING_KEYS[key]).filter((m): m is PoolingMode => m !== undefined);
      if (modes.length !== 1 || known.length !== 1) {
        throw new UnsupportedArchitectureError(
          `${path}: pooling ${modes.length === 0 ? 'mode not set' : modes.join(' + ')}; the importer builds exactly one of ` +
            `${Object.keys(POOLING_KEYS).join(', ')}; ${EXPORT_ROUTE}`,
        );
      }
      pooling = known[0]!;
      continue;
    }
    throw new UnsupportedArchitectureError(
      `${modulesPath}: module ${type || JSON.stringify(module)} is not supported (the importer builds Transformer → Pooling → ` +
        `Normalize pipelines); ${EXPORT_ROUTE}`,
    );
  }
  let maxSeqLength: number | null = null;
  let doLowerCase = false;
  const stPath = join(dir, 'sentence_bert_config.json');
  if (isFile(stPath)) {
    const st = await readJsonObject(stPath, 'sentence_bert_config.json');
    if (typeof st.max_seq_length === 'number' && Number.isSafeInteger(st.max_seq_length) && st.max_seq_length > 0) {
      maxSeqLength = st.max_seq_length;
    }
    doLowerCase = st.do_lower_case === true;
  }
  return { modules: types, pooling, normalize, maxSeqLength, doLowerCase };
}

/** Reads and checks a model folder; typed errors for what is missing or refused. */
export async function readHfModelFolder(dir: string): Promise<HfModelFolder> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new MissingModelFileError('config', `${dir} is not a folder`);
  }
  const configPath = join(dir, 'config.json');
  if (!isFile(configPath)) {
    throw new MissingModelFileError(
      'config',
      `no config.json in ${dir}: a Hugging Face model folder holds config.json, the tokenizer files and the weights`,
    );
  }
  const config = await readJsonObject(configPath, 'config.json');
  const inputFiles = ['config.json'];

  const tokenizerFiles = TOKENIZER_FILE_NAMES.filter((name) => isFile(join(dir, name)));
  const tokenizer = tokenizerFiles.includes('tokenizer.json')
    ? 'tokenizer.json'
    : tokenizerFiles.includes('vocab.txt')
      ? 'vocab.txt'
      : null;
  if (tokenizer === null) {
    throw new MissingModelFileError(
      'tokenizer',
      `no tokenizer.json or vocab.txt in ${dir}: the imported model needs the tokenizer it was trained with`,
    );
  }
  inputFiles.push(...tokenizerFiles);
  let tokenizerLowercases = false;
  if (tokenizer === 'tokenizer.json') {
    const parsed = await readJson(join(dir, 'tokenizer.json'), 'tokenizer.json');
    tokenizerLowercases = isRecord(parsed) && normalizerLowercases(parsed.normalizer);
  } else {
    const tokConfig = isFile(join(dir, 'tokenizer_config.json'))
      ? await readJsonObject(join(dir, 'tokenizer_config.json'), 'tokenizer_config.json')
      : {};
    // The WordPiece built from vocab.txt lowercases unless tokenizer_config.json says otherwise.
    tokenizerLowercases = tokConfig.do_lower_case !== false && tokConfig.do_basic_tokenize !== false;
  }

  let weightFiles: string[];
  let weightIndex: string | null = null;
  if (isFile(join(dir, 'model.safetensors'))) {
    weightFiles = ['model.safetensors'];
  } else if (isFile(join(dir, 'model.safetensors.index.json'))) {
    weightIndex = 'model.safetensors.index.json';
    const index = await readJsonObject(join(dir, weightIndex), 'the safetensors index');
    const map = index.weight_map;
    if (!isRecord(map) || !Object.values(map).every((f) => typeof f === 'string' && /^[^/\\]+\.safetensors$/.test(f))) {
      throw new ModelConfigError(`${join(dir, weightIndex)}: weight_map must map tensor names to .safetensors files`);
    }
    weightFiles = [...new Set(Object.values(map) as string[])].sort();
    const absent = weightFiles.filter((f) => !isFile(join(dir, f)));
    if (absent.length > 0) {
      throw new MissingModelFileError(
        'weights',
        `${join(dir, weightIndex)} lists shards that are missing: ${absent.join(', ')}`,
      );
    }
    inputFiles.push(weightIndex);
  } else {
    const names = readdirSync(dir).sort();
    const other = names.filter((name) => OTHER_WEIGHTS.some(([pattern]) => pattern.test(name)));
    if (other.length > 0) {
      const kinds = [...new Set(other.map((name) => OTHER_WEIGHTS.find(([pattern]) => pattern.test(name))![1]))].join(
        ', ',
      );
      throw new UnsupportedWeightsFormatError(
        other,
        `${dir} has weights as ${other.join(', ')} (${kinds}), which the importer does not read: a pickle runs code ` +
          `when loaded. It reads model.safetensors; convert the weights to safetensors (transformers: ` +
          `model.save_pretrained(dir, safe_serialization=True)) or ${EXPORT_ROUTE}`,
      );
    }
    const onnx = ['onnx/model.onnx', 'model.onnx'].find((rel) => isFile(join(dir, rel)));
    throw new MissingModelFileError(
      'weights',
      `no model.safetensors (or model.safetensors.index.json) in ${dir}` +
        (onnx !== undefined
          ? `; it already holds ${onnx}: load that folder directly (docs/models.md, "Layouts that load")`
          : ''),
    );
  }
  inputFiles.push(...weightFiles);

  const pipeline = await readPipeline(dir, inputFiles);
  if (pipeline !== null) {
    for (const name of SENTENCE_TRANSFORMERS_FILES) if (isFile(join(dir, name))) inputFiles.push(name);
  }
  let provenance: Record<string, unknown> | null = null;
  if (isFile(join(dir, 'PROVENANCE.json'))) {
    provenance = await readJsonObject(join(dir, 'PROVENANCE.json'), 'PROVENANCE.json');
    inputFiles.push('PROVENANCE.json');
  }
  if (isFile(join(dir, 'README.md'))) inputFiles.push('README.md');
  return {
    dir,
    config,
    tokenizerFiles,
    tokenizer,
    weightFiles,
    weightIndex,
    sentenceTransformers: pipeline,
    inputFiles: [...new Set(inputFiles)],
    provenance,
    tokenizerLowercases,
  };
}

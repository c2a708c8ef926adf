/**
 * `loadTreeModel(pathOrBytes)`: the public entry point for tree models. Accepts a file path or the
 * file's bytes in any supported format (XGBoost JSON, UBJSON, legacy binary, ml-xgboost's
 * toJSON() file), detected by content; parses and validates it in TypeScript
 * (loaders/parse-model.ts) and hands the IR to the native evaluator (createTreeModel).
 */
import { readFile, stat } from 'node:fs/promises';
import { InvalidArgumentError } from '../../errors.js';
import type { ParsedTreeModel } from './loaders/parse-model.js';
import { createTreeModel, type TreeModel, type TreeModelOptions } from './tree-model.js';

export type { TreeModelFormat, ParsedTreeModel } from './loaders/parse-model.js';

/** The format parsers load with the first model, not with the package (they are most of the fast-path tier's code). */
async function parseModel(bytes: Uint8Array, where: string): Promise<ParsedTreeModel> {
  const { parseTreeModelBytes } = await import('./loaders/parse-model.js');
  return parseTreeModelBytes(bytes, where);
}

/** Models larger than this are refused before reading (the largest fixture is 3 MB). */
export const DEFAULT_MAX_MODEL_BYTES = 512 * 1024 * 1024;

export interface LoadTreeModelOptions extends TreeModelOptions {
  /** Refuse files larger than this many bytes (default 512 MiB). */
  readonly maxBytes?: number;
}

async function readModelBytes(
  pathOrBytes: string | Uint8Array,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; where: string }> {
  if (pathOrBytes instanceof Uint8Array) {
    if (pathOrBytes.length > maxBytes) {
      throw new InvalidArgumentError(`model is ${pathOrBytes.length} bytes, more than the ${maxBytes}-byte limit`);
    }
    return { bytes: pathOrBytes, where: 'model bytes' };
  }
  if (typeof pathOrBytes !== 'string' || pathOrBytes.length === 0) {
    throw new InvalidArgumentError('loadTreeModel expects a file path or a Uint8Array of model bytes');
  }
  let size: number;
  try {
    size = (await stat(pathOrBytes)).size;
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read model file ${pathOrBytes}: ${(cause as Error).message}`, { cause });
  }
  if (size > maxBytes)
    throw new InvalidArgumentError(`model file ${pathOrBytes} is ${size} bytes, more than the ${maxBytes}-byte limit`);
  try {
    return { bytes: new Uint8Array(await readFile(pathOrBytes)), where: pathOrBytes };
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read model file ${pathOrBytes}: ${(cause as Error).message}`, { cause });
  }
}

/** Reads and parses a model into the IR without touching the native addon (convert, inspection). */
export async function readTreeModelIR(
  pathOrBytes: string | Uint8Array,
  options: { readonly maxBytes?: number } = {},
): Promise<ParsedTreeModel> {
  const { bytes, where } = await readModelBytes(pathOrBytes, options.maxBytes ?? DEFAULT_MAX_MODEL_BYTES);
  return parseModel(bytes, where);
}

/** Loads a model file (path) or model bytes into a native TreeModel. */
export async function loadTreeModel(
  pathOrBytes: string | Uint8Array,
  options: LoadTreeModelOptions = {},
): Promise<TreeModel> {
  const { maxBytes, ...modelOptions } = options;
  const { ir } = await readTreeModelIR(pathOrBytes, maxBytes === undefined ? {} : { maxBytes });
  return createTreeModel(ir, modelOptions);
}

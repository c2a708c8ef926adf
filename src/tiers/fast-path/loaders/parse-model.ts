/**
 * Format detection and parsing of any supported XGBoost model file into the IR, by content (never
 * by file name):
 * - XGBoost JSON: text starting with `{` followed by `"` (after optional whitespace/BOM), also
 *   XGBoost's JSON memory snapshot `{"Model": {...}, "Config": {...}}`;
 *   a JSON object holding `model` (an array of byte values, or a Node Buffer's JSON form) instead
 *   of `learner` is ml-xgboost's `toJSON()` output, whose bytes are a legacy binary model;
 * - UBJSON: `{` followed by a UBJSON length/type marker;
 * - LightGBM's text model: a first line `tree`, then `key=value` lines (loaders/lightgbm-text.ts);
 * - otherwise the legacy binary format (optionally with XGBoost 1.x's "binf" header).
 * Pure TypeScript (no native code), so tools and tests can inspect a model without the addon.
 */
import { ModelFormatError } from '../../../errors.js';
import type { TreeEnsembleIR } from '../model-ir.js';
import { loadLightGBMText, looksLikeLightGBMText } from './lightgbm-text.js';
import { loadXGBoostLegacyBinary, looksLikeLegacyBinary } from './xgboost-legacy-binary.js';
import { treeEnsembleFromDocument } from './xgboost-json.js';
import { loadXGBoostUbjson, looksLikeUbjson } from './xgboost-ubjson.js';

export type TreeModelFormat = 'xgboost-json' | 'xgboost-ubjson' | 'legacy-binary' | 'ml-xgboost-json' | 'lightgbm-text';

export interface ParsedTreeModel {
  readonly format: TreeModelFormat;
  readonly ir: TreeEnsembleIR;
}

function firstNonSpace(bytes: Uint8Array): number {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3; // UTF-8 BOM
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return i;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** ml-xgboost's toJSON().model: signed bytes (Int8 from getValue 'i8'), or a Buffer's JSON. */
function mlXGBoostBytes(model: unknown, where: string): Uint8Array {
  const list = isRecord(model) && model.type === 'Buffer' ? model.data : model;
  if (!Array.isArray(list)) throw new ModelFormatError(`${where}: "model" is not an array of bytes`);
  const out = new Uint8Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const b: unknown = list[i];
    if (typeof b !== 'number' || !Number.isInteger(b) || b < -128 || b > 255) {
      throw new ModelFormatError(`${where}: "model"[${i}] is not a byte value`);
    }
    out[i] = b & 0xff;
  }
  return out;
}

export function parseTreeModelBytes(bytes: Uint8Array, where = 'model'): ParsedTreeModel {
  if (bytes.length === 0) throw new ModelFormatError(`${where}: empty file`);
  if (looksLikeUbjson(bytes)) {
    return { format: 'xgboost-ubjson', ir: loadXGBoostUbjson(bytes, `${where} (UBJSON)`) };
  }
  const start = firstNonSpace(bytes);
  if (bytes[start] === 0x7b /* { */) {
    let doc: unknown;
    try {
      doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start)));
    } catch (cause) {
      throw new ModelFormatError(`${where}: starts like JSON but is not valid JSON (${(cause as Error).message})`, {
        cause,
      });
    }
    if (isRecord(doc) && !('learner' in doc) && 'model' in doc) {
      const inner = mlXGBoostBytes(doc.model, `${where} (ml-xgboost JSON)`);
      return {
        format: 'ml-xgboost-json',
        ir: loadXGBoostLegacyBinary(inner, `${where} (ml-xgboost JSON, embedded binary)`),
      };
    }
    // XGBoost's memory snapshot (save_raw / pickle in JSON form) wraps the model as {Model, Config}.
    if (isRecord(doc) && !('learner' in doc) && isRecord(doc.Model) && 'learner' in doc.Model) {
      return { format: 'xgboost-json', ir: treeEnsembleFromDocument(doc.Model, `${where} (JSON snapshot)`) };
    }
    return { format: 'xgboost-json', ir: treeEnsembleFromDocument(doc, `${where} (JSON)`) };
  }
  if (looksLikeLightGBMText(bytes)) {
    return { format: 'lightgbm-text', ir: loadLightGBMText(bytes, `${where} (LightGBM text)`) };
  }
  if (!looksLikeLegacyBinary(bytes)) {
    throw new ModelFormatError(
      `${where}: not a recognized model (expected XGBoost JSON, UBJSON, legacy binary or LightGBM text)`,
    );
  }
  return { format: 'legacy-binary', ir: loadXGBoostLegacyBinary(bytes, `${where} (legacy binary)`) };
}

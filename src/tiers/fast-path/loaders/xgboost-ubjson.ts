/**
 * XGBoost's UBJSON model format (Booster.save_model("x.ubj"), XGBoost >= 1.6) → TreeEnsembleIR.
 * The document has exactly the JSON format's shape (see xgboost-json.ts); arrays arrive as typed
 * arrays from UBJSON's optimized containers.
 */
import type { TreeEnsembleIR } from '../model-ir.js';
import { decodeUbjson } from './ubjson.js';
import { treeEnsembleFromDocument } from './xgboost-json.js';

export function loadXGBoostUbjson(bytes: Uint8Array, where = 'XGBoost UBJSON model'): TreeEnsembleIR {
  return treeEnsembleFromDocument(decodeUbjson(bytes, where), where);
}

/** True when bytes start like a UBJSON object ("{" then a length marker, or "$"/"#" headers). */
export function looksLikeUbjson(bytes: Uint8Array): boolean {
  if (bytes.length < 2 || bytes[0] !== 0x7b) return false;
  return 'iUIlL$#'.includes(String.fromCharCode(bytes[1] as number));
}

/**
 * The one check of a passage's shape, for every layer that takes passages (the gate before any
 * scoring, a tier called directly): a typed error naming the field, never a crash or a silently
 * wrong score.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Passage } from '../types.js';

/** Throws InvalidArgumentError naming `passages[i].field` unless `p` is a `{ id, text, title?, metadata?, features? }`. */
export function checkPassage(p: unknown, i: number): void {
  if (typeof p !== 'object' || p === null)
    throw new InvalidArgumentError(`passages[${i}] must be an object { id, text }`);
  const { id, text, title, metadata, features } = p as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0)
    throw new InvalidArgumentError(`passages[${i}].id must be a non-empty string`);
  if (typeof text !== 'string')
    throw new InvalidArgumentError(`passages[${i}].text must be a string (passage ${JSON.stringify(id)})`);
  if (title !== undefined && typeof title !== 'string')
    throw new InvalidArgumentError(`passages[${i}].title must be a string when given`);
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null))
    throw new InvalidArgumentError(`passages[${i}].metadata must be an object when given`);
  if (features !== undefined && (typeof features !== 'object' || features === null)) {
    throw new InvalidArgumentError(`passages[${i}].features must be a number record, array or Float32Array when given`);
  }
}

/** Throws unless `passages` is an array of well-formed passages (checkPassage); sizes and ids are the caller's. */
export function checkPassages(passages: unknown): asserts passages is readonly Passage[] {
  if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array');
  for (let i = 0; i < passages.length; i++) checkPassage(passages[i], i);
}

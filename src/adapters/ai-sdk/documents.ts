/**
 * Turning AI SDK rerank documents into gate passages. Text documents are scored as they are;
 * object documents are read through configurable fields (text, title, id), never stringified:
 * a JSON dump would score field names and punctuation, not the passage.
 */
import { uniquePassageIds } from '../../context/passage-ids.js';
import { InvalidArgumentError, type Passage } from '../../index.js';
import type { JSONObject, RerankingCallOptions } from './spec.js';

/** Reads a value from an object document: a field name, or a function of the document. */
export type FieldReader<T> = string | ((document: JSONObject, index: number) => T);

export interface DocumentFields {
  /** The text to score. Default 'text'. */
  readonly textField?: FieldReader<string>;
  /** The title scored with the text; null to ignore titles. Default 'title' (used when a non-empty string). */
  readonly titleField?: FieldReader<string | undefined> | null;
  /** The document's id (kept in results and cache keys); null to use positions. Default 'id'. */
  readonly idField?: FieldReader<string | number | undefined> | null;
}

/** A rerank document as the gate sees it. `index` is its position in the call's documents. */
export interface RerankPassage extends Passage {
  readonly index: number;
  /** The caller's document (a string or the object), untouched. */
  readonly document: string | JSONObject;
}

function read<T>(reader: FieldReader<T>, document: JSONObject, index: number): unknown {
  return typeof reader === 'function' ? reader(document, index) : document[reader];
}

function fieldName(reader: FieldReader<unknown>, option: string): string {
  return typeof reader === 'function' ? ` (${option} function)` : `.${reader}`;
}

export function checkFields(fields: DocumentFields): void {
  const { textField, titleField, idField } = fields;
  if (textField !== undefined && !isReader(textField))
    throw new InvalidArgumentError('textField must be a field name or a function (document, index) => string');
  if (titleField !== undefined && titleField !== null && !isReader(titleField))
    throw new InvalidArgumentError('titleField must be a field name, a function, or null');
  if (idField !== undefined && idField !== null && !isReader(idField))
    throw new InvalidArgumentError('idField must be a field name, a function, or null');
}

function isReader(value: unknown): boolean {
  return (typeof value === 'string' && value.length > 0) || typeof value === 'function';
}

export function rerankPassages(documents: RerankingCallOptions['documents'], fields: DocumentFields): RerankPassage[] {
  if (typeof documents !== 'object' || documents === null || !Array.isArray(documents.values))
    throw new InvalidArgumentError("documents must be { type: 'text' | 'object', values: [...] }");
  const values: readonly unknown[] = documents.values;
  if (documents.type === 'text') {
    return values.map((value, index) => {
      if (typeof value !== 'string') throw new InvalidArgumentError(`documents.values[${index}] must be a string`);
      return { id: String(index), text: value, index, document: value };
    });
  }
  if (documents.type !== 'object')
    throw new InvalidArgumentError(
      `documents.type must be 'text' or 'object', got ${String((documents as { type: unknown }).type)}`,
    );
  const textField = fields.textField ?? 'text';
  const titleField = fields.titleField === undefined ? 'title' : fields.titleField;
  const idField = fields.idField === undefined ? 'id' : fields.idField;
  const objects = values.map((value, index) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InvalidArgumentError(`documents.values[${index}] must be a JSON object`);
    return value as JSONObject;
  });
  const ids = uniquePassageIds(
    objects.map((document, index) => {
      if (idField === null) return undefined;
      const id = read(idField, document, index);
      return typeof id === 'string' ? id : typeof id === 'number' && Number.isFinite(id) ? String(id) : undefined;
    }),
  );
  return objects.map((document, index) => {
    const text = read(textField, document, index);
    if (typeof text !== 'string')
      throw new InvalidArgumentError(
        `documents.values[${index}]${fieldName(textField, 'textField')} must be a string (set textField to the field holding the passage text)`,
      );
    const title = titleField === null ? undefined : read(titleField, document, index);
    if (title !== undefined && title !== null && typeof title !== 'string')
      throw new InvalidArgumentError(
        `documents.values[${index}]${fieldName(titleField as FieldReader<unknown>, 'titleField')} must be a string when present`,
      );
    const passage: { -readonly [K in keyof RerankPassage]: RerankPassage[K] } = {
      id: ids[index],
      text,
      index,
      document,
    };
    if (typeof title === 'string' && title.length > 0) passage.title = title;
    return passage;
  });
}

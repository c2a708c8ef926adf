/**
 * The fields of a Hugging Face `config.json` the cross-encoder loader reads to run a model the way
 * its exporter expects: `model_type` (how position ids are filled), `pad_token_id` (padding id and
 * RoBERTa's padding_idx), `id2label` (names of a classifier head's labels, in label-id order) and
 * `problem_type` (softmax vs per-label sigmoid). Plain data: it travels to the worker threads.
 */
import { readFileSync } from 'node:fs';
import { ModelFormatError } from '../../errors.js';

export interface ModelConfigFields {
  /** transformers `model_type`, e.g. 'bert', 'roberta', 'xlm-roberta', 'modernbert', 'deberta-v2'. */
  readonly modelType?: string;
  /** `pad_token_id`, when it is a non-negative integer. */
  readonly padTokenId?: number;
  /**
   * `id2label` as a list in label-id order (ids 0…n−1, every one present and a string); absent when
   * config.json has none.
   */
  readonly labels?: readonly string[];
  /** Why `id2label` could not be read as a dense list (set instead of `labels`). */
  readonly labelsProblem?: string;
  /** `problem_type`, when it is a string. */
  readonly problemType?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** id2label → labels in id order, or the reason it is not a dense 0…n−1 map of strings. */
function readLabels(value: unknown): { labels?: string[]; labelsProblem?: string } {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) return { labelsProblem: 'id2label is not an object' };
  const keys = Object.keys(value);
  const labels: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const label = value[String(i)];
    if (typeof label !== 'string') {
      return { labelsProblem: `id2label ids are not 0…${keys.length - 1} with a string label each (id ${i})` };
    }
    labels.push(label);
  }
  return labels.length > 0 ? { labels } : { labelsProblem: 'id2label is empty' };
}

/** The loader's view of a parsed config.json object. */
export function modelConfigFields(config: unknown): ModelConfigFields {
  if (!isRecord(config)) return {};
  const pad = config.pad_token_id;
  return {
    ...(typeof config.model_type === 'string' ? { modelType: config.model_type } : {}),
    ...(typeof pad === 'number' && Number.isSafeInteger(pad) && pad >= 0 ? { padTokenId: pad } : {}),
    ...readLabels(config.id2label),
    ...(typeof config.problem_type === 'string' ? { problemType: config.problem_type } : {}),
  };
}

/** Parsed config.json (null path or unreadable file → undefined). Invalid JSON is a ModelFormatError. */
export function readConfigJson(path: string | null): unknown {
  if (path === null) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ModelFormatError(`${path} is not valid JSON`, { cause });
  }
}

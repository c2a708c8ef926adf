/**
 * Judgments for replay: a TSV of `query-id<TAB>passage-id<TAB>grade` (an optional header line, as
 * the eval collections' qrels.tsv), grade > 0 = relevant. A logged request is matched by its
 * `requestId`, else its `queryHash` (sha256 of the query text), so judgments can be kept without
 * the query text in the log.
 */
import { readFile } from 'node:fs/promises';
import { DecisionLogFormatError } from './errors.js';

/** query key (request id or query hash) → passage id → grade. */
export type Judgments = ReadonlyMap<string, ReadonlyMap<string, number>>;

export function parseJudgments(text: string, source = 'qrels'): Judgments {
  const out = new Map<string, Map<string, number>>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0 || line.startsWith('#')) continue;
    const cols = line.split(/\t|\s+/);
    if (cols.length < 3) throw new DecisionLogFormatError(`${source}:${i + 1}: expected query-id, passage-id, grade`);
    const grade = Number(cols[cols.length - 1]);
    if (!Number.isFinite(grade)) {
      if (i === 0 || out.size === 0) continue; // a header line
      throw new DecisionLogFormatError(
        `${source}:${i + 1}: grade ${JSON.stringify(cols[cols.length - 1])} is not a number`,
      );
    }
    // TREC's four-column form (query-id 0 doc-id grade) reads the same.
    const query = cols[0];
    const passage = cols.length >= 4 ? cols[2] : cols[1];
    let judged = out.get(query);
    if (judged === undefined) {
      judged = new Map();
      out.set(query, judged);
    }
    judged.set(passage, grade);
  }
  return out;
}

export async function readJudgments(path: string): Promise<Judgments> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new DecisionLogFormatError(`cannot read judgments ${path}: ${(cause as Error).message}`, { cause });
  }
  return parseJudgments(text, path);
}

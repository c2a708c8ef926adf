/**
 * Reads a decision log directory: every `decisions-*.ndjson` file in name order (the order they
 * were started), lines in file order. A line that is not a record of a version this reader takes
 * (the last line of a file cut short by a crash or a full disk) is counted, not fatal.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DecisionLogFormatError } from './errors.js';
import { LOG_FILE_PATTERN } from './file-sink.js';
import { type DecisionRecord, type LogRecord, type PolicyRecord, READABLE_DECISION_LOG_VERSIONS } from './types.js';

export interface DecisionLogContents {
  /** Decision records in log order. */
  readonly decisions: readonly DecisionRecord[];
  /** Policy records by hash. */
  readonly policies: ReadonlyMap<string, PolicyRecord>;
  readonly files: readonly string[];
  /** Lines that could not be read as records. */
  readonly malformedLines: number;
}

function isRecord(value: unknown): value is LogRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as { kind?: unknown; v?: unknown };
  if (typeof r.v !== 'number' || !READABLE_DECISION_LOG_VERSIONS.includes(r.v)) return false;
  if (r.kind === 'policy') return typeof (value as PolicyRecord).policyHash === 'string';
  if (r.kind === 'decision') {
    const d = value as DecisionRecord;
    return typeof d.requestId === 'string' && typeof d.policyHash === 'string' && Array.isArray(d.passages);
  }
  return false;
}

/** Parses NDJSON text into records; malformed lines are counted. */
export function parseDecisionLines(text: string): { records: LogRecord[]; malformed: number } {
  const records: LogRecord[] = [];
  let malformed = 0;
  for (const line of text.split('\n')) {
    if (line.trim().length === 0) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) records.push(value);
      else malformed++;
    } catch {
      malformed++;
    }
  }
  return { records, malformed };
}

/** Reads every log file of `dir`, or one file when `dir` is a file. */
export async function readDecisionLog(dir: string): Promise<DecisionLogContents> {
  let files: string[];
  try {
    const info = await stat(dir);
    files = info.isDirectory()
      ? (await readdir(dir))
          .filter((n) => LOG_FILE_PATTERN.test(n))
          .sort()
          .map((n) => join(dir, n))
      : [dir];
  } catch (cause) {
    throw new DecisionLogFormatError(`cannot read the decision log at ${dir}: ${(cause as Error).message}`, { cause });
  }
  const decisions: DecisionRecord[] = [];
  const policies = new Map<string, PolicyRecord>();
  let malformedLines = 0;
  for (const file of files) {
    const { records, malformed } = parseDecisionLines(await readFile(file, 'utf8'));
    malformedLines += malformed;
    for (const r of records) {
      if (r.kind === 'policy') policies.set(r.policyHash, r);
      else decisions.push(r);
    }
  }
  return { decisions, policies, files, malformedLines };
}

/**
 * Reads a labelled feature table for training: CSV with a header row, or JSONL (one JSON object
 * per line). Features are chosen by name (default: every column except the label); values become
 * float32, with empty / `nan` / null / absent = missing (NaN). Any other non-number is an
 * InvalidArgumentError naming the line and column. The label must be a finite number on every row.
 * CSV fields may be double-quoted (RFC 4180: "" is a quote) so names with commas work.
 */
import { InvalidArgumentError } from '../../../errors.js';
import { parseFeatureValue } from './feature-csv.js';
import { mulberry32 } from '../../../util/seeded-random.js';

export interface LabelledTable {
  readonly featureNames: readonly string[];
  /** Row-major numRows × featureNames.length; NaN = missing. */
  readonly features: Float32Array;
  readonly labels: Float64Array;
  readonly numRows: number;
}

export interface TableSelection {
  readonly label: string;
  /** Feature columns in model order; default: every column but the label, in file order. */
  readonly features?: readonly string[];
}

function splitCsvLine(line: string, lineNo: number, source: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quoted) {
      if (ch === '"') {
        if (line[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      out.push(field);
      field = '';
    } else field += ch;
  }
  if (quoted) throw new InvalidArgumentError(`${source} line ${lineNo}: unterminated quoted field`);
  out.push(field);
  return out;
}

function resolveColumns(
  available: readonly string[],
  sel: TableSelection,
  source: string,
): { label: number; features: number[]; names: string[] } {
  const index = new Map<string, number>();
  available.forEach((name, i) => {
    if (index.has(name)) throw new InvalidArgumentError(`${source}: column "${name}" appears twice`);
    index.set(name, i);
  });
  const label = index.get(sel.label);
  if (label === undefined)
    throw new InvalidArgumentError(
      `${source}: label column "${sel.label}" not found (columns: ${available.join(', ')})`,
    );
  const names = sel.features ? [...sel.features] : available.filter((n) => n !== sel.label);
  if (names.length === 0) throw new InvalidArgumentError(`${source}: no feature columns`);
  const features = names.map((n) => {
    const i = index.get(n);
    if (i === undefined) throw new InvalidArgumentError(`${source}: feature column "${n}" not found`);
    if (n === sel.label) throw new InvalidArgumentError(`${source}: the label "${n}" cannot also be a feature`);
    return i;
  });
  if (new Set(names).size !== names.length) throw new InvalidArgumentError(`${source}: a feature is listed twice`);
  return { label, features, names };
}

function labelValue(v: unknown, lineNo: number, source: string, name: string): number {
  const x =
    typeof v === 'number'
      ? v
      : typeof v === 'boolean'
        ? Number(v)
        : typeof v === 'string'
          ? parseFeatureValue(v)
          : undefined;
  if (x === undefined || !Number.isFinite(x)) {
    throw new InvalidArgumentError(
      `${source} line ${lineNo}: label "${name}" = ${JSON.stringify(v)} is not a finite number`,
    );
  }
  return x;
}

export function parseCsvTable(text: string, sel: TableSelection, source = 'data'): LabelledTable {
  const lines = text.split(/\r?\n/);
  let h = 0;
  while (h < lines.length && (lines[h] as string).trim() === '') h++;
  if (h === lines.length) throw new InvalidArgumentError(`${source}: empty file`);
  const header = splitCsvLine((lines[h] as string).replace(/^\uFEFF/, ''), h + 1, source).map((s) => s.trim());
  const cols = resolveColumns(header, sel, source);
  const feats: number[] = [];
  const labels: number[] = [];
  for (let i = h + 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    const fields = splitCsvLine(line, i + 1, source);
    if (fields.length !== header.length) {
      throw new InvalidArgumentError(
        `${source} line ${i + 1}: ${fields.length} fields, the header has ${header.length}`,
      );
    }
    labels.push(labelValue(fields[cols.label], i + 1, source, sel.label));
    cols.features.forEach((c, k) => {
      const v = parseFeatureValue(fields[c] as string);
      if (v === undefined) {
        throw new InvalidArgumentError(
          `${source} line ${i + 1}, column "${cols.names[k]}": ${JSON.stringify((fields[c] as string).slice(0, 40))} is not a number`,
        );
      }
      feats.push(v);
    });
  }
  if (labels.length === 0) throw new InvalidArgumentError(`${source}: no data rows`);
  return {
    featureNames: cols.names,
    features: Float32Array.from(feats),
    labels: Float64Array.from(labels),
    numRows: labels.length,
  };
}

export function parseJsonlTable(text: string, sel: TableSelection, source = 'data'): LabelledTable {
  const lines = text.split(/\r?\n/);
  let cols: { names: string[] } | undefined;
  const feats: number[] = [];
  const labels: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      throw new InvalidArgumentError(`${source} line ${i + 1}: not valid JSON`);
    }
    if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) {
      throw new InvalidArgumentError(`${source} line ${i + 1}: expected a JSON object`);
    }
    const obj = rec as Record<string, unknown>;
    if (cols === undefined) {
      const keys = Object.keys(obj);
      const names = sel.features
        ? [...sel.features]
        : keys.filter((k) => k !== sel.label && (typeof obj[k] === 'number' || obj[k] === null));
      cols = {
        names: resolveColumns([...new Set([...keys, ...names])], { label: sel.label, features: names }, source).names,
      };
    }
    if (!(sel.label in obj)) throw new InvalidArgumentError(`${source} line ${i + 1}: label "${sel.label}" is missing`);
    labels.push(labelValue(obj[sel.label], i + 1, source, sel.label));
    for (const name of cols.names) {
      const v = obj[name];
      if (v === undefined || v === null) feats.push(NaN);
      else if (typeof v === 'number') feats.push(v);
      else if (typeof v === 'string' && parseFeatureValue(v) !== undefined) feats.push(parseFeatureValue(v) as number);
      else
        throw new InvalidArgumentError(
          `${source} line ${i + 1}, field "${name}": ${JSON.stringify(v).slice(0, 40)} is not a number`,
        );
    }
  }
  if (cols === undefined || labels.length === 0) throw new InvalidArgumentError(`${source}: no data rows`);
  return {
    featureNames: cols.names,
    features: Float32Array.from(feats),
    labels: Float64Array.from(labels),
    numRows: labels.length,
  };
}

/** Picks the parser by extension: .jsonl / .ndjson → JSONL, anything else → CSV with header. */
export function parseTable(text: string, fileName: string, sel: TableSelection): LabelledTable {
  return /\.(jsonl|ndjson)$/i.test(fileName)
    ? parseJsonlTable(text, sel, fileName)
    : parseCsvTable(text, sel, fileName);
}

/** Same columns, a subset of rows (in the given order). */
export function takeRows(t: LabelledTable, rows: ArrayLike<number>): LabelledTable {
  const f = t.featureNames.length;
  const features = new Float32Array(rows.length * f);
  const labels = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as number;
    features.set(t.features.subarray(r * f, (r + 1) * f), i * f);
    labels[i] = t.labels[r] as number;
  }
  return { featureNames: t.featureNames, features, labels, numRows: rows.length };
}

/** Deterministic train/validation split: a seeded shuffle, the first `fraction` of it is validation. */
export function splitRows(numRows: number, fraction: number, seed: number): { train: Uint32Array; valid: Uint32Array } {
  if (!(fraction >= 0 && fraction < 1))
    throw new InvalidArgumentError(`validation fraction must be in [0, 1), got ${fraction}`);
  const order = new Uint32Array(numRows);
  for (let i = 0; i < numRows; i++) order[i] = i;
  const rand = mulberry32((seed >>> 0) ^ 0x9e3779b9);
  for (let i = numRows - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const tmp = order[i] as number;
    order[i] = order[j] as number;
    order[j] = tmp;
  }
  const nValid = Math.floor(numRows * fraction);
  const valid = order.slice(0, nValid).sort();
  const train = order.slice(nValid).sort();
  return { train, valid };
}

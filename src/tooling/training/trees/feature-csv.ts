/**
 * Text I/O for tree-model features and outputs, shared by the predict and train commands.
 *
 * Headerless feature CSV (predict): one row per line, comma-separated floats; `nan` (any case) or
 * an empty field = missing (NaN); `inf`/`-inf`/`infinity` = ±Infinity (XGBoost compares those as
 * ordinary values); blank lines are skipped; CRLF accepted. A wrong field count or a non-number is
 * an InvalidArgumentError naming the line (1-based) and column.
 *
 * Output formatting: float32 values are printed as the shortest decimal that reads back to the
 * same float32; float64 values as JavaScript's shortest round-trip form.
 */
import { InvalidArgumentError } from '../../../errors.js';

/** Parses one numeric field; returns undefined when it is not a number. */
export function parseFeatureValue(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return NaN;
  const lower = t.toLowerCase();
  if (lower === 'nan' || lower === '-nan' || lower === '+nan') return NaN;
  if (lower === 'inf' || lower === '+inf' || lower === 'infinity' || lower === '+infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  // Number() accepts "", "0x1f", " 1 " and "1_0" is refused; require a decimal float literal.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return undefined;
  return Number(t);
}

export interface FeatureMatrix {
  readonly rows: Float32Array;
  readonly nRows: number;
  readonly nCols: number;
}

/** Parses a headerless feature CSV; `expectedColumns` (the model's feature count) is enforced per line. */
export function parseFeatureCsv(text: string, expectedColumns: number, source = 'input'): FeatureMatrix {
  const lines = text.split(/\r?\n/);
  const values: number[] = [];
  let nRows = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    const fields = line.split(',');
    if (fields.length !== expectedColumns) {
      throw new InvalidArgumentError(
        `${source} line ${i + 1}: ${fields.length} values, the model expects ${expectedColumns} features`,
      );
    }
    for (let c = 0; c < fields.length; c++) {
      const v = parseFeatureValue(fields[c] as string);
      if (v === undefined) {
        throw new InvalidArgumentError(
          `${source} line ${i + 1}, column ${c + 1}: ${JSON.stringify((fields[c] as string).slice(0, 40))} is not a number`,
        );
      }
      values.push(v);
    }
    nRows++;
  }
  return { rows: Float32Array.from(values), nRows, nCols: expectedColumns };
}

/** Shortest decimal that reads back to the same float32 (nan / inf / -inf for non-finite). */
export function formatFloat32Value(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  const v = Math.fround(value);
  for (let p = 1; p <= 9; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s));
  }
  return String(v);
}

export function formatFloat64Value(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return String(value);
}

/** One line per row, outputs comma-separated. */
export function formatOutputRows(out: Float32Array | Float64Array, nRows: number): string {
  if (nRows === 0) return '';
  const perRow = out.length / nRows;
  const fmt = out instanceof Float32Array ? formatFloat32Value : formatFloat64Value;
  const lines: string[] = new Array<string>(nRows);
  for (let r = 0; r < nRows; r++) {
    const parts: string[] = new Array<string>(perRow);
    for (let g = 0; g < perRow; g++) parts[g] = fmt(out[r * perRow + g] as number);
    lines[r] = parts.join(',');
  }
  return `${lines.join('\n')}\n`;
}

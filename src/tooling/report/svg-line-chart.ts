/**
 * A dependency-free SVG line chart for reports (precision/recall curves, latency vs offered QPS).
 * Small on purpose: axes with ticks, one polyline per series, a legend. Output is deterministic.
 */
export interface ChartSeries {
  readonly name: string;
  readonly points: ReadonlyArray<readonly [x: number, y: number]>;
}

export interface LineChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
  readonly width?: number;
  readonly height?: number;
  /** Fixed axis ranges; default: the data's extent (y starts at 0 when all y ≥ 0). */
  readonly xRange?: readonly [number, number];
  readonly yRange?: readonly [number, number];
  /** Horizontal reference lines, e.g. a latency budget. */
  readonly hLines?: ReadonlyArray<{ readonly y: number; readonly label: string }>;
  readonly logX?: boolean;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function escapeXml(s: string): string {
  return s.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );
}

function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const rawStep = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(rawStep));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= rawStep) ?? rawStep;
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

function fmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 10000 || a < 0.001) return v.toExponential(1);
  return Number(v.toPrecision(4)).toString();
}

export function renderLineChart(opts: LineChartOptions): string {
  const width = opts.width ?? 720;
  const height = opts.height ?? 440;
  const m = { left: 70, right: 170, top: 40, bottom: 55 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const all = opts.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const tx = (x: number): number => (opts.logX ? Math.log10(Math.max(x, 1e-12)) : x);
  const xs = all.map(([x]) => tx(x));
  const ys = all.map(([, y]) => y).concat((opts.hLines ?? []).map((h) => h.y));
  let [x0, x1] = opts.xRange
    ? [tx(opts.xRange[0]), tx(opts.xRange[1])]
    : [Math.min(...xs, Infinity), Math.max(...xs, -Infinity)];
  let [y0, y1] = opts.yRange ?? [Math.min(...ys, Infinity), Math.max(...ys, -Infinity)];
  if (!Number.isFinite(x0) || !Number.isFinite(x1)) [x0, x1] = [0, 1];
  if (!Number.isFinite(y0) || !Number.isFinite(y1)) [y0, y1] = [0, 1];
  if (!opts.yRange && y0 >= 0) y0 = 0;
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  if (!opts.yRange) y1 += (y1 - y0) * 0.05;
  const px = (x: number): number => m.left + ((tx(x) - x0) / (x1 - x0)) * pw;
  const py = (y: number): number => m.top + ph - ((y - y0) / (y1 - y0)) * ph;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  out.push(`<text x="${m.left + pw / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(opts.title)}</text>`);
  out.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  for (const t of niceTicks(y0, y1)) {
    const y = py(t).toFixed(1);
    out.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    out.push(`<text x="${m.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${fmt(t)}</text>`);
  }
  const xTicks = opts.logX ? niceTicks(x0, x1).map((t) => 10 ** t) : niceTicks(x0, x1);
  for (const t of xTicks) {
    const x = px(t).toFixed(1);
    out.push(`<line x1="${x}" x2="${x}" y1="${m.top}" y2="${m.top + ph}" stroke="#eee"/>`);
    out.push(`<text x="${x}" y="${m.top + ph + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  out.push(`<text x="${m.left + pw / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(opts.xLabel)}</text>`);
  out.push(
    `<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${escapeXml(opts.yLabel)}</text>`,
  );
  for (const h of opts.hLines ?? []) {
    const y = py(h.y).toFixed(1);
    out.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${y}" y2="${y}" stroke="#999" stroke-dasharray="6 4"/>`);
    out.push(
      `<text x="${m.left + pw - 4}" y="${Number(y) - 4}" text-anchor="end" fill="#666">${escapeXml(h.label)}</text>`,
    );
  }
  opts.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (pts.length > 0) {
      const d = pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${d}"/>`);
      for (const [x, y] of pts.length <= 40 ? pts : []) {
        out.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${color}"/>`);
      }
    }
    const ly = m.top + 10 + i * 18;
    out.push(
      `<line x1="${m.left + pw + 12}" x2="${m.left + pw + 32}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
    );
    out.push(`<text x="${m.left + pw + 38}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

import { readFileSync } from 'node:fs';
const Q = Number(process.env.Q ?? 0.1);
const L = JSON.parse(readFileSync('/tmp/lists.json', 'utf8')).map((l) => ({ ...l, ord: l.ord ?? l.rel }));
const lg = (p) => { const c = Math.min(Math.max(p, 1e-9), 1 - 1e-9); return Math.log(c / (1 - c)); };
const top = (a, k) => { const s = [...a].sort((x, y) => y - x); let m = 0; for (let i = 0; i < k; i++) m += s[Math.min(i, s.length - 1)]; return m / k; };
const FEATS = (process.env.FEATS ?? 'maxRel,maxOrd,top3Ord,maxIdf').split(',');
const fx = {
  maxRel: (l) => top(l.rel.map(lg), 1), maxOrd: (l) => top(l.ord.map(lg), 1), top3Ord: (l) => top(l.ord.map(lg), 3),
  top3Rel: (l) => top(l.rel.map(lg), 3), maxIdf: (l) => top(l.idfcov, 1), top3Idf: (l) => top(l.idfcov, 3), maxQcov: (l) => top(l.qcov, 1),
  meanOrd: (l) => top(l.ord.map(lg), l.ord.length), gapOrd: (l) => top(l.ord.map(lg), 1) - top(l.ord.map(lg), l.ord.length),
  maxSpan: (l) => top(l.span, 1), maxNear: (l) => top(l.near, 1),
};
const vec = (l) => FEATS.map((f) => fx[f](l));
const names = ['cisi', 'cranfield', 'med', 'nfcorpus', 'scifact'];
const isPos = (l) => l.src === l.corpus && l.lab.some(Boolean);
function fit(data) {
  const X = data.map((d) => d.x), y = data.map((d) => d.y), w = data.map((d) => d.w);
  const n = FEATS.length; const beta = new Array(n + 1).fill(0);
  for (let it = 0; it < 3000; it++) {
    const g = new Array(n + 1).fill(0); let W = 0;
    for (let i = 0; i < X.length; i++) { let z = beta[n]; for (let j = 0; j < n; j++) z += beta[j] * X[i][j]; const p = 1 / (1 + Math.exp(-z)); const e = (p - y[i]) * w[i]; for (let j = 0; j < n; j++) g[j] += e * X[i][j]; g[n] += e; W += w[i]; }
    for (let j = 0; j <= n; j++) beta[j] -= 0.5 * (g[j] / W + (j < n ? 1e-3 * beta[j] : 0));
  }
  return beta;
}
const score = (b, x) => { let z = b[x.length]; for (let j = 0; j < x.length; j++) z += b[j] * x[j]; return z; };
function dataset(lists) {
  // each corpus counts equally; within corpus, positives and negatives weigh equally
  const out = [];
  for (const C of names) {
    const pos = lists.filter((l) => l.corpus === C && isPos(l) && l.rel.length);
    const neg = lists.filter((l) => l.corpus === C && !isPos(l) && l.rel.length);
    if (!pos.length || !neg.length) continue;
    for (const l of pos) out.push({ x: vec(l), y: 1, w: 1 / pos.length });
    for (const l of neg) out.push({ x: vec(l), y: 0, w: 1 / neg.length });
  }
  return out;
}
const rows = [];
let sumJ = 0, sumR = 0;
for (const H of names) {
  const train = L.filter((l) => l.corpus !== H && l.src !== H);
  const b = fit(dataset(train));
  let t = Infinity;
  for (const C of names.filter((n) => n !== H)) {
    const v = train.filter((l) => l.corpus === C && isPos(l)).map((l) => score(b, vec(l))).sort((a, c) => a - c);
    t = Math.min(t, v[Math.floor(Q * v.length)]);
  }
  const rp = L.filter((l) => l.corpus === H && isPos(l));
  const j = L.filter((l) => l.corpus === H && l.src !== H);
  const re = rp.filter((l) => score(b, vec(l)) < t).length / rp.length;
  const je = j.filter((l) => !l.rel.length || score(b, vec(l)) < t).length / j.length;
  // bound: in-domain fit with labels known
  const bb = fit(dataset(L.filter((l) => l.corpus === H)));
  const v = rp.map((l) => score(bb, vec(l))).sort((a, c) => a - c); const tb = v[Math.floor(0.1 * v.length)];
  const jb = j.filter((l) => !l.rel.length || score(bb, vec(l)) < tb).length / j.length;
  rows.push(`${H}: real ${(100 * re).toFixed(0)}% junk ${(100 * je).toFixed(0)}% (bound ${(100 * jb).toFixed(0)}%)`);
  sumJ += je; sumR += re;
}
console.log(FEATS.join(','), '|', rows.join(' | '), '| mean junk', (100 * sumJ / 5).toFixed(1));
if (process.env.PAIRS) for (const H of names) {
  const train = L.filter((l) => l.corpus !== H && l.src !== H);
  const b = fit(dataset(train));
  let t = Infinity;
  for (const C of names.filter((n) => n !== H)) {
    const v = train.filter((l) => l.corpus === C && isPos(l)).map((l) => score(b, vec(l))).sort((a, c) => a - c);
    t = Math.min(t, v[Math.floor(Q * v.length)]);
  }
  console.log(H, names.filter((s) => s !== H).map((s) => { const j = L.filter((l) => l.corpus === H && l.src === s); return `${s} ${(100 * j.filter((l) => !l.rel.length || score(b, vec(l)) < t).length / j.length).toFixed(0)}%`; }).join(' '));
}

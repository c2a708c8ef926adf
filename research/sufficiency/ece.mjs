import { readFileSync } from 'node:fs';
const L = JSON.parse(readFileSync('/tmp/lists.json', 'utf8')).filter((l) => l.src === l.corpus && l.ord);
const lg = (p) => { const c = Math.min(Math.max(p, 1e-9), 1 - 1e-9); return Math.log(c / (1 - c)); };
const names = ['cisi', 'cranfield', 'med', 'nfcorpus', 'scifact'];
const top = (a, k) => { const s = [...a].sort((x, y) => y - x); let m = 0; for (let i = 0; i < k; i++) m += s[Math.min(i, s.length - 1)]; return m / k; };
const MODE = process.env.MODE ?? 'z';
function rowsOf(ls) { const out = []; for (const l of ls) { const zs = l.ord.map(lg); const mx = top(zs, 1), t3 = top(zs, 3), mr = top(l.rel.map(lg), 1);
  for (let i = 0; i < zs.length; i++) { const srt = [...zs].sort((a, b) => b - a); const rank = srt.indexOf(zs[i]) + 1; const x = MODE === 'rank' ? [zs[i], zs[i] - mx, Math.log(rank), mr, t3, srt[Math.min(9, srt.length - 1)]] : MODE === 'rank2' ? [zs[i], Math.log(rank), lg(l.rel[i]), mr, t3, srt[Math.min(4, srt.length - 1)], srt[Math.min(9, srt.length - 1)]] : MODE === 'z' ? [zs[i]] : MODE === 'zr' ? [zs[i], lg(l.rel[i])] : [zs[i], mx, t3, mr]; out.push({ x, y: l.lab[i] ? 1 : 0, c: l.corpus }); } } return out; }
function fit(rows) { const n = rows[0].x.length; const b = new Array(n + 1).fill(0); const W = {}; for (const r of rows) W[r.c] = (W[r.c] ?? 0) + 1;
  for (let it = 0; it < 4000; it++) { const g = new Array(n + 1).fill(0); for (const r of rows) { let z = b[n]; for (let j = 0; j < n; j++) z += b[j] * r.x[j]; const e = (1 / (1 + Math.exp(-z)) - r.y) / W[r.c]; for (let j = 0; j < n; j++) g[j] += e * r.x[j]; g[n] += e; } for (let j = 0; j <= n; j++) b[j] -= 0.5 * g[j] / 4; } return b; }
const pr = (b, x) => { let z = b[x.length]; for (let j = 0; j < x.length; j++) z += b[j] * x[j]; return 1 / (1 + Math.exp(-z)); };
function ece(ps, ys) { const B = Array.from({ length: 10 }, () => [0, 0, 0]); ps.forEach((p, i) => { const k = Math.min(9, Math.floor(p * 10)); B[k][0]++; B[k][1] += p; B[k][2] += ys[i]; }); let e = 0; for (const [n, s, y] of B) if (n) e += Math.abs(s - y) / ps.length * 1; return e; }
// note: ECE = sum_b n_b/N |mean p - mean y| = sum_b |sum p - sum y| / N
const out = [];
for (const H of names) { const b = fit(rowsOf(L.filter((l) => l.corpus !== H))); const t = rowsOf(L.filter((l) => l.corpus === H)); const ps = t.map((r) => pr(b, r.x)); out.push(`${H} ${ece(ps, t.map((r) => r.y)).toFixed(3)}`); }
const raw = names.map((H) => { const t = L.filter((l) => l.corpus === H); const ps = t.flatMap((l) => l.ord), ys = t.flatMap((l) => l.lab.map(Number)); return `${H} ${ece(ps, ys).toFixed(3)}`; });
console.log(MODE, out.join(' | '), '|| raw ranking:', raw.join(' '));
// Held-out queries (2-fold within each collection, one calibration for all five collections)
{
  const fold = (l) => (Number.parseInt(l.q.replace(/\D/g, '') || '0', 10) % 2);
  const res = [];
  const acc = Object.fromEntries(names.map((n) => [n, { p: [], y: [] }]));
  for (const f of [0, 1]) {
    const b = fit(rowsOf(L.filter((l) => fold(l) !== f)));
    for (const H of names) { const t = rowsOf(L.filter((l) => l.corpus === H && fold(l) === f)); for (const r of t) { acc[H].p.push(pr(b, r.x)); acc[H].y.push(r.y); } }
  }
  console.log(MODE, 'query-2fold:', names.map((H) => `${H} ${ece(acc[H].p, acc[H].y).toFixed(3)}`).join(' '));
}

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const a = createRequire(import.meta.url)('./build/Release/relevance_gate.node');
const N = Number(process.argv[2]); const mode = process.argv[3] ?? 'str';
const dir='../shared/data/scifact/';
const docs = readFileSync(dir+'docs.jsonl','utf8').trim().split('\n').map(l=>JSON.parse(l));
const queries = readFileSync(dir+'queries.jsonl','utf8').trim().split('\n').map(l=>JSON.parse(l).text).slice(0,100);
const pool = docs.filter(d=>{const n=d.text.split(/\s+/).length; return n>=150&&n<=260;});
const batches=[]; for(let i=0;i<64;i++){const t=[],ti=[];for(let j=0;j<20;j++){const d=pool[(i*20+j)%pool.length]; t.push(mode==='buf'?Buffer.from(d.text):d.text); ti.push(d.title);} batches.push({q:queries[i%100],t,ti});}
const b = new a.FeatureCorpusStatsBuilder(); for (const d of docs) b.add(d.title, d.text); const r=b.finish();
const st = new a.FeatureCorpusStats(r.terms, r.dfBody, r.dfTitle, r.dfAny, r.docCount, r.totalBodyLength/r.docCount, r.totalTitleLength/r.docCount);
const c0=process.cpuUsage(); const t0=process.hrtime.bigint();
for (let i=0;i<N;i++){const x=batches[i%64]; a.featuresExtract(st,x.q,mode==='notitle'?null:x.ti,x.t,null);}
if (N) { const c=process.cpuUsage(c0); console.error(mode, "wall us/pair", (Number(process.hrtime.bigint()-t0)/1e3/N/20).toFixed(2), "cpu us/pair", ((c.user+c.system)/N/20).toFixed(2)); }

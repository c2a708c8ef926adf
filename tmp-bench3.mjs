import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const a = createRequire(import.meta.url)('./build/Release/relevance_gate.node');
const dir='../shared/data/scifact/';
const docs = readFileSync(dir+'docs.jsonl','utf8').trim().split('\n').map(l=>JSON.parse(l));
const queries = readFileSync(dir+'queries.jsonl','utf8').trim().split('\n').map(l=>JSON.parse(l).text).slice(0,100);
const pool = docs.filter(d=>{const n=d.text.split(/\s+/).length; return n>=150&&n<=260;});
const batches=[]; for(let i=0;i<64;i++){const t=[],tb=[],ti=[];for(let j=0;j<20;j++){const d=pool[(i*20+j)%pool.length]; t.push(d.text); tb.push(Buffer.from(d.text)); ti.push(d.title);} batches.push({q:queries[i%100],t,tb,ti});}
console.log('two-byte-ish texts (non-latin1):', pool.slice(0,1280).filter(d=>/[^\x00-\xff]/.test(d.text)).length, '/ 1280; non-ascii', pool.slice(0,1280).filter(d=>/[^\x00-\x7f]/.test(d.text)).length);
const b = new a.FeatureCorpusStatsBuilder(); for (const d of docs) b.add(d.title, d.text); const r=b.finish();
const st = new a.FeatureCorpusStats(r.terms, r.dfBody, r.dfTitle, r.dfAny, r.docCount, r.totalBodyLength/r.docCount, r.totalTitleLength/r.docCount);
function m(name, f){ let best=1e9; let i=0; for(let rep=0;rep<80;rep++){const t=process.hrtime.bigint(); for(let j=0;j<64;j++) f(batches[(i++)%64]); best=Math.min(best, Number(process.hrtime.bigint()-t)/1e3/64/20);} console.log(name, best.toFixed(2), 'us/pair (min round)'); }
m('strings+titles', x=>a.featuresExtract(st,x.q,x.ti,x.t,null));
m('strings', x=>a.featuresExtract(st,x.q,null,x.t,null));
m('buffers', x=>a.featuresExtract(st,x.q,null,x.tb,null));

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const a = createRequire(import.meta.url)('./build/Release/relevance_gate.node');
const docs = readFileSync('../shared/data/scifact/docs.jsonl','utf8').trim().split('\n').map(l=>JSON.parse(l));
const long = docs.filter((d)=>{const w=d.text.split(' ').length; return w>170 && w<260;}).slice(0,20);
const texts = long.map(d=>d.text);
const bufs = texts.map(t=>Buffer.from(t));
const ascii = texts.map(t=>t.replace(/[^\x00-\x7f]/g,' '));
console.log('non-ascii texts', texts.filter(t=>/[^\x00-\x7f]/.test(t)).length);
const b = new a.FeatureCorpusStatsBuilder(); for (const d of docs) b.add(d.title, d.text); const r=b.finish();
const st = new a.FeatureCorpusStats(r.terms, r.dfBody, r.dfTitle, r.dfAny, r.docCount, r.totalBodyLength/r.docCount, r.totalTitleLength/r.docCount);
const q = 'vitamin D deficiency increases the risk of cardiovascular disease in older adults';
function t(name, f){ for(let rep=0;rep<3;rep++){const N=3000; const s=process.hrtime.bigint(); for(let i=0;i<N;i++) f(); const dt=Number(process.hrtime.bigint()-s)/1e3/N; if(rep==2) console.log(name, (dt/20).toFixed(2),'us/pair');} }
t('strings', ()=>a.featuresExtract(st,q,null,texts,null));
t('ascii strings', ()=>a.featuresExtract(st,q,null,ascii,null));
t('buffers', ()=>a.featuresExtract(st,q,null,bufs,null));
t('empty', ()=>a.featuresExtract(st,q,null,texts.map(()=>''),null));

import { readFileSync } from 'node:fs';
import { buildCorpusStats, extractFeatures } from './src/features/index.js';
const docs = readFileSync('../shared/data/scifact/docs.jsonl','utf8').trim().split('\n').map(l=>JSON.parse(l));
const stats = await buildCorpusStats('../shared/data/scifact/docs.jsonl');
const long = docs.filter((d:any)=>{const w=d.text.split(' ').length; return w>170 && w<260;}).slice(0,20).map((d:any)=>({title:d.title,text:d.text}));
console.log('k', long.length, 'avg words', long.reduce((a:number,p:any)=>a+p.text.split(' ').length,0)/long.length);
const q = 'vitamin D deficiency increases the risk of cardiovascular disease in older adults';
for (let r=0;r<3;r++){ const N=3000; const t=process.hrtime.bigint(); for(let i=0;i<N;i++) extractFeatures(stats,q,long); const dt=Number(process.hrtime.bigint()-t)/1e3/N; console.log('per call us', dt.toFixed(1), 'per pair', (dt/20).toFixed(2)); }

import { join } from 'node:path';
import { Tokenizer } from 'tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildContextAsync, estimateTokens, type GatedContext, neutralizeMarkup } from '../../src/context/index.js';
import { type Collection, createBm25FirstStage, docPassage, loadCollection } from '../../src/tooling/eval/index.js';
import { createGate, type GateResult, loadFastPathScorer } from '../../src/index.js';

const DATA = join(process.cwd(), '..', 'shared', 'data');
/** A GPT-2 style byte-level BPE vocabulary (RoBERTa's), as LLM tokenizers are. */
const BPE_TOKENIZER = join(process.cwd(), '..', 'shared', 'tokenizers', 'roberta-large-mnli', 'tokenizer.json');
const BUDGET = 400;

let tokenizer: Tokenizer;
const countTokens = async (text: string): Promise<number> =>
  (await tokenizer.encode(text, null, { addSpecialTokens: false })).getIds().length;

let med: Collection;
let results: GateResult[];

beforeAll(async () => {
  tokenizer = Tokenizer.fromFile(BPE_TOKENIZER);
  med = loadCollection(join(DATA, 'med'));
  const bm25 = createBm25FirstStage(med);
  const scorer = await loadFastPathScorer('models/fast-path-lexical');
  // 'related' mode keeps more than the budget holds, so the budget decides.
  const gate = createGate({ scorer, policy: { mode: 'related' } });
  results = [];
  for (const q of med.queries.slice(0, 5)) {
    const passages = bm25.search(q.text, 30).map((c) => {
      const doc = med.docById.get(c.docId)!;
      return { id: doc.id, text: docPassage(doc) };
    });
    results.push(await gate.filter(q.text, passages));
  }
});

/** The entries of a block as they appear in the prompt (escaping guarantees no inner delimiters). */
function entriesOf(context: GatedContext, block: 'accepted_evidence' | 'conflicting_evidence'): string[] {
  const body = context.user.split(`<${block}>\n`)[1].split(`\n</${block}>`)[0];
  return body === '(none)' ? [] : (body.match(/<passage id="[^"]*">\n[\s\S]*?\n<\/passage>/g) ?? []);
}

describe('token budget on MED passages gated by the shipped fast path, counted by a BPE tokenizer', () => {
  it("packs whole passages in the gate's order (the shipped model's ranking signal), each charged its real token count, within the budget", async () => {
    let dropped = 0;
    for (const result of results) {
      const context = await buildContextAsync(result, { maxTokens: BUDGET, countTokens });
      const packed = [...context.accepted, ...context.conflicting];
      expect(context.tokens.passages).toBeLessThanOrEqual(BUDGET);
      expect(context.tokens.passages).toBe(packed.reduce((sum, p) => sum + p.tokens, 0));
      const entries = entriesOf(context, 'accepted_evidence');
      expect(entries).toHaveLength(context.accepted.length);
      for (const [i, entry] of entries.entries()) expect(await countTokens(entry)).toBe(context.accepted[i].tokens);
      for (const p of packed) {
        // Never cut: the prompt holds the whole passage text.
        expect(p.truncated).toBe(false);
        expect(p.text).toBe(p.item.passage.text);
        expect(context.user).toContain(neutralizeMarkup(p.text));
      }
      // The shipped model declares a ranking blend, so the gate (and the packer) order by `ranking`.
      const ranks = context.accepted.map((p) => p.item.signals?.ranking);
      for (const r of ranks) expect(r).toBeTypeOf('number');
      for (let i = 1; i < ranks.length; i++) expect(ranks[i - 1]!).toBeGreaterThanOrEqual(ranks[i]!);
      // ... which is the order the gate returned them in
      const gateOrder = result.included.map((item) => item.passage.id);
      const packedOrder = context.accepted.map((p) => p.item.passage.id);
      expect(packedOrder).toEqual(gateOrder.filter((id) => packedOrder.includes(id)));
      // Greedy: whatever was dropped for the budget did not fit in what was left at the end.
      for (const d of context.dropped) {
        expect(d.reason).toBe('budget');
        expect(d.tokens).toBeGreaterThan(BUDGET - context.tokens.passages);
      }
      dropped += context.dropped.length;
      expect(context.accepted.length).toBeGreaterThan(0);
    }
    expect(dropped).toBeGreaterThan(0);
  });

  it('truncate: true cuts the first passage that does not fit at the last whole word that fits', async () => {
    let cuts = 0;
    for (const result of results) {
      const context = await buildContextAsync(result, { maxTokens: BUDGET, countTokens, truncate: true });
      expect(context.tokens.passages).toBeLessThanOrEqual(BUDGET);
      const cut = context.accepted.filter((p) => p.truncated);
      expect(cut.length).toBeLessThanOrEqual(1);
      if (cut.length === 0) continue;
      cuts++;
      const p = cut[0];
      expect(context.accepted.at(-1)).toBe(p);
      const kept = p.text.slice(0, -1);
      expect(p.text.endsWith('…')).toBe(true);
      expect(p.item.passage.text.startsWith(kept)).toBe(true);
      const rest = p.item.passage.text.slice(kept.length);
      expect(rest).toMatch(/^\s/);
      // One more word would not have fitted.
      const longer = kept + rest.match(/^\s+\S+/)![0];
      const entry = `<passage id="${p.id}">\n${neutralizeMarkup(`${longer}…`)}\n</passage>`;
      expect(context.tokens.passages - p.tokens + (await countTokens(entry))).toBeGreaterThan(BUDGET);
    }
    expect(cuts).toBeGreaterThan(0);
  });
});

describe('estimateTokens', () => {
  it('never counts fewer tokens than the BPE tokenizer on the first 300 documents of every shared collection', async () => {
    for (const name of ['med', 'cranfield', 'cisi', 'scifact', 'nfcorpus']) {
      const collection = name === 'med' ? med : loadCollection(join(DATA, name));
      let estimated = 0;
      let real = 0;
      for (const doc of collection.docs.slice(0, 300)) {
        const text = docPassage(doc);
        const e = estimateTokens(text);
        const r = await countTokens(text);
        expect(e, `${name}/${doc.id}`).toBeGreaterThanOrEqual(r);
        estimated += e;
        real += r;
      }
      // …and stays within 2x in total, so the budget is not wasted.
      expect(estimated / real, name).toBeLessThan(2);
    }
  });

  it('counts word pieces, punctuation and non-ASCII code points as documented', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('   \n\t')).toBe(0);
    expect(estimateTokens('word')).toBe(1);
    expect(estimateTokens('words')).toBe(2);
    expect(estimateTokens('relevance gate')).toBe(3 + 1);
    expect(estimateTokens('a, b.')).toBe(4);
    expect(estimateTokens('東京')).toBe(2);
    expect(estimateTokens('😀!')).toBe(2);
  });
});

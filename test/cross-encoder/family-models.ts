/**
 * Generated SPEED/SHAPE models of each family (random weights, NOT relevance models) at test sizes
 * (2 layers, small hidden) with the family's real I/O contract and real tokenizer/config files
 * from ../shared/tokenizers, plus an INDEPENDENT reference: the `tokenizers` library's own
 * `encode` and one plain onnxruntime session fed one sequence per run.
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import {
  type CrossEncoderModelSpec,
  type ModelPresetName,
  type WriteCrossEncoderModelDirOptions,
  writeCrossEncoderModelDir,
} from '../../src/tooling/model-gen/index.js';
import { packageRoot } from '../../src/util/package-root.js';

export const SHARED_TOKENIZERS = join(packageRoot(), '..', 'shared', 'tokenizers');
export const tokenizerFolder = (name: string): string => join(SHARED_TOKENIZERS, name);

/** How a family is written for the tests; `standInTokenizer` is copied when the real one is not at hand. */
export interface FamilyCase {
  readonly name: string;
  readonly preset: ModelPresetName | CrossEncoderModelSpec;
  readonly options: WriteCrossEncoderModelDirOptions;
  /** tokenizer.json copied into the folder (the family's real one is too large to obtain here). */
  readonly standInTokenizer?: string;
}

const MINILM = tokenizerFolder('ms-marco-MiniLM-L-6-v2');
const ROBERTA = tokenizerFolder('roberta-large-mnli');

/**
 * BERT, RoBERTa and ModernBERT with their real tokenizer files; XLM-R (bge-reranker-large config)
 * with RoBERTa's BPE tokenizer.json standing in (same <s>=0 <pad>=1 </s>=2; its ids are valid XLM-R
 * ids) and DeBERTa-v3 (the injection classifier's config) with the BERT WordPiece tokenizer.json
 * standing in (same `[CLS] A [SEP] B [SEP]` template; ids < 30522 < 128100): contract only.
 */
export const FAMILY_CASES: readonly FamilyCase[] = [
  { name: 'bert', preset: 'minilm-l6', options: { layers: 2, hidden: 64, tokenizerDir: MINILM } },
  { name: 'roberta', preset: 'roberta-nli', options: { layers: 2, hidden: 64, tokenizerDir: ROBERTA } },
  {
    name: 'modernbert',
    preset: 'modernbert-reranker',
    options: { layers: 2, hidden: 64, tokenizerDir: tokenizerFolder('modernbert-large') },
  },
  {
    name: 'xlm-roberta',
    preset: 'xlmr-reranker',
    options: { layers: 2, hidden: 32, tokenizerDir: tokenizerFolder('bge-reranker-large') },
    standInTokenizer: join(ROBERTA, 'tokenizer.json'),
  },
  {
    name: 'deberta-v2',
    preset: 'deberta-injection',
    options: { layers: 2, hidden: 64, tokenizerDir: tokenizerFolder('deberta-v3-base-injection-finetune') },
    standInTokenizer: join(MINILM, 'tokenizer.json'),
  },
];

/** Writes a family case into `dir` (seeded), adding the stand-in tokenizer when needed. */
export async function writeFamily(
  dir: string,
  c: FamilyCase,
  extra: WriteCrossEncoderModelDirOptions = {},
): Promise<string> {
  const info = await writeCrossEncoderModelDir(dir, c.preset, { seed: 7, ...c.options, ...extra });
  if (c.standInTokenizer !== undefined) await copyFile(c.standInTokenizer, join(info.dir, 'tokenizer.json'));
  return info.dir;
}

export type ReferenceInput = 'query-passage' | 'passage-query' | 'passage';

/** The reference: tokenizers' own encode with truncation, one plain session, one sequence per run. */
export class Reference {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly session: ort.InferenceSession,
    private readonly padTokenId: number,
    private readonly robertaPositions: boolean,
  ) {}

  static async open(
    dir: string,
    maxLength: number,
    options: { file?: string; padTokenId?: number; robertaPositions?: boolean; onlyPassage?: boolean } = {},
  ): Promise<Reference> {
    const tokenizer = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
    tokenizer.setTruncation(maxLength, {
      // (a const enum in the typings, plain strings at run time)
      strategy: (options.onlyPassage === true ? 'OnlyFirst' : 'LongestFirst') as never,
    });
    const session = await ort.InferenceSession.create(join(dir, options.file ?? join('onnx', 'model.onnx')), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
    return new Reference(tokenizer, session, options.padTokenId ?? 0, options.robertaPositions ?? false);
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  async encode(query: string, passage: string, input: ReferenceInput): Promise<{ ids: number[]; typeIds: number[] }> {
    const enc =
      input === 'passage'
        ? await this.tokenizer.encode(passage)
        : input === 'passage-query'
          ? await this.tokenizer.encode(passage, query)
          : await this.tokenizer.encode(query, passage);
    return { ids: enc.getIds(), typeIds: enc.getTypeIds() };
  }

  /** Logits row of one unpadded sequence; every declared input fed in its declared dtype. */
  async run(ids: readonly number[], typeIds: readonly number[]): Promise<number[]> {
    const n = ids.length;
    const values: Record<string, number[]> = {
      input_ids: [...ids],
      attention_mask: ids.map(() => 1),
      token_type_ids: [...typeIds],
      position_ids: ids.map((_, i) => (this.robertaPositions ? this.padTokenId + 1 + i : i)),
    };
    const feeds: Record<string, ort.Tensor> = {};
    for (const meta of this.session.inputMetadata) {
      const v = values[meta.name];
      if (v === undefined) throw new Error(`reference cannot feed ${meta.name}`);
      feeds[meta.name] =
        meta.isTensor && meta.type === 'int32'
          ? new ort.Tensor('int32', Int32Array.from(v), [1, n])
          : new ort.Tensor(
              'int64',
              BigInt64Array.from(v, (x) => BigInt(x)),
              [1, n],
            );
    }
    const out = await this.session.run(feeds);
    const first = out[this.session.outputNames[0]];
    return Array.from(first.data as Float32Array);
  }

  async score(query: string, passage: string, input: ReferenceInput = 'query-passage'): Promise<number[]> {
    const enc = await this.encode(query, passage, input);
    return this.run(enc.ids, enc.typeIds);
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/** Softmax of a row in float64, computed here independently of the loader. */
export function softmax(row: readonly number[]): number[] {
  const max = Math.max(...row);
  const e = row.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

export { spearman } from '../models/helpers.js';

/** Pairs grouped into requests by query (input order kept), so the tier batches across them. */
export function requestsOf(
  pairs: readonly { query: string; passage: string }[],
): Array<{ query: string; passages: string[]; index: number[] }> {
  const byQuery = new Map<string, { query: string; passages: string[]; index: number[] }>();
  pairs.forEach((p, i) => {
    let r = byQuery.get(p.query);
    if (r === undefined) {
      r = { query: p.query, passages: [], index: [] };
      byQuery.set(p.query, r);
    }
    r.passages.push(p.passage);
    r.index.push(i);
  });
  return [...byQuery.values()];
}

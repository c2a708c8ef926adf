/**
 * Folder layouts: the slow-tokenizer layout of cross-encoder/ms-marco-TinyBERT-L-2-v2 (vocab.txt
 * + tokenizer_config.json + config.json, no tokenizer.json), stale files, and the `models` CLI
 * with the family presets. Speed/shape models: random weights, scores mean nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import ort from 'onnxruntime-node';
import { bertNormalizer, bertPreTokenizer, bertProcessing, Tokenizer, WordPiece } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register as registerModelsCommand } from '../../src/cli/commands/models.js';
import { InvalidArgumentError } from '../../src/errors.js';
import {
  defaultTokenizerJsonPath,
  TokenizerSourceError,
  writeCrossEncoderModelDir,
} from '../../src/tooling/model-gen/index.js';
import {
  encodePairs,
  runLogits,
  SESSION_OPTIONS,
  SHARED_TOKENIZERS,
  scifactPairs,
  tokenizerFolder,
} from './helpers.js';

const TINYBERT = tokenizerFolder('ms-marco-TinyBERT-L-2-v2');
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-model-layout-'));
});

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** The slow BertTokenizer a vocab.txt folder implies, built with the `tokenizers` package. */
async function wordPieceFromVocab(vocabPath: string): Promise<Tokenizer> {
  const tokenizer = new Tokenizer(await WordPiece.fromFile(vocabPath, { unkToken: '[UNK]' }));
  tokenizer.setNormalizer(bertNormalizer({ lowercase: true }));
  tokenizer.setPreTokenizer(bertPreTokenizer());
  tokenizer.setPostProcessor(bertProcessing(['[SEP]', 102], ['[CLS]', 101]));
  return tokenizer;
}

describe('TinyBERT slow-tokenizer layout', () => {
  it('copies vocab.txt, tokenizer_config.json and special_tokens_map.json, no tokenizer.json; merges the real config', async () => {
    const info = await writeCrossEncoderModelDir(join(root, 'tinybert'), 'tinybert-l2', { tokenizerDir: TINYBERT });
    expect(readdirSync(info.dir).sort()).toEqual(
      ['README.md', 'config.json', 'onnx', 'special_tokens_map.json', 'tokenizer_config.json', 'vocab.txt'].sort(),
    );
    expect(readdirSync(join(info.dir, 'onnx'))).toEqual(['model.onnx']);
    for (const f of ['vocab.txt', 'tokenizer_config.json', 'special_tokens_map.json']) {
      expect(readFileSync(join(info.dir, f)).equals(readFileSync(join(TINYBERT, f))), f).toBe(true);
    }
    const real = JSON.parse(readFileSync(join(TINYBERT, 'config.json'), 'utf8'));
    const config = JSON.parse(readFileSync(join(info.dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      model_type: 'bert',
      architectures: ['BertForSequenceClassification'],
      hidden_size: 128,
      num_hidden_layers: 2,
      vocab_size: real.vocab_size,
      id2label: real.id2label,
      sbert_ce_default_activation_function: real.sbert_ce_default_activation_function,
      relevance_gate: { tokenizer: { layout: 'vocab-only', files: info.tokenizerFiles } },
    });
    expect(readFileSync(join(info.dir, 'README.md'), 'utf8')).toContain(
      'speed/shape model: random weights, scores mean nothing',
    );
  });

  it('the vocab.txt tokenizer gives the tokenizer.json ids, and the graph runs on them', async () => {
    const info = await writeCrossEncoderModelDir(join(root, 'tinybert-run'), 'tinybert-l2', {
      tokenizerDir: TINYBERT,
      layers: 1,
    });
    const slow = await wordPieceFromVocab(join(info.dir, 'vocab.txt'));
    const fast = Tokenizer.fromFile(defaultTokenizerJsonPath());
    const pairs = scifactPairs(8);
    const a = await encodePairs(slow, pairs, 128);
    const b = await encodePairs(fast, pairs, 128);
    expect(a).toEqual(b);
    const s = await ort.InferenceSession.create(info.modelPath, SESSION_OPTIONS);
    try {
      const out = await runLogits(s, a, 128);
      expect(out.every((r) => r.length === 1 && Number.isFinite(r[0]))).toBe(true);
    } finally {
      await s.release();
    }
  });

  it("tokenizerLayout 'vocab-only' without a folder derives vocab.txt from the package tokenizer (= TinyBERT's file)", async () => {
    const info = await writeCrossEncoderModelDir(join(root, 'derived'), 'tiny', { tokenizerLayout: 'vocab-only' });
    expect(existsSync(join(info.dir, 'tokenizer.json'))).toBe(false);
    expect(readFileSync(join(info.dir, 'vocab.txt')).equals(readFileSync(join(TINYBERT, 'vocab.txt')))).toBe(true);
  });

  it('rewriting a folder in another layout removes the stale tokenizer.json and variant files', async () => {
    const dir = join(root, 'rewrite');
    await writeCrossEncoderModelDir(dir, 'tiny', { variants: ['quantized'] });
    expect(existsSync(join(dir, 'tokenizer.json'))).toBe(true);
    expect(existsSync(join(dir, 'onnx', 'model_quantized.onnx'))).toBe(true);
    await writeCrossEncoderModelDir(dir, 'tiny', { tokenizerDir: TINYBERT });
    expect(existsSync(join(dir, 'tokenizer.json'))).toBe(false);
    expect(existsSync(join(dir, 'onnx', 'model_quantized.onnx'))).toBe(false);
  });

  it('refuses a vocab-only layout without vocab.txt and a vocabulary larger than the model', async () => {
    await expect(
      writeCrossEncoderModelDir(join(root, 'no-vocab'), 'roberta-nli', {
        layers: 1,
        hidden: 32,
        tokenizerDir: tokenizerFolder('roberta-large-mnli'),
        tokenizerLayout: 'vocab-only',
      }),
    ).rejects.toBeInstanceOf(TokenizerSourceError);
    await expect(
      writeCrossEncoderModelDir(join(root, 'too-big'), 'modernbert-reranker', {
        layers: 1,
        hidden: 32,
        tokenizerJsonPath: join(tokenizerFolder('roberta-large-mnli'), 'tokenizer.json'),
      }),
    ).resolves.toBeDefined(); // 50265 ids fit 50368
    await expect(
      writeCrossEncoderModelDir(
        join(root, 'too-small'),
        {
          name: 'small-vocab-roberta',
          family: 'roberta',
          numLayers: 1,
          hiddenSize: 32,
          numHeads: 2,
          intermediateSize: 64,
          vocabSize: 1000,
          maxPositionEmbeddings: 514,
          typeVocabSize: 1,
          tokenTypeInput: false,
          outputs: [{ name: 'logits', size: 1 }],
          layerNormEps: 1e-5,
          initStd: 'fan-in',
          description: 'too small for the roberta vocabulary',
        },
        { tokenizerJsonPath: join(tokenizerFolder('roberta-large-mnli'), 'tokenizer.json') },
      ),
    ).rejects.toBeInstanceOf(TokenizerSourceError);
  });
});

async function runCli(args: string[]): Promise<string> {
  const program = new Command().exitOverride();
  registerModelsCommand(program);
  const writes: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await program.parseAsync(['models', ...args], { from: 'user' });
  } finally {
    process.stdout.write = write;
  }
  return writes.join('');
}

describe('models CLI with family presets', () => {
  it('--preset roberta-nli,modernbert-reranker with test sizes, paired tokenizers and quantized variants', async () => {
    const out = join(root, 'cli');
    const text = await runCli([
      '--out',
      out,
      '--preset',
      'roberta-nli,modernbert-reranker',
      '--layers',
      '1',
      '--hidden',
      '32',
      '--tokenizers-root',
      SHARED_TOKENIZERS,
      '--variants',
      'qint8_avx512_vnni,quint8_avx2',
      '--input-dtype',
      'int32',
    ]);
    expect(text).toMatch(/NOT a relevance model/);
    for (const name of ['roberta-nli', 'modernbert-reranker']) {
      const dir = join(out, name);
      for (const f of [
        'onnx/model.onnx',
        'onnx/model_qint8_avx512_vnni.onnx',
        'onnx/model_quint8_avx2.onnx',
        'tokenizer.json',
      ]) {
        expect(existsSync(join(dir, f)), `${name}/${f}`).toBe(true);
      }
      const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      expect(config.num_hidden_layers).toBe(1);
      expect(config.relevance_gate.inputs[0]).toMatchObject({ name: 'input_ids', dtype: 'int32' });
    }
    expect(existsSync(join(out, 'tinybert-l2'))).toBe(false);
  }, 30_000);

  it('rejects unknown presets, heads and variants', async () => {
    await expect(runCli(['--out', join(root, 'x'), '--preset', 'gpt-9'])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(runCli(['--out', join(root, 'x'), '--preset', 'roberta-nli', '--head', 'sentiment'])).rejects.toThrow(
      /head/,
    );
    await expect(runCli(['--out', join(root, 'x'), '--preset', 'roberta-nli', '--variants', 'fp16'])).rejects.toThrow(
      /variant/,
    );
    await expect(runCli(['--out', join(root, 'x'), '--preset', 'roberta-nli', '--layers', '0'])).rejects.toThrow(
      /positive integer/,
    );
  });
});

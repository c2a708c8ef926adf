/**
 * The runnable example of docs/signal-composition.md, run as written against generated
 * SPEED/SHAPE graphs (the folders the documented `relevance-gate models` command writes), with the
 * package name pointed at this checkout. Checks what it prints: two rounds of three routed pairs
 * carrying all four signals, the second answered from the cache.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { packageRoot } from '../../src/util/package-root.js';

const ROOT = packageRoot();
const TOKENIZERS = join(ROOT, '..', 'shared', 'tokenizers');
let dir: string;

function exampleSource(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'signal-composition.md'), 'utf8');
  const block = /<!-- runnable-example:start -->\s*```ts\n([\s\S]*?)```\s*<!-- runnable-example:end -->/.exec(doc);
  if (block === null) throw new Error('docs/signal-composition.md has no runnable example block');
  return block[1];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rg-composite-doc-'));
  const models = join(dir, 'models');
  // What `relevance-gate models --preset minilm-l6,roberta-nli,deberta-injection --tokenizers-root
  // ../shared/tokenizers --layers 1 --hidden 32` writes, plus the documented tokenizer copy.
  const size = { layers: 1, hidden: 32 };
  await writeCrossEncoderModelDir(join(models, 'minilm-l6'), 'minilm-l6', {
    ...size,
    tokenizerDir: join(TOKENIZERS, 'ms-marco-MiniLM-L-6-v2'),
  });
  await writeCrossEncoderModelDir(join(models, 'roberta-nli'), 'roberta-nli', {
    ...size,
    tokenizerDir: join(TOKENIZERS, 'roberta-large-mnli'),
  });
  await writeCrossEncoderModelDir(join(models, 'deberta-injection'), 'deberta-injection', {
    ...size,
    tokenizerDir: join(TOKENIZERS, 'deberta-v3-base-injection-finetune'),
  });
  copyFileSync(
    join(TOKENIZERS, 'modernbert-large', 'tokenizer.json'),
    join(models, 'deberta-injection', 'tokenizer.json'),
  );
  // The package name resolves to this checkout's sources.
  await writeFile(
    join(dir, 'relevance-gate.mts'),
    `export * from ${JSON.stringify(join(ROOT, 'src', 'index.js'))};\nexport * from ${JSON.stringify(join(ROOT, 'src', 'composite', 'index.js'))};\n`,
  );
  await writeFile(
    join(dir, 'compose.mts'),
    exampleSource().replace(/from 'relevance-gate';/g, "from './relevance-gate.mts';"),
  );
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

it('the documented example runs and routes every pair on all four signals, the second round from the cache', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(dir, 'compose.mts')], {
    cwd: ROOT,
    env: { ...process.env, MODELS: join(dir, 'models') },
    timeout: 90_000,
  });
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(7);
  const rows = lines.slice(0, 6).map((line) => {
    const [round, id, route, rule, tier, signals] = line.split(' ');
    return { round, id, route, rule, tier, signals: JSON.parse(signals) as Record<string, number> };
  });
  for (const row of rows) {
    expect(['included', 'conflicting', 'excluded']).toContain(row.route);
    expect(row.rule).not.toBe('fail-closed');
    expect(row.tier).toBe('composite[relevance,nli,injection]');
    expect(Object.keys(row.signals).sort()).toEqual(['contradicts_premise', 'evidence', 'injection', 'relevant']);
  }
  const byRound = (round: string) => rows.filter((r) => r.round === round).sort((a, b) => a.id.localeCompare(b.id));
  expect(byRound('1').map((r) => r.id)).toEqual(['a', 'b', 'c']);
  expect(byRound('2').map(({ round: _, ...rest }) => rest)).toEqual(byRound('1').map(({ round: _, ...rest }) => rest));
  expect(lines[6]).toBe('relevance: 1 call(s), 3 cached; nli: 1 call(s), 3 cached; injection: 1 call(s), 3 cached');
});

/**
 * `relevance-gate stats --docs docs.jsonl --out FILE`: builds the corpus statistics the lexical
 * features use (document frequencies per term for body/title, document count, average lengths)
 * and writes them as msgpack. Same input → same bytes.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

interface StatsOptions {
  docs: string;
  out: string;
}

async function runStats(options: StatsOptions): Promise<void> {
  const { stat } = await import('node:fs/promises');
  const { buildCorpusStats, saveCorpusStats } = await import('../../features/corpus-stats.js');
  const { createProgress } = await import('../../util/progress.js');
  let size: number;
  try {
    size = (await stat(options.docs)).size;
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read --docs ${options.docs}: ${(cause as Error).message}`, { cause });
  }
  const progress = createProgress('stats', size);
  const started = performance.now();
  const stats = await buildCorpusStats(options.docs, {
    progressEvery: 500,
    // The final state is printed by finish(); skipping it here avoids printing 100 % twice.
    onProgress: (docs, bytes) => {
      if (bytes < size) progress.update(bytes, `${docs} docs`);
    },
  });
  progress.finish(`${stats.docCount} docs`);
  await saveCorpusStats(stats, options.out);
  const { size: outSize } = await stat(options.out);
  process.stdout.write(
    `${options.out}: ${stats.docCount} documents, ${stats.termCount} terms, ` +
      `avg body ${stats.avgBodyLength.toFixed(1)} / title ${stats.avgTitleLength.toFixed(1)} terms, ` +
      `${outSize} bytes, tokenizer ${stats.tokenizerVersion}, ${((performance.now() - started) / 1000).toFixed(2)} s\n`,
  );
}

export function register(program: Command): void {
  program
    .command('stats')
    .description('Build corpus statistics (document frequencies, lengths) for the lexical features from a docs.jsonl')
    .requiredOption('--docs <file>', 'docs.jsonl: one {"id", "title", "text"} object per line')
    .requiredOption('--out <file>', 'output file (msgpack)')
    .action(async (options: StatsOptions) => {
      await runStats(options);
    });
}

/**
 * Writes the speed/shape cross-encoders (random weights, scores mean nothing: NOT relevance
 * models); same options as `relevance-gate models`. Usage:
 *   npx tsx scripts/make-models.ts [--out models/generated] [--only tiny] [--seed 42]
 *   npx tsx scripts/make-models.ts --preset roberta-nli --tokenizers-root ../shared/tokenizers --variants all
 */
import { Command } from 'commander';
import { register } from '../src/cli/commands/models.js';

const program = new Command('make-models').showHelpAfterError();
register(program);
try {
  await program.parseAsync(['models', ...process.argv.slice(2)], { from: 'user' });
} catch (err: unknown) {
  process.stderr.write(`make-models: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}

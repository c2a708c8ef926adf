/**
 * Trains the shipped fast-path model; same options as `relevance-gate train-fast-path`.
 * Usage: npx tsx scripts/train-fast-path.ts [--data ../shared/data] [--out models/fast-path-lexical] [--grid full] [--seed 42] [--check]
 */
import { Command } from 'commander';
import { RelevanceGateError } from '../src/errors.js';
import { register } from '../src/cli/commands/train-fast-path.js';

const program = new Command('train-fast-path').showHelpAfterError();
register(program);
try {
  await program.parseAsync(['train-fast-path', ...process.argv.slice(2)], { from: 'user' });
} catch (err: unknown) {
  const code = err instanceof RelevanceGateError ? `${err.code}: ` : '';
  process.stderr.write(`train-fast-path: ${code}${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}

/**
 * Trains the shipped fast-path model; same options as `relevance-gate train-fastpath`.
 * Usage: npx tsx scripts/train-fastpath.ts [--data ../shared/data] [--out models/fastpath-lexical] [--grid full] [--seed 42] [--check]
 */
import { Command } from 'commander';
import { RelevanceGateError } from '../src/errors.js';
import { register } from '../src/cli/commands/train-fastpath.js';

const program = new Command('train-fastpath').showHelpAfterError();
register(program);
try {
  await program.parseAsync(['train-fastpath', ...process.argv.slice(2)], { from: 'user' });
} catch (err: unknown) {
  const code = err instanceof RelevanceGateError ? `${err.code}: ` : '';
  process.stderr.write(`train-fastpath: ${code}${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}

#!/usr/bin/env node
/**
 * The `relevance-gate` command. Every file in ./commands exports `register(program)`; they are
 * found at start-up so adding a command never edits this file. Commands import their heavy
 * dependencies (onnxruntime, the addon) inside their action, so `--help` stays instant.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { RelevanceGateError } from '../errors.js';
import { packageRoot } from '../util/package-root.js';

interface CommandModule {
  register(program: Command): void;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

/** Commander lists required options like any other; say so in every command's help. */
function markRequiredOptions(program: Command): void {
  for (const command of program.commands) {
    for (const option of command.options) {
      if (option.mandatory && !option.description.endsWith('(required)')) option.description += ' (required)';
    }
  }
}

async function main(): Promise<void> {
  const here = fileURLToPath(import.meta.url);
  const ext = extname(here); // .ts under tsx, .js when compiled
  const commandsDir = join(dirname(here), 'commands');
  const program = new Command('relevance-gate')
    .description('Scores (query, passage) pairs and decides which passages reach the LLM.')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError();
  const files = readdirSync(commandsDir)
    .filter((f) => f.endsWith(ext) && !f.endsWith(`.d${ext}`) && !f.includes('.test.'))
    .sort();
  for (const file of files) {
    const mod = (await import(pathToFileURL(join(commandsDir, file)).href)) as Partial<CommandModule>;
    if (typeof mod.register === 'function') mod.register(program);
  }
  markRequiredOptions(program);
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  if (err instanceof RelevanceGateError) {
    process.stderr.write(`relevance-gate: ${err.code}: ${err.message}\n`);
  } else {
    process.stderr.write(`relevance-gate: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exitCode = 1;
});

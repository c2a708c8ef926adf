// Runs every ```ts block of docs/adapters.md and docs/context.md and every ```js block of README.md that starts with `// example: <name>`,
// as a user would (tsx, from the repository root), with the package's entry points mapped to the sources.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = process.cwd();
const WORK = join(ROOT, 'test', 'adapters', `.doc-examples-${process.pid}`);
const ENTRY_POINTS: Readonly<Record<string, string>> = {
  'relevance-gate': join(WORK, 'root.ts'),
  'relevance-gate/langchain': resolve('src/adapters/langchain/index.ts'),
  'relevance-gate/ai-sdk': resolve('src/adapters/ai-sdk/index.ts'),
  'relevance-gate/llamaindex': resolve('src/adapters/llamaindex/index.ts'),
};

interface DocExample {
  readonly doc: string;
  readonly name: string;
  readonly code: string;
  readonly language: 'ts' | 'js';
}

function examplesOf(doc: string, language: 'ts' | 'js' = 'ts'): DocExample[] {
  const text = readFileSync(doc, 'utf8');
  const out: DocExample[] = [];
  const block = new RegExp(`\`\`\`${language}\\n(\\/\\/ example: ([\\w-]+)\\n[\\s\\S]*?)\`\`\``, 'g');
  for (const m of text.matchAll(block)) out.push({ doc, name: m[2]!, code: m[1]!, language });
  return out;
}

const DOC_EXAMPLES = [...examplesOf('docs/adapters.md'), ...examplesOf('docs/context.md')];
const README_EXAMPLES = examplesOf('README.md', 'js');
const EXAMPLES = [...DOC_EXAMPLES, ...README_EXAMPLES];

async function runExample(example: DocExample): Promise<string> {
  mkdirSync(WORK, { recursive: true });
  // The root entry re-exports the runtime and buildContext (as the package root does).
  writeFileSync(
    ENTRY_POINTS['relevance-gate'],
    `export * from '${resolve('src/index.ts')}';\nexport * from '${resolve('src/context/index.ts')}';\n`,
  );
  const code = example.code.replace(/from '(relevance-gate(?:\/[\w-]+)?)'/g, (_match, spec: string) => {
    const target = ENTRY_POINTS[spec];
    if (target === undefined) throw new Error(`${example.name}: unknown entry point ${spec}`);
    return `from '${target}'`;
  });
  const file = join(WORK, `${example.name}.${example.language === 'js' ? 'mjs' : 'ts'}`);
  writeFileSync(file, code);
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, timeout: 120_000 });
  return stdout;
}

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe('the examples in docs/adapters.md, docs/context.md and README.md run as written', () => {
  it('finds them', () => {
    expect(DOC_EXAMPLES.map((e) => e.name)).toEqual([
      'langchain-quick-start',
      'langchain-abort',
      'llamaindex-quick-start',
      'ai-sdk-quick-start',
      'context-quick-start',
      'context-template',
    ]);
    expect(README_EXAMPLES.map((e) => e.name)).toEqual([
      'readme-library',
      'readme-langchain',
      'readme-llamaindex',
      'readme-ai-sdk',
    ]);
  });

  for (const example of EXAMPLES) {
    it(`${example.doc}: ${example.name}`, async () => {
      const stdout = await runExample(example);
      expect(stdout.length).toBeGreaterThan(0);
      if (example.name === 'langchain-abort') expect(stdout.trim()).toBe('rejected: AbortError');
      if (example.name === 'context-template') {
        // The block's trailing comment is its output.
        const expected = example.code
          .split('console.log(context.user);\n')[1]
          .split('\n')
          .filter((l) => l.startsWith('//'))
          .map((l) => l.replace(/^\/\/ ?/, ''));
        expect(stdout.trimEnd().split('\n')).toEqual(expected);
      }
      if (example.name === 'langchain-quick-start') expect(stdout).toMatch(/^\d+ 0\.\d+ included threshold$/m);
      if (example.name === 'llamaindex-quick-start') expect(stdout).toMatch(/^\d+ 0\.\d+ included threshold$/m);
      if (example.name === 'readme-llamaindex') expect(stdout).toMatch(/^d0 0\.\d+ included /m);
    });
  }
});

/**
 * The package as a user gets it: `npm pack`, then `npm install ./relevance-gate-*.tgz` into a
 * scratch app whose PATH has no compiler, make or python and which has no .npmrc. The CLI and the
 * README's examples must run there as written, from the installed files only.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..', '..');
const TOOLS = [
  'node',
  'npm',
  'npx',
  'sh',
  'bash',
  'env',
  'cat',
  'ls',
  'mkdir',
  'rm',
  'cp',
  'mv',
  'ln',
  'chmod',
  'uname',
  'sed',
  'grep',
  'tar',
  'gzip',
  'dirname',
  'basename',
  'readlink',
  'tr',
  'head',
  'tail',
  'sort',
];

/** ```js blocks of the README that import the given entry point, in order. */
function readmeExamples(entry: string): string[] {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.filter((b) => b.includes(`from '${entry}'`));
}

let app: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const work = mkdtempSync(join(tmpdir(), 'rg-installed-'));
  const bin = join(work, 'bin');
  mkdirSync(bin);
  for (const tool of TOOLS) {
    try {
      const path = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      if (path) symlinkSync(path, join(bin, tool));
    } catch {
      // tool not on this machine
    }
  }
  await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: repo, maxBuffer: 1 << 26 });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack wrote no tarball');
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module' }));
  env = {
    PATH: bin,
    HOME: process.env.HOME,
    npm_config_cache: process.env.npm_config_cache ?? join(work, 'npm-cache'),
  };
  const cache = process.env.HOME ? join(process.env.HOME, '.npm') : undefined;
  if (cache !== undefined && process.env.npm_config_cache === undefined) env.npm_config_cache = cache;
  await run('npm', ['install', '--no-audit', '--no-fund', join(work, tarball)], { cwd: app, env, maxBuffer: 1 << 26 });
}, 600_000);

describe('the packed package, installed without a compiler', () => {
  it('installs neither onnxruntime-node nor tokenizers for a fast-path user, and no compiler ran', () => {
    const modules = readdirSync(join(app, 'node_modules'));
    expect(modules).not.toContain('onnxruntime-node');
    expect(modules).not.toContain('tokenizers');
    const pkg = join(app, 'node_modules', 'relevance-gate');
    expect(readdirSync(join(pkg, 'prebuilds', 'linux-x64'))).toContain('relevance-gate.glibc.node');
    expect(readdirSync(pkg)).not.toContain('build');
    expect(readdirSync(pkg)).toContain('LICENSE');
  });

  it('npx relevance-gate score prints decisions, and --version the package version', async () => {
    const { stdout } = await run('npx', ['--no-install', 'relevance-gate', 'score'], { cwd: app, env });
    expect(stdout).toMatch(/^included\s+0\.\d{3}/m);
    expect(stdout).toMatch(/^excluded\s+0\.\d{3}/m);
    const version = await run('npx', ['--no-install', 'relevance-gate', '--version'], { cwd: app, env });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version);
  });

  it('the README library example runs as written in the app, under plain node', async () => {
    const [example] = readmeExamples('relevance-gate');
    expect(example).toBeDefined();
    writeFileSync(join(app, 'example.js'), example);
    const { stdout } = await run('node', ['example.js'], { cwd: app, env });
    expect(stdout).toMatch(/^included p1 0\.\d{3}/m);
    expect(stdout).toMatch(/^excluded p2 0\.\d{3} /m);
    expect(stdout.trim().split('\n').at(-1)).toBe('false');
  });

  it('the README LangChain and AI SDK examples run as written once the frameworks are installed', async () => {
    await run('npm', ['install', '--no-audit', '--no-fund', '@langchain/core', '@langchain/classic', 'ai'], {
      cwd: app,
      env,
      maxBuffer: 1 << 26,
    });
    for (const name of ['readme-langchain', 'readme-ai-sdk']) {
      const [example] = readmeExamples('relevance-gate').filter((b) => b.startsWith(`// example: ${name}\n`));
      expect(example, name).toBeDefined();
      writeFileSync(join(app, `${name}.js`), example);
      const { stdout } = await run('node', [`${name}.js`], { cwd: app, env });
      expect(stdout.length, name).toBeGreaterThan(0);
    }
  });

  it('the README LlamaIndex example runs as written once @llamaindex/core is installed', async () => {
    await run('npm', ['install', '--no-audit', '--no-fund', '@llamaindex/core'], { cwd: app, env, maxBuffer: 1 << 26 });
    const [example] = readmeExamples('relevance-gate/llamaindex');
    expect(example).toBeDefined();
    writeFileSync(join(app, 'readme-llamaindex.js'), example);
    const { stdout } = await run('node', ['readme-llamaindex.js'], { cwd: app, env });
    expect(stdout).toMatch(/^d0 0\.\d+ included /m);
    expect(stdout).toMatch(/^insufficient context: (true|false)$/m);
  });

  it('relevance-gate models writes a shape model from the installed package', async () => {
    const { stdout } = await run(
      'npx',
      ['--no-install', 'relevance-gate', 'models', '--only', 'tinybert-l2', '--out', 'generated'],
      { cwd: app, env },
    );
    expect(stdout).toMatch(/tinybert-l2: \S*generated\/tinybert-l2 /);
    expect(readdirSync(join(app, 'generated', 'tinybert-l2'))).toContain('tokenizer.json');
  });

  it('the cross-encoder tier names the package to install when onnxruntime-node is missing', async () => {
    writeFileSync(
      join(app, 'ce.mjs'),
      "import { createCrossEncoder } from 'relevance-gate';\n" +
        "try { await createCrossEncoder({ modelDir: 'generated/tinybert-l2' }); console.log('loaded'); }\n" +
        'catch (e) { console.log(e.code, e.message); }\n',
    );
    const { stdout } = await run('node', ['ce.mjs'], { cwd: app, env });
    expect(stdout).toMatch(/^RG_ERR_MISSING_DEPENDENCY .*npm install onnxruntime-node/);
  });

  it('importing the root is cheap: no Redis client, protobuf, MiniSearch, ml-xgboost, commander or HDR code', async () => {
    // Every module the import resolves: ESM resolutions through a loader hook, CommonJS ones from require.cache.
    const log = join(app, 'resolved.log');
    writeFileSync(
      join(app, 'hooks.mjs'),
      "import { appendFileSync } from 'node:fs';\n" +
        'export async function resolve(specifier, context, next) {\n' +
        '  const result = await next(specifier, context);\n' +
        "  appendFileSync(process.env.RESOLVED_LOG, result.url + '\\n');\n" +
        '  return result;\n}\n',
    );
    writeFileSync(
      join(app, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
    );
    writeFileSync(
      join(app, 'probe.mjs'),
      "import { createRequire } from 'node:module';\n" +
        "const m = await import('relevance-gate');\n" +
        'const loaded = Object.keys(createRequire(import.meta.url).cache);\n' +
        'console.log(JSON.stringify({ exports: Object.keys(m).length, loaded }));\n',
    );
    writeFileSync(log, '');
    const { stdout } = await run('node', ['--import', './register.mjs', 'probe.mjs'], {
      cwd: app,
      env: { ...env, RESOLVED_LOG: log },
    });
    const out = JSON.parse(stdout) as { exports: number; loaded: string[] };
    const resolved = [...out.loaded, ...readFileSync(log, 'utf8').split('\n')];
    expect(resolved.some((p) => p.includes('/node_modules/relevance-gate/dist/index.js'))).toBe(true);
    const heavy = [
      'ioredis',
      'protobufjs',
      'minisearch',
      'ml-xgboost',
      'commander',
      'hdr-histogram-js',
      'msgpackr',
      'fastify',
      'prom-client',
    ];
    for (const name of heavy) expect(resolved.filter((p) => p.includes(`/node_modules/${name}/`))).toEqual([]);
    expect(out.exports).toBeGreaterThan(20);
  });
});

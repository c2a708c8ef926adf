// The public API under version control: API Extractor writes one report per entry point into
// api/. `npm run api` checks that the built declarations (dist/) match the committed reports and
// fails otherwise, so an export cannot change by accident; `npm run api -- --update` rewrites
// the reports after a deliberate change (review the diff).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');

// Entry point → its declaration file in dist/ (mirrors package.json "exports").
const ENTRIES = {
  'relevance-gate': 'dist/index.d.ts',
  'relevance-gate-eval': 'dist/tooling/eval/index.d.ts',
  'relevance-gate-training': 'dist/tooling/training/index.d.ts',
  'relevance-gate-models': 'dist/tooling/model-gen/index.d.ts',
  'relevance-gate-server': 'dist/server/index.d.ts',
  'relevance-gate-langchain': 'dist/adapters/langchain/index.d.ts',
  'relevance-gate-ai-sdk': 'dist/adapters/ai-sdk/index.d.ts',
  'relevance-gate-llamaindex': 'dist/adapters/llamaindex/index.d.ts',
};

let failed = false;
for (const [name, entry] of Object.entries(ENTRIES)) {
  const entryPath = join(root, entry);
  if (!existsSync(entryPath)) {
    console.error(`api: ${entry} missing: run npm run build first`);
    failed = true;
    continue;
  }
  const config = ExtractorConfig.prepare({
    configObjectFullPath: join(root, 'api', `${name}.json`),
    packageJsonFullPath: join(root, 'package.json'),
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: entryPath,
      bundledPackages: [],
      compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
      apiReport: {
        enabled: true,
        reportFileName: `${name}.api.md`,
        reportFolder: join(root, 'api'),
        reportTempFolder: join(root, 'build', 'api-temp'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'none' },
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-forgotten-export': { logLevel: 'none' },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: (m) => {
      if (m.logLevel === 'warning' || m.logLevel === 'error') {
        console.error(`api: ${name}: ${m.text}`);
      }
      m.handled = true;
    },
  });
  if (!result.succeeded || (!update && result.apiReportChanged)) {
    console.error(
      `api: ${name}: the public API differs from api/${name}.api.md` +
        (update ? '' : ' (an export changed: if deliberate, run `npm run api -- --update` and commit the report)'),
    );
    failed = true;
  } else {
    console.log(`api: ${name}: ${update && result.apiReportChanged ? 'report updated' : `matches api/${name}.api.md`}`);
  }
}
process.exit(failed ? 1 : 0);

// Links node_modules/.bin/relevance-gate to this checkout's build, so that `npx relevance-gate`
// in a clone runs it at once; without the link npx would install a copy of the clone into its
// cache and rebuild it there on every first call. Installed packages get their bin from npm.
import { chmodSync, existsSync, lstatSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'dist', 'cli', 'main.js');
chmodSync(target, 0o755);
const binDir = join(root, 'node_modules', '.bin');
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(binDir, { recursive: true });
  const link = join(binDir, 'relevance-gate');
  try {
    if (lstatSync(link)) rmSync(link);
  } catch {
    // no previous link
  }
  symlinkSync(relative(binDir, target), link);
}

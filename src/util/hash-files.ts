/** SHA-256 over the bytes of several files, in order, streamed (model files are large). */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export async function hashFiles(paths: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const path of paths) {
    await new Promise<void>((resolve, reject) => {
      const stream = createReadStream(path);
      stream.on('data', (chunk) => hash.update(chunk));
      stream.on('end', () => resolve());
      stream.on('error', reject);
    });
  }
  return hash.digest('hex');
}

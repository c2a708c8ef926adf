/**
 * The cross-encoder the package ships (models/cross-encoder-minilm-l6, its model card in the
 * folder's MODEL_CARD.md), and the name by which the CLI and the server's configuration address it.
 */
import { join } from 'node:path';
import { packageRoot } from '../../util/package-root.js';

/** The shipped cross-encoder's folder, wherever the package is installed. */
export const SHIPPED_CROSS_ENCODER_MODEL_DIR: string = join(packageRoot(), 'models', 'cross-encoder-minilm-l6');

/** What `--model shipped` / `--cross-encoder shipped` stand for (a folder named so is `./shipped`). */
export const SHIPPED_MODEL_NAME = 'shipped';

/** A cross-encoder folder argument with the shipped model's name resolved. */
export function resolveCrossEncoderDir(dir: string): string {
  return dir === SHIPPED_MODEL_NAME ? SHIPPED_CROSS_ENCODER_MODEL_DIR : dir;
}

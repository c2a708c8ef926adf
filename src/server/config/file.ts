/**
 * The files the server configuration is read from: the JSON config file (`--config`,
 * RELEVANCE_GATE_CONFIG) and the API key file (`--api-key-file`). Each is read once, at start; a
 * file that cannot be read or parsed is a ServerConfigError naming it.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ServerConfigError } from '../errors.js';
import { isRecord } from './fields.js';
import type { ServerConfigInput } from './types.js';
import { validateApiKey } from './validate.js';

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new ServerConfigError(`cannot read ${what} ${file}: ${(cause as Error).message}`, { cause });
  }
}

/** Reads a JSON config file (comments are not JSON: refused with the parser's position). */
export async function readConfigFile(file: string): Promise<ServerConfigInput> {
  const text = await readText(file, 'config file');
  if (/\.ya?ml$/i.test(file))
    throw new ServerConfigError(`${file}: YAML configs are not supported, write the same keys as JSON`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ServerConfigError(`${file} is not valid JSON: ${(cause as Error).message}`, { cause });
  }
  if (!isRecord(parsed)) throw new ServerConfigError(`${file} must hold a JSON object`);
  // Relative model paths in a file are relative to the file, not to wherever the server was started.
  return {
    ...(parsed as ServerConfigInput),
    baseDir: (parsed.baseDir as string | undefined) ?? dirname(resolve(file)),
  };
}

/**
 * Reads the API key of `serve --api-key-file`: once, at start. Surrounding whitespace (the trailing
 * newline an editor or `echo` leaves) is trimmed; an unreadable or empty file, or one holding more
 * than one line, is a ServerConfigError (start-up fails with exit code 1).
 */
export async function readApiKeyFile(file: string): Promise<string> {
  const key = (await readText(file, 'the API key file')).trim();
  if (key.length === 0) throw new ServerConfigError(`the API key file ${file} is empty`);
  if (/[\r\n]/.test(key))
    throw new ServerConfigError(`the API key file ${file} holds more than one line; it must hold the key alone`);
  return validateApiKey(key);
}

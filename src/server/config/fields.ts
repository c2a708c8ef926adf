/**
 * How the server configuration checks a field: the project's shared validators (src/util) with a
 * factory that throws ServerConfigError, so every refusal names the field in one style,
 * `<field> must be <requirement>, got <value>`; plus the few checks only the config needs
 * (objects, optional fields, paths against the base directory).
 */
import { isAbsolute, resolve } from 'node:path';
import { rejectUnknownKeys } from '../../util/option-keys.js';
import { describeValue, nonEmptyString, type OptionErrorFactory } from '../../util/validate-options.js';
import { ServerConfigError } from '../errors.js';

/** The shared validators' error factory for the server configuration: a ServerConfigError naming the field. */
export const configError: OptionErrorFactory = (name, requirement, value) =>
  new ServerConfigError(`${name} must be ${requirement}, got ${describeValue(value)}`);

/** Refuses the first key of `value` that `known` lacks (a typo), naming `<where>.<key>` and the known keys. */
export function rejectUnknownConfigKeys(where: string, value: object, known: ReadonlySet<string>): void {
  rejectUnknownKeys(
    value,
    known,
    where,
    'a known option',
    (field, problem) => new ServerConfigError(`${field} ${problem}`),
  );
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object field (a section such as `cache` or `limits`), or a ServerConfigError naming it. */
export function configObject(where: string, value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw configError(where, 'an object', value);
  return value;
}

/** `check(value)`, or undefined for an absent field. */
export function optional<T>(value: unknown, check: (v: unknown) => T): T | undefined {
  return value === undefined ? undefined : check(value);
}

/** A path field: a non-empty string, resolved against `baseDir` when relative. */
export function configPath(baseDir: string, where: string, value: unknown): string {
  const p = nonEmptyString(where, value, configError);
  return isAbsolute(p) ? p : resolve(baseDir, p);
}

/**
 * Refusing unknown option keys, with one message style:
 *   `<where>.<key> is not <kind> (<every allowed key>)`.
 * A misspelt option (e.g. `timeoutMs` for `budgetMs`) must fail loudly, never be ignored.
 */
import { InvalidArgumentError } from '../errors.js';

/** Builds a module's own error for an unknown key: `field` is `<where>.<key>`, `problem` the rest of the sentence. */
export type UnknownKeyErrorFactory = (field: string, problem: string) => Error;

const invalidArgumentKey: UnknownKeyErrorFactory = (field, problem) => new InvalidArgumentError(`${field} ${problem}`);

/**
 * Throws for the first own key of `options` that `allowed` does not hold: an InvalidArgumentError,
 * or the error the module builds with `fail` (the gate's InvalidPolicyError names the field).
 */
export function rejectUnknownKeys(
  options: object,
  allowed: ReadonlySet<string>,
  where: string,
  kind = 'an option',
  fail: UnknownKeyErrorFactory = invalidArgumentKey,
): void {
  for (const key of Object.keys(options))
    if (!allowed.has(key))
      throw fail(where === '' ? key : `${where}.${key}`, `is not ${kind} (${[...allowed].join(', ')})`);
}

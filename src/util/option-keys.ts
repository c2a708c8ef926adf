/**
 * Refusing unknown option keys, with one message style:
 *   `<where>.<key> is not <kind> (<every allowed key>)`.
 * A misspelt option (e.g. `timeoutMs` for `budgetMs`) must fail loudly, never be ignored.
 */
import { InvalidArgumentError } from '../errors.js';

/** Throws an InvalidArgumentError for the first own key of `options` that `allowed` does not hold. */
export function rejectUnknownKeys(
  options: object,
  allowed: ReadonlySet<string>,
  where: string,
  kind = 'an option',
): void {
  for (const key of Object.keys(options))
    if (!allowed.has(key))
      throw new InvalidArgumentError(`${where}.${key} is not ${kind} (${[...allowed].join(', ')})`);
}

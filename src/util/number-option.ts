/**
 * Numeric CLI options: commander hands us strings, and a typo must be a typed error naming the
 * flag, never a NaN flowing into a run.
 */
import { InvalidArgumentError } from '../errors.js';

export const isPositive = (n: number): boolean => n > 0;
export const isPositiveInt = (n: number): boolean => Number.isInteger(n) && n > 0;
export const isNonNegative = (n: number): boolean => n >= 0;
export const isInteger = (n: number): boolean => Number.isInteger(n);

/** Parses `--flag text` as a finite number that passes `ok`; `what` describes it in the error. */
export function numberOption(
  flag: string,
  text: string,
  ok: (n: number) => boolean = () => true,
  what = 'a number',
): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || !ok(n)) {
    throw new InvalidArgumentError(`--${flag} must be ${what}, got "${text}"`);
  }
  return n;
}

/** As numberOption, for an option that may be absent. */
export function optionalNumberOption(
  flag: string,
  text: string | undefined,
  ok?: (n: number) => boolean,
  what?: string,
): number | undefined {
  return text === undefined ? undefined : numberOption(flag, text, ok, what);
}

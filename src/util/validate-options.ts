/**
 * Validators of option values (numbers, strings, booleans, choices), one per kind, with one message style:
 *   `<name> must be <requirement>, got <value>`.
 * Each returns the value when it is valid and throws otherwise: an InvalidArgumentError by default,
 * or the error a module builds with `fail` (e.g. the gate's InvalidPolicyError, which names the
 * policy field), so every module refuses the same values with the same words.
 */
import { InvalidArgumentError } from '../errors.js';

/** Builds the error for an invalid option; `requirement` reads "an integer ≥ 1", "a number in [0, 1]", … */
export type OptionErrorFactory = (name: string, requirement: string, value: unknown) => Error;

/** How a rejected value is shown in messages (strings quoted, so '' and '5' are visible as strings). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

/** The default factory: InvalidArgumentError(`<name> must be <requirement>, got <value>`). */
export const invalidArgument: OptionErrorFactory = (name, requirement, value) =>
  new InvalidArgumentError(`${name} must be ${requirement}, got ${describeValue(value)}`);

function isNumber(value: unknown): value is number {
  return typeof value === 'number';
}

// Safe integers only: 1e300 passes Number.isInteger and would reach `new Array(1e300)`.

/** An integer ≥ 1. */
export function positiveInteger(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !Number.isSafeInteger(value) || value < 1) throw fail(name, 'an integer ≥ 1', value);
  return value;
}

/** An integer ≥ 0. */
export function nonNegativeInteger(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !Number.isSafeInteger(value) || value < 0) throw fail(name, 'an integer ≥ 0', value);
  return value;
}

/** An integer in [min, max] (both inclusive). */
export function integerInRange(
  name: string,
  value: unknown,
  min: number,
  max: number,
  fail: OptionErrorFactory = invalidArgument,
): number {
  if (!isNumber(value) || !Number.isSafeInteger(value) || value < min || value > max)
    throw fail(name, `an integer in [${min}, ${max}]`, value);
  return value;
}

/** A number in [0, 1] (NaN refused). */
export function probability(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !(value >= 0 && value <= 1)) throw fail(name, 'a number in [0, 1]', value);
  return value;
}

/** A finite number. */
export function finiteNumber(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !Number.isFinite(value)) throw fail(name, 'a finite number', value);
  return value;
}

/** A finite number > 0. */
export function positiveNumber(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !Number.isFinite(value) || !(value > 0)) throw fail(name, 'a finite number > 0', value);
  return value;
}

/** A finite number ≥ 0. */
export function nonNegativeNumber(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !Number.isFinite(value) || !(value >= 0)) throw fail(name, 'a finite number ≥ 0', value);
  return value;
}

/** A number in (0, 1] (a share, a rate, a headroom). */
export function positiveFraction(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !(value > 0 && value <= 1)) throw fail(name, 'a number in (0, 1]', value);
  return value;
}

/** A limit ≥ 0 where Infinity means "no limit" (a budget in ms); NaN refused. */
export function nonNegativeLimit(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !(value >= 0)) throw fail(name, 'a number ≥ 0 (Infinity: no limit)', value);
  return value;
}

/** A limit > 0 where Infinity means "never" (an interval in ms); NaN refused. */
export function positiveLimit(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): number {
  if (!isNumber(value) || !(value > 0)) throw fail(name, 'a number > 0 (Infinity: never)', value);
  return value;
}

/** A string of at least one character. */
export function nonEmptyString(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): string {
  if (typeof value !== 'string' || value.length === 0) throw fail(name, 'a non-empty string', value);
  return value;
}

/** true or false (no truthy stand-ins: 1, 'yes' and 'false' are refused). */
export function booleanValue(name: string, value: unknown, fail: OptionErrorFactory = invalidArgument): boolean {
  if (typeof value !== 'boolean') throw fail(name, 'a boolean', value);
  return value;
}

/** One of `allowed` (compared with ===); the requirement lists them. */
export function oneOf<const T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
  fail: OptionErrorFactory = invalidArgument,
): T {
  if (!(allowed as readonly unknown[]).includes(value)) throw fail(name, `one of ${allowed.join(', ')}`, value);
  return value as T;
}

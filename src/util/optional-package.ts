/**
 * Loading of dependencies that only some features need, at first use instead of at import, so
 * importing the package root stays cheap and a user of one tier never pays for another's
 * dependencies. A package that is not installed surfaces as MissingDependencyError naming it.
 */
import { createRequire } from 'node:module';
import { MissingDependencyError } from '../errors.js';

const require = createRequire(import.meta.url);

function isNotFound(err: unknown, name: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = err instanceof Error ? err.message : '';
  // Only the package itself missing counts; a missing file inside an installed package is a real error.
  return message.includes(`'${name}'`) || message.includes(`"${name}"`) || message.includes(`${name}/`);
}

/** Synchronous load (CommonJS entry) of `name`, for code paths that cannot await. */
export function requirePackage<T>(name: string, feature: string, hint?: string): T {
  try {
    return require(name) as T;
  } catch (err) {
    if (isNotFound(err, name)) throw new MissingDependencyError(name, feature, hint, { cause: err });
    throw err;
  }
}

/** ESM import of `name` at first use. */
export async function importPackage<T>(name: string, feature: string, hint?: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (err) {
    if (isNotFound(err, name)) throw new MissingDependencyError(name, feature, hint, { cause: err });
    throw err;
  }
}

/** Throws MissingDependencyError unless `name` resolves, without loading it (e.g. a package only workers load). */
export function assertInstalled(name: string, feature: string, hint?: string): void {
  try {
    require.resolve(name);
  } catch (err) {
    throw new MissingDependencyError(name, feature, hint, { cause: err });
  }
}

/**
 * Turns a failed dynamic import of one of our own modules into MissingDependencyError when what
 * is missing is one of `names` (a static import deep inside that module).
 */
export function missingDependencyOf(err: unknown, names: readonly string[], feature: string): unknown {
  for (const name of names)
    if (isNotFound(err, name)) return new MissingDependencyError(name, feature, undefined, { cause: err });
  return err;
}

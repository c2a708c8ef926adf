/**
 * The `decisionLog`, `inspector` and `shadows` sections of the server configuration
 * (docs/decision-log.md): validated here so a typo in the directory, a sample rate or a model name
 * fails at start-up, naming the field.
 */
import {
  booleanValue,
  nonEmptyString,
  positiveInteger,
  positiveNumber,
  probability,
} from '../../util/validate-options.js';
import { configError, configObject, configPath, optional, rejectUnknownConfigKeys } from './fields.js';
import { ServerConfigError } from '../errors.js';
import type { DecisionLogConfig, ModelConfig, ShadowConfig } from './types.js';

const KEYS: ReadonlySet<string> = new Set([
  'dir',
  'sample',
  'maxFileMb',
  'maxFiles',
  'maxQueued',
  'includeQuery',
  'includeText',
  'alwaysRules',
]);

export function resolveDecisionLog(input: unknown, baseDir: string): DecisionLogConfig | undefined {
  if (input === undefined || input === null) return undefined;
  const section = configObject('decisionLog', input);
  rejectUnknownConfigKeys('decisionLog', section, KEYS);
  const alwaysRules = optional(section.alwaysRules, (v) => {
    if (!Array.isArray(v)) throw configError('decisionLog.alwaysRules', 'an array of rule names', v);
    return v.map((rule, i) => nonEmptyString(`decisionLog.alwaysRules[${i}]`, rule, configError));
  });
  return {
    dir: configPath(baseDir, 'decisionLog.dir', section.dir),
    sample: section.sample === undefined ? 1 : probability('decisionLog.sample', section.sample, configError),
    maxFileMb: optional(section.maxFileMb, (v) => positiveInteger('decisionLog.maxFileMb', v, configError)),
    maxFiles: optional(section.maxFiles, (v) => positiveInteger('decisionLog.maxFiles', v, configError)),
    maxQueued: optional(section.maxQueued, (v) => positiveInteger('decisionLog.maxQueued', v, configError)),
    includeQuery:
      optional(section.includeQuery, (v) => booleanValue('decisionLog.includeQuery', v, configError)) ?? false,
    includeText: optional(section.includeText, (v) => booleanValue('decisionLog.includeText', v, configError)) ?? false,
    alwaysRules,
  };
}

export function resolveInspector(input: unknown): boolean {
  return input === undefined ? false : booleanValue('inspector', input, configError);
}

const SHADOW_KEYS: ReadonlySet<string> = new Set(['model', 'sample', 'maxInFlight', 'budgetMs']);

/** `shadows`: live model name → its shadow; both must be configured models, and differ. */
export function resolveShadows(
  input: unknown,
  models: Readonly<Record<string, ModelConfig>>,
  logged: boolean,
): Readonly<Record<string, ShadowConfig>> {
  if (input === undefined || input === null) return {};
  const section = configObject('shadows', input);
  if (Object.keys(section).length > 0 && !logged)
    throw new ServerConfigError(
      'shadows: a shadow model decides into the decision log: set decisionLog (or inspector) too',
    );
  const out: Record<string, ShadowConfig> = {};
  for (const [live, raw] of Object.entries(section)) {
    const where = `shadows.${live}`;
    const entry = configObject(where, raw);
    rejectUnknownConfigKeys(where, entry, SHADOW_KEYS);
    const model = nonEmptyString(`${where}.model`, entry.model, configError);
    if (models[live] === undefined)
      throw new ServerConfigError(`${where}: ${JSON.stringify(live)} is not a configured model`);
    if (models[model] === undefined)
      throw new ServerConfigError(`${where}.model: ${JSON.stringify(model)} is not a configured model`);
    if (model === live) throw new ServerConfigError(`${where}.model: a model cannot shadow itself`);
    out[live] = {
      model,
      sample: entry.sample === undefined ? 0.1 : probability(`${where}.sample`, entry.sample, configError),
      maxInFlight:
        entry.maxInFlight === undefined ? 1 : positiveInteger(`${where}.maxInFlight`, entry.maxInFlight, configError),
      budgetMs: entry.budgetMs === undefined ? 1000 : positiveNumber(`${where}.budgetMs`, entry.budgetMs, configError),
    };
  }
  return out;
}

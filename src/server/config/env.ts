/**
 * The server configuration from environment variables: which variables the server reads and the
 * config fields they set (a layer between the config file and the flags, see mergeConfigInputs).
 */
import { configError } from './fields.js';
import type { ServerConfigInput } from './types.js';

/** The environment variables the server reads, by config field. */
export const ENVIRONMENT_VARIABLES = {
  host: 'RELEVANCE_GATE_HOST',
  port: 'RELEVANCE_GATE_PORT',
  apiKey: 'RELEVANCE_GATE_API_KEY',
  config: 'RELEVANCE_GATE_CONFIG',
  processes: 'RELEVANCE_GATE_PROCESSES',
  redisUrl: 'RELEVANCE_GATE_REDIS_URL',
  redisCluster: 'RELEVANCE_GATE_REDIS_CLUSTER',
  logLevel: 'RELEVANCE_GATE_LOG_LEVEL',
  budgetMs: 'RELEVANCE_GATE_BUDGET_MS',
} as const;

/** A numeric variable as a number (its range is checked with the field it sets), or undefined when unset or empty. */
function envNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw configError(name, 'a number', raw);
  return n;
}

/** The config fields set by environment variables (undefined where unset). */
export function configFromEnvironment(env: NodeJS.ProcessEnv = process.env): ServerConfigInput {
  const out: Record<string, unknown> = {};
  const v = ENVIRONMENT_VARIABLES;
  if (env[v.host]) out.host = env[v.host];
  const port = envNumber(env, v.port);
  if (port !== undefined) out.port = port;
  if (env[v.apiKey]) out.apiKey = env[v.apiKey];
  const processes = envNumber(env, v.processes);
  if (processes !== undefined) out.processes = processes;
  if (env[v.redisUrl]) out.cache = { redisUrl: env[v.redisUrl] };
  const cluster = env[v.redisCluster];
  if (cluster) out.cache = { ...(out.cache as object), redisCluster: cluster.split(',').map((n) => n.trim()) };
  if (env[v.logLevel]) out.logLevel = env[v.logLevel];
  const budget = envNumber(env, v.budgetMs);
  if (budget !== undefined) out.budgetMs = budget;
  return out as ServerConfigInput;
}

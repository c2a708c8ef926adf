/**
 * `relevance-gate replay --log <dir> --policy <policy.json> --json <out.json>`: re-decides every
 * request of a decision log from its stored signals (no model is loaded, nothing is scored) under
 * the logged policy with the given one merged over it, and reports what moved (docs/decision-log.md).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

interface ReplayCliOptions {
  log: string;
  policy?: string;
  json?: string;
  qrels?: string;
  policyBase: string;
  signals: string;
}

async function readPolicy(path: string): Promise<Record<string, unknown>> {
  const { readFile } = await import('node:fs/promises');
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read --policy ${path}: ${(cause as Error).message}`, { cause });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(`--policy ${path} must hold a JSON object (a gate policy)`);
  return value as Record<string, unknown>;
}

function pct(n: number | null | undefined): string {
  return n === null || n === undefined ? '-' : `${(n * 100).toFixed(1)} %`;
}

async function runReplay(opts: ReplayCliOptions): Promise<void> {
  if (opts.policyBase !== 'logged' && opts.policyBase !== 'none')
    throw new InvalidArgumentError(`--policy-base must be logged or none, got "${opts.policyBase}"`);
  if (opts.signals !== 'logged' && opts.signals !== 'shadow')
    throw new InvalidArgumentError(`--signals must be logged or shadow, got "${opts.signals}"`);
  const { replayDecisionLog, readJudgments } = await import('../../decision-log/index.js');
  const policy = opts.policy === undefined ? undefined : await readPolicy(opts.policy);
  const judgments = opts.qrels === undefined ? undefined : await readJudgments(opts.qrels);
  const report = await replayDecisionLog(opts.log, {
    ...(policy === undefined ? {} : { policy }),
    base: opts.policyBase,
    signals: opts.signals,
    ...(judgments === undefined ? {} : { judgments }),
  });
  if (opts.json !== undefined) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(opts.json, `${JSON.stringify(report, null, 2)}\n`);
  }
  const { before, after } = report.routes;
  const lines = [
    `${report.requests} requests, ${report.pairs} pairs from ${report.files} file(s)${report.malformedLines > 0 ? ` (${report.malformedLines} unreadable lines skipped)` : ''}`,
    `  included     ${before.included} → ${after.included}`,
    `  conflicting  ${before.conflicting} → ${after.conflicting}`,
    `  excluded     ${before.excluded} → ${after.excluded}`,
    `  empty answers ${report.emptyAnswers.before} → ${report.emptyAnswers.after}`,
    ...report.moves
      .slice(0, 10)
      .map((m) => `  moved ${m.count}: ${m.from} (${m.ruleBefore}) → ${m.to} (${m.ruleAfter})`),
    ...(report.judged === undefined
      ? []
      : [
          `  judged requests ${report.judged.before.requests}: precision ${pct(report.judged.before.precision)} → ${pct(report.judged.after.precision)}, recall ${pct(report.judged.before.recall)} → ${pct(report.judged.after.recall)}`,
        ]),
    ...(report.shadow === undefined
      ? []
      : [
          `  shadow: ${report.shadow.disagreements} of ${report.shadow.pairs} pairs of ${report.shadow.requests} requests routed otherwise than live`,
        ]),
    ...(report.drift.alerts.length === 0
      ? [
          `  drift (later ${report.drift.current.requests} requests against the earlier ${report.drift.baseline.requests}): no alert`,
        ]
      : report.drift.alerts.map(
          (a) =>
            `  drift alert ${a.alert}${a.subject === undefined ? '' : ` (${a.subject})`}: ${a.baseline.toFixed(3)} → ${a.current.toFixed(3)}`,
        )),
    ...(opts.json === undefined ? [] : [`  report: ${opts.json}`]),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function register(program: Command): void {
  program
    .command('replay')
    .description(
      'Re-decide the requests of a decision log (serve --decision-log) under another policy from the stored signals, and report what moves',
    )
    .requiredOption('--log <dir>', 'decision log directory (or one of its files)')
    .option(
      '--policy <policy.json>',
      'gate policy merged over the logged one (null unsets a field); absent: the logged policy',
    )
    .option('--json <out.json>', 'write the full report (requests, pairs, perRequest, moves, rules, ...) here')
    .option(
      '--qrels <file>',
      'judgments: query-id (request id or query hash) <TAB> passage id <TAB> grade, for precision/recall',
    )
    .option('--policy-base <base>', 'logged: merge --policy over the logged policy; none: use it alone', 'logged')
    .option(
      '--signals <source>',
      "logged: each request's own signals; shadow: the live requests a shadow model decided, from the shadow's signals and policy",
      'logged',
    )
    .action(runReplay);
}

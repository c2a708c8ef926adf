/** The fault scenarios' own checks: a failed one ends the scenario with its message (its FAULT-RESULT). */
export class ScenarioFailure extends Error {
  /** What the scenario measured before the check failed (printed with the verdict). */
  readonly report: Report | undefined;
  constructor(message: string, report?: Report) {
    super(message);
    this.report = report;
  }
}

export function check(condition: boolean, message: string, report?: Report): asserts condition {
  if (!condition) throw new ScenarioFailure(message, report);
}

/** CI's short form: fewer rounds per scenario (the long form repeats full ones). */
export const SHORT = process.env.FAULT_SHORT === '1';

export type Report = Record<string, unknown>;

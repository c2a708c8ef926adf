/**
 * Runs one fault scenario (test/faults/scenarios.ts) in a child process and reports how the
 * process ended: exit code, signal, whether it had to be killed for running past its time, and
 * the scenario's own verdict (its FAULT-RESULT line).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ScenarioRun {
  readonly scenario: string;
  readonly seed: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Killed after timeoutMs (a hang: the process did not finish or did not exit by itself). */
  readonly timedOut: boolean;
  readonly ms: number;
  readonly result: { ok: boolean; error?: string; [key: string]: unknown } | undefined;
  readonly stderrTail: string;
}

const SCENARIO_FILE = fileURLToPath(new URL('./scenarios.ts', import.meta.url));

/** True when the process died: a signal, an abort (134), or any exit without a verdict. */
export function processDied(run: ScenarioRun): boolean {
  return run.signal !== null || (run.code !== 0 && run.code !== 1) || run.result === undefined;
}

export function runScenario(
  scenario: string,
  seed: number,
  options: { timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<ScenarioRun> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', SCENARIO_FILE, scenario, String(seed)], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('FAULT-RESULT '));
      let result: ScenarioRun['result'];
      if (line !== undefined) {
        try {
          result = JSON.parse(line.slice('FAULT-RESULT '.length)) as ScenarioRun['result'];
        } catch {
          result = undefined;
        }
      }
      resolve({
        scenario,
        seed,
        code,
        signal,
        timedOut,
        ms: Math.round(performance.now() - started),
        result,
        stderrTail: stderr.slice(-1500),
      });
    });
  });
}

/**
 * A `relevance-gate serve` child process for the benches: started from the sources by the tests'
 * spawnServeCli (test/server/helpers.ts), handed back once `/health/ready` answers 200 (models
 * loaded and warmed), stopped by a signal with the exit awaited.
 */
import { type ServeCliProcess, spawnServeCli, waitForServing } from '../test/server/helpers.js';

export interface ServeChild {
  readonly url: string;
  readonly cli: ServeCliProcess;
  /** Sends `signal` (default SIGTERM: drain and exit) and resolves once the process has exited (SIGKILL after 30 s). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `serve --port 0 <args>` (a later `--port` in args wins) and waits until it is ready. */
export async function startServeChild(args: readonly string[], timeoutMs = 120_000): Promise<ServeChild> {
  const cli = spawnServeCli(args);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (cli.child.exitCode !== null || cli.child.signalCode !== null) return;
    cli.child.kill(signal);
    const timer = setTimeout(() => cli.child.kill('SIGKILL'), 30_000);
    await cli.exited;
    clearTimeout(timer);
  };
  const until = Date.now() + timeoutMs;
  const url = await waitForServing(cli, Math.ceil(timeoutMs / 100));
  while (url !== undefined && cli.child.exitCode === null && Date.now() < until) {
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return { url, cli, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop('SIGKILL');
  throw new Error(`relevance-gate serve ${args.join(' ')} did not become ready: ${cli.stderr()}`);
}

/**
 * Node/V8 flags a serving process needs that only its command line can give: V8 reads them when it
 * creates the heap, and NODE_OPTIONS refuses them. `serve` therefore starts the processes that
 * serve with them (its cluster workers; one worker when `processes` is 1 and the flags are missing).
 *
 * `--no-memory-reducer`: V8's memory reducer starts a memory-reducing major collection once none
 * has run for 100 s (its watchdog). A server's old generation, with the heap headroom
 * (heap-headroom.ts), fills in minutes, so nearly every major collection was that one. Besides its
 * marking, a memory-reducing collection shrinks the young generation to its minimum: for seconds
 * afterwards the event loop scavenges every ~10 ms instead of every ~90 ms, and together this
 * queued requests unread in their sockets for ~100 ms on a 2-vCPU host. Without the reducer the
 * majors come when the headroom is used up and leave the young generation as it is
 * (docs/router.md, "Major collections every 100 s").
 */

/** The flags, as given to `node`. */
export const SERVING_NODE_FLAGS: readonly string[] = ['--no-memory-reducer'];

/**
 * The serving flags `execArgv` lacks. A flag the operator set either way counts as set
 * (`--memory-reducer` keeps the reducer on), in any of V8's spellings (`--no-x`, `--nox`, `--x=…`,
 * `_` for `-`).
 */
export function missingServingFlags(execArgv: readonly string[]): string[] {
  const given = new Set(execArgv.map(flagName));
  return SERVING_NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** The serving flags' names, for reading V8's `--nox` spelling (no dash after `no`). */
const SERVING_FLAG_NAMES: ReadonlySet<string> = new Set(
  SERVING_NODE_FLAGS.map((flag) => flag.slice(2).replaceAll('_', '-').toLowerCase().replace(/^no-/, '')),
);

/** A V8 boolean flag's name without dashes, negation or value: `--no-memory_reducer=1` → `memory-reducer`. */
function flagName(arg: string): string {
  if (!arg.startsWith('--')) return '';
  const name = arg.slice(2).split('=')[0].replaceAll('_', '-').toLowerCase();
  if (name.startsWith('no-')) return name.slice(3);
  if (name.startsWith('no') && SERVING_FLAG_NAMES.has(name.slice(2))) return name.slice(2);
  return name;
}

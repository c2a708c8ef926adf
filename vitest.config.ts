import { defineConfig } from 'vitest/config';

/**
 * Tests whose subject is behaviour under load (admission, overload, deadlines, stalls, cluster
 * faults): they run after the rest, one file at a time, so the suite's own parallelism is not the
 * load they measure their outcome under.
 */
const UNDER_LOAD = [
  'test/server/overload*.test.ts',
  'test/server/admission.test.ts',
  'test/server/cluster.test.ts',
  'test/server/replicas-nginx.test.ts',
  'test/server/loadgen-*.test.ts',
  'test/server/shutdown.test.ts',
  'test/faults/**/*.test.ts',
  'test/router/hard-deadline.test.ts',
  'test/router/deadline-race.test.ts',
  'test/router/loop-stall-watch.test.ts',
  'test/router/host-steal.test.ts',
  'test/router/answer-lag.test.ts',
  'test/gate/fast-path-deadline.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Native addon and ONNX sessions are per-process; forks isolate crashes and keep worker pools apart.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: UNDER_LOAD,
          // Both cores: most files wait on servers, timers and worker threads, not the CPU.
          maxWorkers: 2,
          // Files share their worker process (one module graph per worker, not per file): loading the
          // source, the native addon and onnxruntime once per worker instead of once per file saves
          // about 35 s of the suite's CPU. Tests restore what they change (timers, environment).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'under-load',
          include: UNDER_LOAD,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

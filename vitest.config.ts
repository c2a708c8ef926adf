import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Native addon and ONNX sessions are per-process; forks isolate crashes and keep worker pools apart.
    pool: 'forks',
  },
});

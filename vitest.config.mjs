import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/js/**/*.test.mjs'],
    // Separate processes: each file gets its own wasm instance and onnxruntime-node.
    pool: 'forks',
    maxWorkers: 2, // the machine has 2 cores
    // Conformance runs whole CNNs in wasm on a shared 2-core machine.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/js/**/*.test.mjs'],
    // The suites test the wasm engine (the page's) and the CLIs they start run it too; the native
    // engine's own tests pin it (tests/js/native_engine.test.mjs). PTQSCOPE_ENGINE=native runs the
    // engine-neutral suites (the float64 ones) on the native engine.
    env: { PTQSCOPE_ENGINE: process.env.PTQSCOPE_ENGINE ?? 'wasm' },
    // Separate processes: each file gets its own wasm instance and onnxruntime-node.
    pool: 'forks',
    maxWorkers: 2, // the machine has 2 cores
    // Conformance runs whole CNNs in wasm on a shared 2-core machine.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});

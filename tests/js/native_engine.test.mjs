// The CLI's native engine (docs/wasm-api.md, "Engines"): the core as a Node-API addon,
// build/native-release/ptqscope.node (scripts/build.sh release, where Node's headers are). Its float
// accuracy is held to the same float64 budget as the wasm engine's in float64_reference.test.mjs (run on
// every engine built); here: which engine the CLI runs and how the result says so, the worker threads
// on the addon, and the messages when it is asked for and missing. Skipped, saying so, where the addon
// is not built.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtEngines } from './helpers.mjs';
import { calibratedDigits, cli } from './cli_fixture.mjs';
import { engineModulePath } from '../../web/cli/lib/wasm.mjs';
import { createPool } from '../../web/pipeline/pool.mjs';
import { spawnNodeWorker } from '../../web/pipeline/node_worker.mjs';
import { runAnalysis } from '../../web/pipeline/sweep.mjs';
import { readCalibrationFolder } from '../../web/cli/lib/files.mjs';

const built = builtEngines().includes('native');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-native-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// The CLI's own choice: PTQSCOPE_ENGINE empty (the suites set it to wasm: vitest.config.mjs).
const unpinned = () => ({ PTQSCOPE_ENGINE: '' });
const sweep = async (args, env) => {
  const { model, data } = calibratedDigits();
  const json = path.join(tmp, `${args.join('_').replace(/\W/g, '')}_${Object.keys(env).join('')}.json`);
  const r = await cli(['get-sensitivity-of-nodes', model, data, '-n', 'activation', '-d', '2', '--quiet', '--json', json, ...args], { env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(fs.readFileSync(json, 'utf8'));
};

describe.skipIf(!built)('the native engine', () => {
  it('is the CLI\'s engine when built, recorded in the result; PTQSCOPE_ENGINE=wasm runs the wasm engine', async () => {
    const native = await sweep([], unpinned());
    const wasm = await sweep([], { ...unpinned(), PTQSCOPE_ENGINE: 'wasm' });
    expect(native.engine.name).toBe('native');
    expect(['portable', 'avx2', 'avx512']).toContain(native.engine.simd);
    expect(wasm.engine).toEqual({ name: 'wasm', simd: 'simd128' });
    // The same items, with the same columns (their metrics: float64_reference and the conformance tests).
    expect(Object.keys(native.sensitivity.activation).sort()).toEqual(Object.keys(wasm.sensitivity.activation).sort());
    expect(native.samples).toEqual(wasm.samples);
  });

  it('PTQSCOPE_SIMD picks the GEMM\'s instruction set, and names the available ones when it cannot', async () => {
    const portable = await sweep([], { ...unpinned(), PTQSCOPE_SIMD: 'portable' });
    expect(portable.engine).toEqual({ name: 'native', simd: 'portable' });
    const { model, data } = calibratedDigits();
    const r = await cli(['get-sensitivity-of-nodes', model, data, '-n', 'activation', '--quiet'], { env: { ...unpinned(), PTQSCOPE_SIMD: 'neon' } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown or unavailable GEMM instruction set 'neon' \(this build and CPU have 'portable'/);
  });

  it('merges shards of both engines into one result naming both', async () => {
    const parts = [
      await sweep(['--shard', '1/2'], unpinned()),
      await sweep(['--shard', '2/2'], { ...unpinned(), PTQSCOPE_ENGINE: 'wasm' }),
    ];
    const files = parts.map((p, i) => {
      const f = path.join(tmp, `part-${i}.json`);
      fs.writeFileSync(f, JSON.stringify(p));
      return f;
    });
    const out = path.join(tmp, 'merged.json');
    const r = await cli(['merge', ...files, '--json', out]);
    expect(r.code, r.stderr).toBe(0);
    const merged = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(merged.engine.name).toBe('mixed');
    expect(merged.engine.parts.map((e) => e.name)).toEqual(['native', 'wasm']);
  });

  it('runs the page\'s worker pool in worker_threads, each worker with its own memory budget', async () => {
    const { model, data } = calibratedDigits();
    const pool = createPool({ size: 2, spawn: () => spawnNodeWorker(engineModulePath('native')) });
    try {
      await pool.load({ model: fs.readFileSync(model), files: readCalibrationFolder(data) });
      const doc = await runAnalysis(pool, { analysis: 'sensitivity', options: { node_type: 'activation', data_num: 2 } });
      expect(doc.engine.name).toBe('native');
      const usage = await pool.memory();
      expect(usage).toHaveLength(2);
      // Each worker counts its own copy of the model (the wasm module's heaps are separate too).
      expect(usage[0].inUse).toBeGreaterThanOrEqual(fs.statSync(model).size);
      expect(usage[1].inUse).toBe(usage[0].inUse);
      expect(usage[0].heapBytes).toBeNull();
    } finally {
      pool.close();
    }
  });
});

describe('a missing native engine', () => {
  it('PTQSCOPE_ENGINE=native names the addon and the way back to wasm', async () => {
    const { model, data } = calibratedDigits();
    const missing = path.join(tmp, 'no-such.node');
    const r = await cli(['get-sensitivity-of-nodes', model, data], { env: { PTQSCOPE_ENGINE: 'native', PTQSCOPE_NATIVE: missing } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${missing} not found`);
    expect(r.stderr).toContain('PTQSCOPE_ENGINE=wasm');
  });

  it('without PTQSCOPE_ENGINE the CLI falls back to the wasm engine', async () => {
    const doc = await sweep([], { ...unpinned(), PTQSCOPE_NATIVE: path.join(tmp, 'no-such.node') });
    expect(doc.engine.name).toBe('wasm');
  });
});

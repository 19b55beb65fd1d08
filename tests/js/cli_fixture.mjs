// Shared by the CLI / pipeline tests: the calibrated digits model (HzCalibration nodes, made from the
// float digits fixture by the native ptq_calibrate tool, max calibration) and a runner for the CLI.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES, REPO_ROOT } from './helpers.mjs';
import { wasmModulePath } from '../../web/cli/lib/wasm.mjs';

export const CLI = path.join(REPO_ROOT, 'web/cli/ptqscope.mjs');
// PTQSCOPE_WASM selects another module build (as for the CLI itself).
export const WASM_PATH = wasmModulePath();

// {model, data}: the calibrated digits model (cached in .cache/cli) and its calibration_data folder.
export function calibratedDigits() {
  const data = path.join(FIXTURES, 'digits/calibration_data');
  const out = path.join(REPO_ROOT, '.cache/cli/digits_calibrated.onnx');
  if (!fs.existsSync(out)) {
    const candidates = [process.env.PTQ_CALIBRATE, ...['native-release', 'native-asan'].map((d) => path.join(REPO_ROOT, 'build', d, 'ptq_calibrate'))];
    const tool = candidates.find((f) => f && fs.existsSync(f));
    if (!tool) throw new Error('no ptq_calibrate tool to make the calibrated digits model: build it with scripts/build.sh asan (or set PTQ_CALIBRATE)');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    execFileSync(tool, [path.join(FIXTURES, 'digits/digits_cnn.onnx'), data, `${out}.${process.pid}.tmp`], { stdio: 'pipe' });
    fs.renameSync(`${out}.${process.pid}.tmp`, out);
  }
  return { model: out, data };
}

// Runs `ptqscope args...` (asynchronously, so several can run at once): {code, stdout, stderr}.
export function cli(args, { cwd, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: env ? { ...process.env, ...env } : process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Shared by the CLI / pipeline tests: the calibrated digits model (HzCalibration nodes) and a runner
// for the CLI.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, fixture } from './helpers.mjs';
import { wasmModulePath } from '../../web/cli/lib/wasm.mjs';

export const CLI = path.join(REPO_ROOT, 'web/cli/ptqscope.mjs');
// PTQSCOPE_WASM selects another module build (as for the CLI itself).
export const WASM_PATH = wasmModulePath();

// {model, data}: the calibrated digits fixture (made by ptq_calibrate in scripts/fixtures, stamped
// with the calibration sources so it is remade when they change) and its calibration_data folder.
export function calibratedDigits() {
  const { model, data } = fixture('digits_cnn_calibrated');
  return { model, data };
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

// The calibrated digits example for the app-analysis tests: the web build's example
// (build/web-example, made by scripts/build.sh web) when present, else made here from the digits
// fixture with the native ptq_calibrate tool (max calibration, like the example).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { FIXTURES, REPO_ROOT, loadPtqModule, readCalibrationFolder } from '../helpers.mjs';

export const WASM_PATH = path.join(REPO_ROOT, 'build/wasm/ptqscope.mjs');

function exampleDir() {
  const dir = path.join(REPO_ROOT, 'build/web-example');
  const model = fs.existsSync(dir) && fs.readdirSync(dir).find((f) => f.endsWith('.onnx'));
  if (model && fs.existsSync(path.join(dir, 'calibration_data'))) {
    return { model: path.join(dir, model), data: path.join(dir, 'calibration_data') };
  }
  return null;
}

export function calibratedDigits() {
  const ready = exampleDir();
  if (ready) return ready;
  const data = path.join(FIXTURES, 'digits/calibration_data');
  const out = path.join(REPO_ROOT, '.cache/app-analysis/digits_calibrated.onnx');
  if (!fs.existsSync(out)) {
    const tool = ['native-release', 'native-asan'].map((d) => path.join(REPO_ROOT, 'build', d, 'ptq_calibrate')).find((f) => fs.existsSync(f));
    if (!tool) throw new Error('no calibrated digits model: run scripts/build.sh web (or build ptq_calibrate with scripts/build.sh asan)');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    execFileSync(tool, [path.join(FIXTURES, 'digits/digits_cnn.onnx'), data, `${out}.tmp`], { stdio: 'pipe' });
    fs.renameSync(`${out}.tmp`, out);
  }
  return { model: out, data };
}

// {ptq, session, graph, files, modelBytes} with the example loaded in a fresh wasm session.
export async function openDigits() {
  const { model, data } = calibratedDigits();
  const ptq = await loadPtqModule();
  const session = new ptq.Session();
  const modelBytes = new Uint8Array(fs.readFileSync(model));
  session.loadModel(modelBytes);
  const files = readCalibrationFolder(data);
  session.loadCalibrationData(files);
  const graph = JSON.parse(session.graphJson());
  return { ptq, session, graph, files, modelBytes, modelPath: model, dataPath: data };
}

// analyze() with its item events collected.
export function analyzeWithEvents(session, request) {
  const events = [];
  const result = JSON.parse(session.analyze(JSON.stringify(request), (e) => events.push(JSON.parse(e))));
  return { result, events };
}

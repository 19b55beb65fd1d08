// The calibrated digits example for the app-analysis tests: the fixture manifest's
// digits_cnn_calibrated (the web app's embedded example; scripts/fixtures/make_fixtures.py).
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, fixture, loadPtqModule, readCalibrationFolder } from '../helpers.mjs';

export const WASM_PATH = process.env.PTQSCOPE_WASM || path.join(REPO_ROOT, 'build/wasm/ptqscope.mjs');

export function calibratedDigits() {
  const { model, data } = fixture('digits_cnn_calibrated');
  return { model, data };
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

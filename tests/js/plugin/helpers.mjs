// Shared by the plugin tests: the recorded Netron fixtures, generated calibration data for the tiny
// model (the recording ships none), the plugin's dependencies with Node analysis workers, and
// promise helpers that wait for store changes (no sleeps).
import fs from 'node:fs';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { encodeNpy } from '../../../web/cli/lib/npy.mjs';
import { wasmModulePath } from '../../../web/cli/lib/wasm.mjs';
import { spawnNodeWorker } from '../../../web/pipeline/node_worker.mjs';
import * as pipeline from '../../../web/app/analysis/pipeline.mjs';
import { createStore, DEFAULTS } from '../../../web/app/state.mjs';
import { heatScale } from '../../../web/charts/heat_scale.mjs';
import { renderNodeSection } from '../../../web/app/heatmap/sidebar.mjs';
import { filesFromDataTransfer, filesFromFileList } from '../../../web/app/open/sources.mjs';
import { createAnalysisRunner } from '../../../web/app/analysis/runner.mjs';
import { mountAnalysesPanel } from '../../../web/app/analysis/panel.mjs';
import { mountExportPanel } from '../../../web/app/export/panel.mjs';
import { unzipSync, strFromU8 } from 'fflate';
import { pageHtml, installFakeNetron } from './fake_netron.mjs';

export const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/netron-dom');
export const MODEL_NAME = 'horizon_calibrated_tiny.onnx';
export const modelBytes = () => new Uint8Array(fs.readFileSync(path.join(FIXTURES, MODEL_NAME)));

export function recordedRenders() {
  const read = (f) => fs.readFileSync(path.join(FIXTURES, f), 'utf8');
  return { default: read('horizon_calibrated_tiny.target.html'), names: read('horizon_calibrated_tiny.names.target.html') };
}

// calibration_data for `images` [1,3,32,32] float32: deterministic pixel-like values (0..255), one
// file per sample, as {path: 'calibration_data/images/<k>.npy', bytes} (a picked folder's paths).
export function calibrationFolder(samples = 3) {
  const out = [];
  for (let k = 0; k < samples; k++) {
    const data = new Float32Array(3 * 32 * 32);
    for (let i = 0; i < data.length; i++) data[i] = Math.round(127.5 + 120 * Math.sin(0.013 * i * (k + 1) + k));
    out.push({ path: `calibration_data/images/${k}.npy`, bytes: encodeNpy('float32', [1, 3, 32, 32], data) });
  }
  return out;
}

// File-like objects as <input webkitdirectory> hands them over.
export const asPickedFiles = (files) => files.map((f) => ({
  name: path.basename(f.path), webkitRelativePath: f.path, size: f.bytes.length,
  arrayBuffer: async () => f.bytes.slice().buffer,
}));

// A linkedom window with the recorded Netron page (before a model is opened).
export function netronPage({ version, mutate } = {}) {
  const { window } = parseHTML(pageHtml({ version }));
  mutate?.(window.document);
  const view = installFakeNetron(window, recordedRenders());
  return { window, document: window.document, view };
}

export function pluginDeps(extra = {}) {
  return {
    state: createStore({ ...DEFAULTS, picked: new Set() }),
    pipeline,
    spawn: () => spawnNodeWorker(wasmModulePath()),
    poolSize: 2,
    heatScale,
    sections: () => [{ id: 'analysis-results', title: 'Analysis results', render: renderNodeSection }],
    readDrop: filesFromDataTransfer,
    readPicked: filesFromFileList,
    ...extra,
  };
}

// The web app's side of the same inputs: a page whose store holds what the app's opener puts there
// (model bytes and name, graphJson, calibration files), with the analyses and export panels mounted
// as the app's dock mounts them (web/app/analysis/index.mjs, web/app/export/index.mjs), a runner on
// Node workers, and `save` in place of the browser download.
export function appHost({ graph, files, save, saved }) {
  const { window } = parseHTML('<!DOCTYPE html><html><head></head><body><div class="dock-panel"></div></body></html>');
  const state = createStore({
    ...DEFAULTS, picked: new Set(), graph, modelBytes: modelBytes(), modelName: MODEL_NAME, calibrationFiles: files,
  });
  const runner = createAnalysisRunner({ state, pipeline, spawn: () => spawnNodeWorker(wasmModulePath()), size: 2 });
  const root = window.document.querySelector('.dock-panel');
  const panels = [mountAnalysesPanel(root, state, runner), mountExportPanel(root, state, { save })];
  return {
    window, root, state, runner, saved,
    dispose() {
      panels.forEach((p) => p.dispose());
      runner.dispose();
    },
  };
}

// A host `save` hook keeping the last file an export wrote, in its own store (key 'file').
export function fileSaver() {
  const saved = createStore({ file: null });
  return { saved, save: (name, data, type) => saved.set('file', { name, data, type }) };
}

// {name: text} of a .zip's files.
export const unzipText = (bytes) => Object.fromEntries(Object.entries(unzipSync(bytes)).map(([n, b]) => [n, strFromU8(b)]));

// Resolves with the value once state `key` satisfies `pred` (checked now, then on every set).
export function until(state, key, pred = (v) => v !== null && v !== undefined) {
  return new Promise((resolve, reject) => {
    if (pred(state.get(key))) {
      resolve(state.get(key));
      return;
    }
    const offs = [];
    const stop = () => offs.forEach((off) => off());
    offs.push(state.on(key, (v) => {
      if (pred(v)) {
        stop();
        resolve(v);
      }
    }));
    offs.push(state.on('error', (msg) => {
      if (msg) {
        stop();
        reject(new Error(`state 'error' while waiting for '${key}': ${msg}`));
      }
    }));
  });
}

// Resolves with the runner event that satisfies `pred`.
export function nextRunnerEvent(runner, pred) {
  return new Promise((resolve) => {
    const off = runner.on((ev) => {
      if (pred(ev)) {
        off();
        resolve(ev);
      }
    });
  });
}

// The web app's analyses panel (web/app/analysis/panel.mjs) under `root`, driven as a user would:
// open the tab, fill its form, press Run. Resolves with the runner's 'done' / 'error' event; rejects
// when the panel refuses the form (state 'error'). Works on the plugin's panel and on the app's alike.
export function runTab(win, root, { state, runner }, tab, fill = () => {}) {
  root.querySelector(`.ptq-analysis-tabs button[data-analysis="${tab}"]`).dispatchEvent(new win.Event('click'));
  fill(analysisForm(root, tab));
  return new Promise((resolve, reject) => {
    const offs = [];
    const stop = () => offs.forEach((off) => off());
    offs.push(runner.on((ev) => {
      if (ev.type === 'done' || ev.type === 'error') {
        stop();
        resolve(ev);
      }
    }));
    offs.push(state.on('error', (msg) => {
      if (msg) {
        stop();
        reject(new Error(`${tab}: ${msg}`));
      }
    }));
    root.querySelector('.ptq-run').dispatchEvent(new win.Event('click'));
  });
}

export const analysisForm = (root, tab) => root.querySelector(`form.ptq-analysis-form[data-analysis="${tab}"]`);

// A multi-choice box of a form (linkedom has no `checked` property: the attribute is the state).
export const setChecked = (form, name, value, on = true) => form.querySelector(`input[name="${name}"][value="${value}"]`).toggleAttribute('checked', on);

// Presses the "← top-k" button beside a node-list field (the most sensitive items of the last run).
export function useTopK(win, form, field) {
  form.querySelector(`[name="${field}"]`).parentNode.querySelector('.ptq-use-topk').dispatchEvent(new win.Event('click'));
  return form.querySelector(`[name="${field}"]`).value;
}

// Lets queued microtasks (the plugin's MutationObserver flush) run.
export const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

// Netron opening a file through its <input id=open-file-dialog>.
// `others`: [{name, bytes}] opened together with the model (its external-data files).
export async function openModelThroughNetron(window, view, bytes = modelBytes(), name = MODEL_NAME, others = []) {
  const input = window.document.getElementById('open-file-dialog');
  const asFile = (n, b) => ({ name: n, size: b.length, arrayBuffer: async () => b.slice().buffer });
  const files = [asFile(name, bytes), ...others.map((o) => asFile(o.name, o.bytes))];
  Object.defineProperty(input, 'files', { value: files, configurable: true });
  input.dispatchEvent(new window.Event('change', { bubbles: true }));
  await view.lastOpen;
}

// Chooses an option of a <select> (linkedom's `value` has no setter) and fires `change`.
export function choose(window, select, value) {
  for (const o of select.querySelectorAll('option')) o.toggleAttribute('selected', o.value === value);
  if (select.value !== value) throw new Error(`<select class="${select.className}"> has no option '${value}'`);
  select.dispatchEvent(new window.Event('change'));
}

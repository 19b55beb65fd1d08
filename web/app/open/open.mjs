// Opening files: routes what the user dropped or picked to the model, calibration-data and toolchain
// report loaders (web/app/reports/), checks it, and publishes the result in the store. Failures go to state 'error' (the banner); the
// previous model stays usable. The engine (wasm worker client) is injected so tests can pass a
// Node session.
import { classifyOpened, externalDataCandidates, stripRoot, placeLooseNpy, checkCalibrationLayout, findCalibrationRoot, isJunk, isReportFile } from './checks.mjs';
import { detectFormat } from '../../pipeline/reports/index.mjs';
import { textOf } from '../../pipeline/reports/common.mjs';
import { openReport } from '../reports/controller.mjs';
import { limitedModelText } from '../../pipeline/catalog.mjs';
import { modelScopedState } from '../state.mjs';

export function createOpener(state, engine) {
  const fail = (message) => {
    state.set('status', null);
    state.set('error', message);
    return false;
  };

  let latest = 0; // the newest openModel wins when several overlap
  let loading = 0; // openModel calls in flight
  // Calibration data opened before its model, or while a model is being read: checked against the
  // model once it is read (state 'heldData' {label, files: count, reading}, shown by the faces).
  let held = null;
  const hold = (data, label) => {
    held = { data, label };
    state.set('heldData', { label, files: data.length, reading: loading > 0 });
    return true;
  };
  // `candidates`: files opened with the model that may hold its external data ([{path, bytes}], paths
  // relative to the model's folder); the engine keeps those the model names (externalPaths). The
  // model's bytes and the candidates may be promises (files still being read): data opened meanwhile
  // is held for this model.
  async function openModel(model, candidates = []) {
    loading++;
    if (held) state.set('heldData', { ...state.get('heldData'), reading: true });
    let opened;
    try {
      opened = await readModel(model, candidates);
    } finally {
      loading--;
    }
    if (held && loading === 0) {
      if (!opened) state.set('heldData', { ...state.get('heldData'), reading: false });
      else {
        const { data, label } = held;
        held = null;
        state.set('heldData', null);
        return openCalibration(data, label);
      }
    }
    return opened;
  }

  async function readModel({ path, bytes: reading }, candidatesReading) {
    const ticket = ++latest;
    state.set('status', `Loading ${path}…`);
    let loaded, bytes, candidates;
    try {
      [bytes, candidates] = await Promise.all([reading, candidatesReading]);
      loaded = await engine.loadModel(bytes, candidates, state.get('relationRules') ?? undefined);
    } catch (err) {
      return ticket === latest ? fail(`${path}: ${err.message}`) : false;
    }
    if (ticket !== latest) return false;
    const used = new Set(loaded.externalPaths ?? []);
    state.set('error', null);
    state.setMany({
      modelName: path, modelBytes: bytes, externalFiles: candidates.filter((c) => used.has(c.path)),
      summary: loaded.summary, calibrationFiles: null, samples: null,
      memory: { load: loaded.memory?.heapBytes ?? null, analysis: null },
      ...modelScopedState(),
    });
    state.set('graph', loaded.graph);
    if (loaded.graphError) fail(`${path}: the graph cannot be shown: ${loaded.graphError}`);
    else {
      const lines = (loaded.summary?.warnings ?? []).map((w) => `${path}: warning: ${w}`);
      const limited = limitedModelText(loaded.summary);
      if (limited) lines.unshift(`${path}: ${limited}.`);
      if (lines.length) state.set('error', lines.join('\n'));
    }
    state.set('status', null);
    return true;
  }

  // `data`: [{path, bytes}] as opened (folder name first, or loose files). Before a model is read
  // (none opened yet, or one still being read) the data is held and checked once the model is read.
  async function openCalibration(opened, label = 'calibration_data') {
    const data = opened.filter((f) => !isJunk(f.path));
    const summary = state.get('summary');
    if (!summary || loading > 0) return hold(data, label);
    const inputNames = summary.inputs.map((i) => i.name);
    const { root, files: relative } = stripRoot(data);
    const folder = root || label;
    const loose = placeLooseNpy(relative, inputNames);
    if (loose.errors.length) return fail(loose.errors.join('\n'));
    const files = loose.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const errors = checkCalibrationLayout(files, inputNames, folder);
    if (errors.length) return fail(errors.join('\n'));
    state.set('status', `Checking ${files.length} calibration files…`);
    let loaded;
    try {
      // the core's dtype / shape / NaN checks
      loaded = await engine.loadCalibration(files, state.get('modelBytes'), state.get('externalFiles'));
    } catch (err) {
      return fail(`${folder}: ${err.message}`);
    }
    state.set('error', null);
    state.set('samples', { count: loaded.sampleCount, names: loaded.sampleNames, folder });
    state.set('calibrationFiles', files);
    state.set('status', null);
    return true;
  }

  // Toolchain reports among the opened files: a file chosen on its own (no folder) must be one; in a
  // folder dropped with its model, text files that are no report are left alone (a README beside the
  // data); in a calibration folder alone they stay data, so the layout check names them.
  function takeReports(files, withModel) {
    const reports = [];
    const rest = [];
    for (const f of files) {
      if (isJunk(f.path) || !isReportFile(f.path)) rest.push(f);
      else if (!f.path.includes('/') || detectFormat(f.path, textOf(f.bytes))) reports.push(f);
      else if (!withModel) rest.push(f);
    }
    return { reports, rest };
  }

  // The calibration files that came with (or without) the model.
  async function openData(model, data, label) {
    if (model && data.some((f) => f.path.includes('/'))) {
      // Dropped with the model, the data may sit inside a larger folder: use the calibration folder in it.
      const found = findCalibrationRoot(data, state.get('summary').inputs.map((i) => i.name));
      if (!found) return fail(`${model.path} opened, but none of the other files is in a calibration_data layout (<input name>/<file>.npy).`);
      const relative = found.files.map((f) => ({ ...f, path: found.root ? f.path.slice(found.root.length + 1) : f.path }));
      return openCalibration(relative, found.root.split('/').pop() || label);
    }
    return openCalibration(data, label);
  }

  // Anything the user opened at once: a model, a calibration folder, a zip, loose .npy files, reports.
  // Reports are opened last, after the model they are placed on.
  async function openFiles(opened, label) {
    const { model, data: other, errors } = classifyOpened(opened);
    if (errors.length) return fail(errors.join('\n'));
    const { reports, rest: data } = takeReports(other, Boolean(model));
    const openReports = () => reports.every((r) => openReport(state, r));
    if (!model && data.length === 0) {
      if (reports.length) return openReports();
      return fail('Nothing to open: drop a .onnx model, its calibration_data folder, a .zip of it, .npy files, or a toolchain report.');
    }
    if (model && !(await openModel(model, externalDataCandidates(model, data)))) return false;
    // The model's external-data files are not calibration data.
    const external = new Set((model ? state.get('externalFiles') : []).map((f) => f.bytes));
    const calibration = data.filter((f) => !external.has(f.bytes));
    const dataOk = calibration.length ? await openData(model, calibration, label) : true;
    const reportsOk = reports.length ? openReports() : true;
    return dataOk && reportsOk;
  }

  // The open model read again under the relation rules of state 'relationRules' (the analyses panel's
  // setting, §1.9): its graph's relations change, and so do the results' meaning, so the model-scoped
  // state (results, selection, heat) starts afresh; the calibration data stays.
  async function readRelations() {
    const bytes = state.get('modelBytes');
    if (!bytes) return true;
    const ticket = ++latest;
    const path = state.get('modelName');
    state.set('status', `Relating ${path}'s nodes by the ${state.get('relationRules')} rules…`);
    let loaded;
    try {
      loaded = await engine.loadModel(bytes, state.get('externalFiles') ?? [], state.get('relationRules') ?? undefined);
    } catch (err) {
      return ticket === latest ? fail(`${path}: ${err.message}`) : false;
    }
    if (ticket !== latest) return false;
    state.setMany({ summary: loaded.summary, ...modelScopedState() });
    state.set('graph', loaded.graph);
    state.set('status', null);
    return true;
  }

  // Another model in place of the open one, keeping the calibration data (a float model calibrated in
  // the page with its own data): the data is checked against the new model.
  async function replaceModel(model) {
    const files = state.get('calibrationFiles');
    const folder = state.get('samples')?.folder;
    if (!(await openModel(model))) return false;
    return files?.length ? openCalibration(files, folder) : true;
  }

  return { openFiles, openModel, openCalibration, readRelations, replaceModel };
}

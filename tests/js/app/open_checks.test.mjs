// Opening files: the §2 calibration_data checks (messages name the folder/file), zip expansion,
// loose .npy placement, and the opener end to end on the digits fixture with the wasm core in Node.
import { describe, it, expect, beforeAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { zipSync } from 'fflate';
import { fixture, loadPtqModule, readCalibrationFolder } from '../helpers.mjs';
import { classifyOpened, stripRoot, placeLooseNpy, checkCalibrationLayout, sampleNames, isNpy, findCalibrationRoot } from '../../../web/app/open/checks.mjs';
import { expandZips } from '../../../web/app/open/sources.mjs';
import { createOpener } from '../../../web/app/open/open.mjs';
import { directEngine } from '../../../web/app/graph/engine_core.mjs';
import { createStore } from '../../../web/app/state.mjs';

const digits = fixture('digits_cnn');
// As a dropped folder gives them: calibration_data/<input>/<file>.
const dropped = () => readCalibrationFolder(digits.data).map((f) => ({ path: `calibration_data/${f.path}`, bytes: new Uint8Array(f.bytes) }));
const modelFile = () => ({ path: 'digits_cnn.onnx', bytes: new Uint8Array(fs.readFileSync(digits.model)) });

describe('calibration_data checks (§2)', () => {
  it('accepts the fixture folder and orders samples lexicographically', () => {
    const { root, files } = stripRoot(dropped());
    expect(root).toBe('calibration_data');
    expect(checkCalibrationLayout(files, ['input'], root)).toEqual([]);
    const names = sampleNames(files, ['input']);
    expect(names.slice(0, 4)).toEqual(['0.npy', '1.npy', '10.npy', '11.npy']); // 0,1,10,11,… like sorted()
  });

  it('names the folder and file at fault', () => {
    const { files } = stripRoot(dropped());
    const npy = files[0].bytes;
    expect(checkCalibrationLayout([...files.map((f) => ({ ...f })), { path: 'notes.txt', bytes: npy }], ['input'], 'calib'))
      .toEqual(['calib/notes.txt is not a directory.']);
    expect(checkCalibrationLayout([{ path: 'images/0.npy', bytes: npy }], ['input'], 'calib')).toEqual([
      "Calibration data folder 'calib/images' does not match any input of the model (model inputs: input).",
      "No calibration data for model input 'input': expected a folder named 'input' in calib (model inputs: input).",
    ]);
    expect(checkCalibrationLayout([{ path: 'input/0.txt', bytes: new Uint8Array([1, 2, 3]) }], ['input'], 'calib'))
      .toEqual(['calib/input/0.txt is not a .npy file (no NUMPY header).']);
    expect(checkCalibrationLayout([{ path: 'input/sub/0.npy', bytes: npy }], ['input'], 'calib')[0])
      .toBe('calib/input/sub is a directory; calibration folders must hold only .npy files.');
    const uneven = [{ path: 'a/0.npy', bytes: npy }, { path: 'a/1.npy', bytes: npy }, { path: 'b/0.npy', bytes: npy }];
    expect(checkCalibrationLayout(uneven, ['a', 'b'], 'calib')).toEqual(['Input b received wrong num of data: calib/a has 2 files, calib/b has 1.']);
    expect(checkCalibrationLayout([], ['a'], 'calib')).toEqual(['calib contains no files.']);
  });

  it('places loose .npy files under the only input, and refuses them for multi-input models', () => {
    const npy = stripRoot(dropped()).files[0].bytes;
    const loose = [{ path: '0.npy', bytes: npy }, { path: '1.npy', bytes: npy }];
    expect(placeLooseNpy(loose, ['input']).files.map((f) => f.path)).toEqual(['input/0.npy', 'input/1.npy']);
    const { errors } = placeLooseNpy(loose, ['a', 'b']);
    expect(errors[0]).toMatch(/Loose \.npy files \(0\.npy, 1\.npy\).*2 inputs \(a, b\)/);
  });

  it('tells the model from data and skips OS junk files', () => {
    const files = [modelFile(), ...dropped(), { path: 'calibration_data/.DS_Store', bytes: new Uint8Array(4) },
      { path: '__MACOSX/calibration_data/input/._0.npy', bytes: new Uint8Array(4) }];
    const { model, data, errors } = classifyOpened(files);
    expect(errors).toEqual([]);
    expect(model.path).toBe('digits_cnn.onnx');
    expect(data.length).toBe(dropped().length);
    expect(data.every((f) => isNpy(f.bytes))).toBe(true);
    expect(classifyOpened([modelFile(), { ...modelFile(), path: 'b.onnx' }]).errors[0]).toMatch(/one model at a time/);
  });

  it('expands a .zip of calibration_data (fflate) into the same paths', () => {
    const entries = Object.fromEntries(dropped().map((f) => [f.path, f.bytes]));
    const zip = { path: 'calibration_data.zip', bytes: zipSync(entries) };
    const out = expandZips([zip]);
    expect(out.map((f) => f.path).sort()).toEqual(dropped().map((f) => f.path).sort());
    expect(() => expandZips([{ path: 'broken.zip', bytes: new Uint8Array([0x50, 0x4b, 3, 4, 0]) }])).toThrow(/broken\.zip/);
  });
});

describe('opener with the wasm core', () => {
  let engine;
  beforeAll(async () => {
    const ptq = await loadPtqModule();
    engine = directEngine(ptq);
  });

  it('opens model + dropped folder at once and publishes them in the store', async () => {
    const s = createStore();
    const opener = createOpener(s, engine);
    expect(await opener.openFiles([modelFile(), ...dropped()])).toBe(true);
    expect(s.get('error')).toBeNull();
    expect(s.get('modelName')).toBe('digits_cnn.onnx');
    expect(s.get('samples')).toMatchObject({ count: fs.readdirSync(path.join(digits.data, 'input')).length, folder: 'calibration_data' });
    expect(s.get('calibrationFiles')[0].path).toBe('input/0.npy');
  });

  it('a new model drops what belonged to the previous one: results, the comparison drawn on it, heat, selection', async () => {
    const s = createStore();
    const opener = createOpener(s, engine);
    await opener.openFiles([modelFile()]);
    s.setMany({ results: { schema: 'ptqscope.result' }, compare: { nameA: 'A', nameB: 'B' }, heat: { values: new Map() }, selection: 'Conv_0', picked: new Set(['Conv_0']) });
    expect(await opener.openFiles([modelFile()])).toBe(true);
    for (const key of ['results', 'compare', 'heat', 'selection']) expect(s.get(key), key).toBeNull();
    expect(s.get('picked').size).toBe(0);
  });

  it('reports a broken model in state "error" naming the file, and keeps the previous model', async () => {
    const s = createStore();
    const opener = createOpener(s, engine);
    await opener.openFiles([modelFile()]);
    const ok = await opener.openFiles([{ path: 'broken.onnx', bytes: new Uint8Array([8, 7, 0xff, 0xff, 0xff]) }]);
    expect(ok).toBe(false);
    expect(s.get('error')).toMatch(/^broken\.onnx: /);
    expect(s.get('modelName')).toBe('digits_cnn.onnx');
  });

  it('passes the core\'s dtype check through with the folder name', async () => {
    const s = createStore();
    const opener = createOpener(s, engine);
    await opener.openFiles([modelFile()]);
    const { encodeNpy } = await import('../../../web/cli/lib/npy.mjs');
    const bad = encodeNpy('float64', [1, 1, 8, 8], new Float64Array(64));
    expect(await opener.openCalibration([{ path: 'calib/input/0.npy', bytes: bad }])).toBe(false);
    expect(s.get('error')).toMatch(/^calib: Unexpected data type for input: input/);
  });

  it('finds the calibration folder inside a dropped output directory, ignoring the other files', async () => {
    const s = createStore();
    const dir = [
      { path: 'out/digits_cnn.onnx', bytes: modelFile().bytes },
      { path: 'out/test_images.npy', bytes: dropped()[0].bytes },
      { path: 'out/notes/readme.txt', bytes: new Uint8Array([65]) },
      ...dropped().map((f) => ({ ...f, path: `out/${f.path}` })),
    ];
    expect(findCalibrationRoot(dir.slice(1), ['input']).root).toBe('out/calibration_data');
    expect(await createOpener(s, engine).openFiles(dir)).toBe(true);
    expect(s.get('error')).toBeNull();
    expect(s.get('samples')).toMatchObject({ folder: 'calibration_data' });
    expect(findCalibrationRoot([{ path: 'a/b.npy', bytes: new Uint8Array() }], ['input'])).toBeNull();
  });

  it('takes loose .npy files dropped with a one-input model', async () => {
    const s = createStore();
    const loose = dropped().slice(0, 3).map((f) => ({ ...f, path: f.path.split('/').pop() }));
    expect(await createOpener(s, engine).openFiles([modelFile(), ...loose])).toBe(true);
    expect(s.get('samples').count).toBe(3);
    expect(s.get('calibrationFiles').map((f) => f.path)).toEqual(['input/0.npy', 'input/1.npy', 'input/10.npy']);
  });

  it('a model with external data: its side file dropped with it (and its data) is kept for the workers, not taken for a sample', async () => {
    const entry = fixture('digits_cnn_calibrated_external');
    const folder = 'model_dir';
    const model = { path: `${folder}/${path.basename(entry.model)}`, bytes: new Uint8Array(fs.readFileSync(entry.model)) };
    const side = { path: `${folder}/${entry.external_data}`, bytes: new Uint8Array(fs.readFileSync(path.join(path.dirname(entry.model), entry.external_data))) };
    const data = dropped().map((f) => ({ ...f, path: `${folder}/${f.path}` }));
    const alone = createStore();
    expect(await createOpener(alone, engine).openFiles([model])).toBe(false);
    expect(alone.get('error')).toContain(`its tensors are stored in the external file '${entry.external_data}', not opened with it`);

    const s = createStore();
    expect(await createOpener(s, engine).openFiles([side, model, ...data])).toBe(true);
    expect(s.get('error')).toBeNull();
    expect(s.get('externalFiles')).toEqual([{ path: entry.external_data, bytes: side.bytes }]);
    expect(s.get('calibrationFiles').length).toBe(data.length);
    expect(s.get('summary').calibrations.length).toBeGreaterThan(0);
  });

  it('holds data opened before its model and checks it once the model is read', async () => {
    const s = createStore();
    const opener = createOpener(s, engine);
    expect(await opener.openFiles(dropped())).toBe(true);
    expect(s.get('error')).toBeUndefined();
    expect(s.get('heldData')).toEqual({ label: 'calibration_data', files: dropped().length, reading: false });
    expect(s.get('calibrationFiles')).toBeUndefined();
    expect(await opener.openFiles([modelFile()])).toBe(true);
    expect(s.get('heldData')).toBeNull();
    expect(s.get('samples')).toEqual({ count: dropped().length, names: expect.any(Array), folder: 'calibration_data' });
    expect(s.get('calibrationFiles').length).toBe(dropped().length);
  });

  it('holds data picked while a model is being read, against that model (not the one shown before)', async () => {
    const s = createStore();
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    // The second model's read waits until the data has been picked.
    const slow = { ...engine, loadModel: async (...a) => (await gate, engine.loadModel(...a)) };
    const opener = createOpener(s, engine);
    await opener.openFiles([modelFile()]);
    const gated = createOpener(s, slow);
    const reading = gated.openFiles([{ ...modelFile(), path: 'again.onnx' }]);
    const picked = gated.openCalibration(dropped());
    expect(await picked).toBe(true);
    expect(s.get('heldData')).toEqual({ label: 'calibration_data', files: dropped().length, reading: true });
    release();
    expect(await reading).toBe(true);
    expect(s.get('modelName')).toBe('again.onnx');
    expect(s.get('heldData')).toBeNull();
    expect(s.get('samples').count).toBe(dropped().length);
    expect(s.get('error')).toBeNull();
  });

  it('keeps held data when the model fails to load, for the next model', async () => {
    const s = createStore();
    const opener = createOpener(s, engine);
    await opener.openFiles(dropped());
    expect(await opener.openFiles([{ path: 'broken.onnx', bytes: new Uint8Array([8, 7, 0xff, 0xff, 0xff]) }])).toBe(false);
    expect(s.get('heldData').reading).toBe(false);
    expect(await opener.openFiles([modelFile()])).toBe(true);
    expect(s.get('samples').count).toBe(dropped().length);
  });
});

// The page's opener routes toolchain reports (web/app/open/open.mjs → web/app/reports/controller.mjs):
// with the model and its data in one drop, alone after the model, before the model (placed once the
// model is there), inside a dropped output folder; a chosen file that is no report is an error naming
// it, and a text file inside a calibration folder alone is still named by the layout check.
import { describe, it, expect, beforeAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, fixture, loadPtqModule, readCalibrationFolder } from '../helpers.mjs';
import { createOpener } from '../../../web/app/open/open.mjs';
import { directEngine } from '../../../web/app/graph/engine_core.mjs';
import { createReportController } from '../../../web/app/reports/controller.mjs';
import { createStore, DEFAULTS } from '../../../web/app/state.mjs';

const digits = fixture('digits_cnn_calibrated');
const dropped = () => readCalibrationFolder(digits.data).map((f) => ({ path: `calibration_data/${f.path}`, bytes: new Uint8Array(f.bytes) }));
const modelFile = () => ({ path: 'digits_cnn_calibrated_model.onnx', bytes: new Uint8Array(fs.readFileSync(digits.model)) });
const report = (name, as = name) => ({ path: as, bytes: new Uint8Array(fs.readFileSync(path.join(REPO_ROOT, 'tests/fixtures/reports', name))) });

let engine;
beforeAll(async () => {
  const ptq = await loadPtqModule();
  engine = directEngine(ptq);
});

function page() {
  const s = createStore({ ...DEFAULTS, picked: new Set() });
  createReportController(s);
  return { s, opener: createOpener(s, engine) };
}

describe('opening reports on the page', () => {
  it('model, calibration_data and a report in one drop: all three, the report placed on the model', async () => {
    const { s, opener } = page();
    expect(await opener.openFiles([modelFile(), ...dropped(), report('error_analysis.txt')])).toBe(true);
    expect(s.get('error')).toBeNull();
    expect(s.get('samples').count).toBeGreaterThan(0);
    const rep = s.get('report');
    expect(rep.report.format).toBe('rknn');
    expect(rep.mapped.matched).toBe(14);
    expect(s.get('heatSettings')).toMatchObject({ view: 'report', metric: 'simulator entire cos' });
  });

  it('a report opened before the model is placed once the model is there', async () => {
    const { s, opener } = page();
    expect(await opener.openFiles([report('hb_mapper_makertbin.log')])).toBe(true);
    expect(s.get('report').mapped.matched).toBe(0);
    expect(await opener.openFiles([modelFile()])).toBe(true);
    expect(s.get('report').mapped.matched).toBe(8);
  });

  it('inside a dropped output folder: reports taken, other text files left alone', async () => {
    const { s, opener } = page();
    const dir = [
      { path: 'out/digits_cnn_calibrated_model.onnx', bytes: modelFile().bytes },
      { path: 'out/README.txt', bytes: new TextEncoder().encode('notes') },
      { path: 'out/snapshot/error_analysis.txt', bytes: report('error_analysis.txt').bytes },
      ...dropped().map((f) => ({ ...f, path: `out/${f.path}` })),
    ];
    expect(await opener.openFiles(dir)).toBe(true);
    expect(s.get('error')).toBeNull();
    expect(s.get('report').name).toBe('out/snapshot/error_analysis.txt');
  });

  it('a chosen file that is no report: the error names it; the model and data stay', async () => {
    const { s, opener } = page();
    await opener.openFiles([modelFile(), ...dropped()]);
    expect(await opener.openFiles([{ path: 'notes.txt', bytes: new TextEncoder().encode('hello') }])).toBe(false);
    expect(s.get('error')).toMatch(/^notes\.txt: not a report ptqscope reads/);
    expect(s.get('samples').count).toBeGreaterThan(0);
    expect(s.get('report')).toBeNull();
  });

  it('a text file inside a calibration folder opened alone is named by the layout check', async () => {
    const { s, opener } = page();
    await opener.openFiles([modelFile()]);
    const files = [...dropped(), { path: 'calibration_data/input/notes.txt', bytes: new TextEncoder().encode('x') }];
    expect(await opener.openFiles(files)).toBe(false);
    expect(s.get('error')).toContain('calibration_data/input/notes.txt is not a .npy file');
  });
});

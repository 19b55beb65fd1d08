// A model with an op the core does not run (tests/js/unsupported_op_model.mjs): the commands that
// run the model exit 2 naming the op and saying which commands still work; those commands work on
// the weight calibration node, with the statistics computed by hand.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli_fixture.mjs';
import { UNSUPPORTED, WEIGHT, writeUnsupportedOpModel } from './unsupported_op_model.mjs';

let tmp;
let files;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-unsupported-'));
  files = writeUnsupportedOpModel(tmp);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const STILL = 'Without running the model, these commands work on weight calibration nodes (-n/--nodes_list): ' +
  'plot-distribution, get-calibration-nodes-stat-info';

describe('a model with an unsupported op on the command line', () => {
  const needRun = [
    ['get-sensitivity-of-nodes', [], 'sensitivity'],
    ['leave-one-out', [], 'leave_one_out'],
    ['node-errors', [], 'node_errors'],
    // Asked for an activation, the analyses that need a run only for activations fail the same way.
    ['get-calibration-nodes-stat-info', ['-n', 'x_HzCalibration'], 'stat_info'],
    ['plot-distribution', ['-n', 'x_HzCalibration'], 'distribution'],
  ];
  for (const [command, args, analysis] of needRun) {
    it(`${command} ${args.join(' ')} exits 2 naming the op and what still works`, async () => {
      // In tmp: output folders a command defaults to (./debug_result/) stay there.
      const r = await cli([command, files.model, files.data, ...args, '--quiet', '--workers', '1'], { cwd: tmp });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`cannot run ${analysis}: the model uses 1 node(s) with unsupported ops: ${UNSUPPORTED}`);
      expect(r.stderr).toContain(STILL);
      expect(r.stderr).not.toContain('internal error');
    });
  }

  it('run exits 2 naming the op', async () => {
    const r = await cli(['run', files.model, files.data, '--quant', 'on', '--out', path.join(tmp, 'run-out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot run: the model uses 1 node(s) with unsupported ops: ${UNSUPPORTED}`);
  });

  it('get-calibration-nodes-stat-info works on the weight calibration node', async () => {
    const json = path.join(tmp, 'stat.json');
    const r = await cli(['get-calibration-nodes-stat-info', files.model, files.data, '-n', 'w_HzCalibration', '--json', json, '--quiet', '--workers', '1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const w = JSON.parse(fs.readFileSync(json, 'utf8')).stat_info.w_HzCalibration;
    // Per output channel (rows of [2, 2]): max |w| and the smallest non-zero |w|.
    const rows = [WEIGHT.slice(0, 2), WEIGHT.slice(2)];
    expect(w.max_vals).toEqual(rows.map((r) => Math.max(...r.map(Math.abs))));
    expect(w.min_nz_vals).toEqual(rows.map((r) => Math.min(...r.map(Math.abs))));
    expect(w.thresholds).toEqual([1.25, 2]);
    expect(w.tensor_type).toBe('weight');
  });

  it('get-calibration-nodes-stat-info with its default list gives the weight node and names the feature node left out', async () => {
    const json = path.join(tmp, 'stat-default.json');
    const r = await cli(['get-calibration-nodes-stat-info', files.model, files.data, '--json', json, '--workers', '1'], { cwd: tmp });
    expect(r.code).toBe(0);
    const message = `1 feature calibration node(s) left out: their statistics need a run of the model, and the model uses 1 node(s) with unsupported ops: ${UNSUPPORTED}`;
    expect(r.stderr).toContain(message);
    const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(doc.stat_info_order).toEqual(['w_HzCalibration']);
    expect(doc.stat_info_messages).toEqual([message]);
  });

  it('plot-distribution works on the weight calibration node', async () => {
    const json = path.join(tmp, 'dist.json');
    const r = await cli(['plot-distribution', files.model, files.data, '-n', 'w_HzCalibration', '-s', path.join(tmp, 'dist'), '--json', json, '--quiet', '--workers', '1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(JSON.stringify(doc.distribution)).toContain('w_HzCalibration');
  });
});

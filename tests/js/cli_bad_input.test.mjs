// Bad input to the analysis sub-commands: exit code 2 and a message naming the file / option at
// fault (§10.1 texts where the original has one); nothing is written.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibratedDigits, cli } from './cli_fixture.mjs';

const { model, data } = calibratedDigits();

describe('analysis sub-commands: bad input exits with 2', () => {
  let tmp;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-bad-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('a missing model, a corrupt model, a data path that is not a directory, a bad .npy', async () => {
    const corrupt = path.join(tmp, 'corrupt.onnx');
    fs.writeFileSync(corrupt, fs.readFileSync(model).subarray(0, 999));
    const notDir = path.join(tmp, 'file.txt');
    fs.writeFileSync(notDir, 'x');
    const badData = path.join(tmp, 'bad_data');
    fs.mkdirSync(path.join(badData, 'input'), { recursive: true });
    fs.writeFileSync(path.join(badData, 'input', '0.npy'), 'not a numpy file');
    const missing = path.join(tmp, 'missing.onnx');
    const cases = [
      [['get-sensitivity-of-nodes', missing, data], `model file not found: ${missing}`],
      [['get-sensitivity-of-nodes', corrupt, data, '--workers', '2'], 'corrupt.onnx'],
      [['runall', model, notDir, '-s', path.join(tmp, 'out1/')], `${notDir} is not a directory.`], // §10.1 text
      [['plot-acc-error', model, badData, '-s', path.join(tmp, 'out2/')], /bad_data.*0\.npy|0\.npy.*bad_data/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i];
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(2);
      if (message instanceof RegExp) expect(r.stderr).toMatch(message);
      else expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    });
    expect(fs.existsSync(path.join(tmp, 'out1'))).toBe(false);
    expect(fs.existsSync(path.join(tmp, 'out2'))).toBe(false);
  });

  it('bad options: click-style messages, exit 2', async () => {
    const cases = [
      [['get-sensitivity-of-nodes', model, data, '-v', 'maybe'], "Invalid value for '-v' / '--verbose': 'maybe' is not a valid boolean."],
      [['get-sensitivity-of-nodes', model, data, '-n', 'tae'], "'tae' is not one of 'node', 'weight', 'activation'."],
      [['plot-distribution', model, data], "Missing option '-n' / '--nodes_list'."],
      [['runall', model], "Missing argument 'CALIBRATED_DATA'."],
      [['runall', model, data, '-nqn', '[weight]'], "In acc_error section, cannot set 'non_quantize_node' to 'weight' or 'activation'."],
      [['runall', model, data, '-nt', 'tae'], 'node_type:tae is unavailable.'],
      [['plot-acc-error', model, data, '-q', '[a'], "Invalid value for '-q' / '--quantize_node'"],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    results.forEach((r, i) => {
      expect(r.code, cases[i][0].join(' ')).toBe(2);
      expect(r.stderr).toContain(cases[i][1]);
    });
  });

  it('ptqscope itself not ready (no wasm build): exit 1, not 2', async () => {
    const r = await cli(['get-sensitivity-of-nodes', model, data], { env: { PTQSCOPE_WASM: path.join(tmp, 'none.mjs') } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(tmp, 'none.mjs')} not found`);
  });
});

// (d) `ptqscope run` on the calibrated digits example writes DIR/sample_<k>/<output index>.npy for every sample
// (lexicographic order) with the model's outputs; bad input exits with code 2 and a clear message.
// The native tool (build/native-release/ptqscope), when built, must write the same values.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, decodeNpy, fixture, openSession, runCopy } from './helpers.mjs';

const CLI = path.join(REPO_ROOT, 'web/cli/ptqscope.mjs');
const NATIVE = path.join(REPO_ROOT, 'build/native-release/ptqscope');
// The calibrated example: --quant on fake-quantizes (the float model would make on = off).
const entry = fixture('digits_cnn_calibrated');
const sampleNames = fs.readdirSync(path.join(entry.data, 'input')).sort();

function cli(args, command = [process.execPath, CLI]) {
  const r = spawnSync(command[0], [...command.slice(1), ...args], { encoding: 'utf8', timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// {sample_k: {i.npy: decoded}} of an output folder.
function readOutputs(dir) {
  const out = {};
  for (const s of fs.readdirSync(dir).sort()) {
    out[s] = {};
    for (const f of fs.readdirSync(path.join(dir, s)).sort()) out[s][f] = decodeNpy(fs.readFileSync(path.join(dir, s, f)));
  }
  return out;
}

describe('ptqscope run', () => {
  let tmp;
  let expected; // {on, off}: per sample index, the wasm outputs computed through the API
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-'));
    const { session } = await openSession(entry);
    expected = {
      on: sampleNames.map((_, k) => runCopy(session, k, 'stored')), // the CLI's "on" = as saved
      off: sampleNames.map((_, k) => runCopy(session, k, 'off')),
    };
    session.delete();
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  for (const quant of ['on', 'off']) {
    it(`--quant ${quant} writes one .npy per sample and output`, () => {
      const out = path.join(tmp, `js-${quant}`);
      // Progress on stderr as the analysis commands show it (not a terminal: the stage, then the bar
      // when done), none with --quiet.
      const quiet = quant === 'off';
      const r = cli(['run', entry.model, entry.data, '--quant', quant, '--out', out, ...(quiet ? ['--quiet'] : [])]);
      const n = sampleNames.length;
      expect(r.stderr).toBe(quiet ? '' : `Running ${n} samples (quant ${quant})\n  [${'#'.repeat(24)}] ${n}/${n}\n`);
      expect(r.code).toBe(0);
      const written = readOutputs(out);
      expect(Object.keys(written).sort()).toEqual(sampleNames.map((_, k) => `sample_${k}`).sort());
      sampleNames.forEach((_, k) => {
        const files = written[`sample_${k}`];
        expect(Object.keys(files)).toEqual(['0.npy']);
        expect(files['0.npy'].dtype).toBe('float32');
        expect(files['0.npy'].dims).toEqual([1, 10]);
        // sample_k is the k-th file in lexicographic order.
        expect(files['0.npy'].data).toEqual(expected[quant][k][0].data);
      });
    });
  }

  it('quantization changes the outputs (on != off)', () => {
    expect(expected.on.some((o, k) => o[0].data.some((v, i) => v !== expected.off[k][0].data[i]))).toBe(true);
  });

  it('exits with 2 and a clear message on bad input', () => {
    const out = path.join(tmp, 'bad');
    const cases = [
      [['run', entry.model, '--quant', 'on', '--out', out], /expected 2 arguments/],
      [['run', entry.model], /missing option --quant/],
      [['run', entry.model, entry.data, '--out', out], /missing option --quant/],
      [['run', entry.model, entry.data, '--quant', 'maybe', '--out', out], /--quant must be one of on, off/],
      [['run', entry.model, entry.data, '--quant', 'on', '--out', out, '--fast', '1'], /unknown option --fast/],
      [['run', path.join(tmp, 'missing.onnx'), entry.data, '--quant', 'on', '--out', out], /model file not found/],
      [['run', entry.model, path.join(tmp, 'nowhere'), '--quant', 'on', '--out', out], /is not a directory\./],
      [['explode'], /unknown command 'explode'/],
    ];
    for (const [args, message] of cases) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('exits with 2 on a corrupt model or bad data, naming the file', () => {
    const corrupt = path.join(tmp, 'corrupt.onnx');
    fs.writeFileSync(corrupt, fs.readFileSync(entry.model).subarray(0, 1000));
    let r = cli(['run', corrupt, entry.data, '--quant', 'off', '--out', path.join(tmp, 'c')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('corrupt.onnx');

    const badData = path.join(tmp, 'bad_data', 'input');
    fs.mkdirSync(badData, { recursive: true });
    fs.writeFileSync(path.join(badData, '0.npy'), 'not a numpy file');
    r = cli(['run', entry.model, path.dirname(badData), '--quant', 'off', '--out', path.join(tmp, 'd')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: .+/);
  });

  it.skipIf(!fs.existsSync(NATIVE))('the native tool writes the same outputs', () => {
    const jsOut = path.join(tmp, 'js-cmp');
    const nativeOut = path.join(tmp, 'native-cmp');
    expect(cli(['run', entry.model, entry.data, '--quant', 'on', '--out', jsOut]).code).toBe(0);
    const r = cli(['run', entry.model, entry.data, '--quant', 'on', '--out', nativeOut], [NATIVE]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const js = readOutputs(jsOut);
    const native = readOutputs(nativeOut);
    expect(Object.keys(native)).toEqual(Object.keys(js));
    for (const [sample, files] of Object.entries(js)) {
      for (const [f, t] of Object.entries(files)) {
        expect(native[sample][f].dims).toEqual(t.dims);
        // Native (x86 SIMD) and wasm kernels may sum in different orders: same tolerance as conformance.
        let diff = 0;
        let ref = 1e-6;
        t.data.forEach((v, i) => {
          diff = Math.max(diff, Math.abs(v - native[sample][f].data[i]));
          ref = Math.max(ref, Math.abs(v));
        });
        expect(diff / ref, `${sample}/${f}`).toBeLessThanOrEqual(1e-4);
      }
    }
    expect(cli(['run', entry.model], [NATIVE]).code).toBe(2);
  });
});

// Output paths and input folders as users have them: lib/outputs.mjs (checks before any work,
// temporary names renamed at the end, a failed run's folders removed) and lib/files.mjs (symbolic
// links followed, file names that are not UTF-8 named in the error, FIFOs never opened), then the
// same through the CLI.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutputs, makeOutputDir, withOutputs, writeOutput } from '../../web/cli/lib/outputs.mjs';
import { readCalibrationFolder, showName } from '../../web/cli/lib/files.mjs';
import { calibratedDigits, cli } from './cli_fixture.mjs';

const { model, data } = calibratedDigits();
let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-outputs-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const messageOf = (fn) => {
  try {
    fn();
  } catch (err) {
    return err.message;
  }
  return null;
};

// Every path under dir, relative.
function listing(dir) {
  const out = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      out.push(path.join(rel, e.name));
      if (e.isDirectory()) walk(path.join(rel, e.name));
    }
  };
  walk('');
  return out.sort();
}

describe('checkOutputs', () => {
  it('accepts new files and folders, existing folders and files', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ok-'));
    fs.writeFileSync(path.join(dir, 'old.json'), '{}');
    expect(() => checkOutputs([
      { path: path.join(dir, 'new', 'deeper', 'r.json'), kind: 'file', option: '--json' },
      { path: path.join(dir, 'old.json'), kind: 'file', option: '--out' },
      { path: dir, kind: 'dir', option: '--save_dir' },
      { path: path.join(dir, 'charts'), kind: 'dir', option: '-s' },
      { path: null, kind: 'file', option: '--qdq' },
    ])).not.toThrow();
    expect(listing(dir)).toEqual(['old.json']); // the probes leave nothing
  });

  it('names the option, the path and the reason, for every bad path at once', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'bad-'));
    const file = path.join(dir, 'a.txt');
    fs.writeFileSync(file, 'x');
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    const m = messageOf(() => checkOutputs([
      { path: dir, kind: 'file', option: '--json' },
      { path: file, kind: 'dir', option: '--save_dir' },
      { path: path.join(file, 'x', 'r.json'), kind: 'file', option: '--out' },
      { path: path.join(dir, 'fifo'), kind: 'file', option: '--qdq' },
      { path: '/proc/ptqscope-test', kind: 'dir', option: '-s' },
    ]));
    expect(m).toContain(`--json ${dir}: cannot write the output file: is a directory`);
    expect(m).toContain(`--save_dir ${file}: cannot write the output folder: exists and is a file, not a directory`);
    expect(m).toContain(`--out ${path.join(file, 'x', 'r.json')}: cannot write the output file: ${file} is a file, not a directory`);
    expect(m).toContain(`--qdq ${path.join(dir, 'fifo')}: cannot write the output file: exists and is a FIFO`);
    expect(m).toContain('-s /proc/ptqscope-test: cannot write the output folder: nothing can be created in /proc');
    expect(messageOf(() => checkOutputs([
      { path: path.join(dir, 'c.onnx'), kind: 'file', option: '--out' },
      { path: path.join(dir, 'c.onnx'), kind: 'file', option: '--qdq' },
    ]))).toContain('the same file as --out');
  });
});

describe('withOutputs', () => {
  it('writes under temporary names and renames everything when the run succeeds', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'commit-'));
    await withOutputs(() => {
      writeOutput(path.join(dir, 'tree', 'a.svg'), 'A');
      writeOutput(path.join(dir, 'tree', 'sub', 'b.txt'), 'B');
      // Before the end only hidden temporaries exist.
      expect(listing(dir).filter((p) => !path.basename(p).startsWith('.') && !fs.statSync(path.join(dir, p)).isDirectory())).toEqual([]);
    });
    expect(listing(dir)).toEqual(['tree', 'tree/a.svg', 'tree/sub', 'tree/sub/b.txt']);
    expect(fs.readFileSync(path.join(dir, 'tree', 'sub', 'b.txt'), 'utf8')).toBe('B');
  });

  it('a failed run removes its temporaries and the folders it created, and keeps what was there', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'abort-'));
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'old');
    await expect(withOutputs(() => {
      writeOutput(path.join(dir, 'keep.txt'), 'new');
      makeOutputDir(path.join(dir, 'made', 'deep'));
      writeOutput(path.join(dir, 'made', 'deep', 'c.png'), 'C');
      throw new Error('the run failed');
    })).rejects.toThrow('the run failed');
    expect(listing(dir)).toEqual(['keep.txt']);
    expect(fs.readFileSync(path.join(dir, 'keep.txt'), 'utf8')).toBe('old');
  });

  it('writes through an existing symbolic link', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'link-'));
    fs.writeFileSync(path.join(dir, 'real.json'), '{}');
    fs.symlinkSync(path.join(dir, 'real.json'), path.join(dir, 'link.json'));
    await withOutputs(() => writeOutput(path.join(dir, 'link.json'), '[1]'));
    expect(fs.lstatSync(path.join(dir, 'link.json')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'real.json'), 'utf8')).toBe('[1]');
  });
});

describe('readCalibrationFolder', () => {
  it('follows symbolic links to sample files, input folders and the folder itself', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'links-'));
    const store = path.join(dir, 'store');
    fs.cpSync(path.join(data, 'input'), store, { recursive: true });
    const samples = fs.readdirSync(store).sort();
    // data1: the input folder is a link; data2: the sample files are links; data3: a link to data1.
    fs.mkdirSync(path.join(dir, 'data1'));
    fs.symlinkSync(store, path.join(dir, 'data1', 'input'));
    fs.mkdirSync(path.join(dir, 'data2', 'input'), { recursive: true });
    for (const s of samples) fs.symlinkSync(path.join(store, s), path.join(dir, 'data2', 'input', s));
    fs.symlinkSync(path.join(dir, 'data1'), path.join(dir, 'data3'));
    const expected = readCalibrationFolder(data);
    for (const d of ['data1', 'data2', 'data3']) {
      const files = readCalibrationFolder(path.join(dir, d));
      expect(files.map((f) => f.path), d).toEqual(expected.map((f) => f.path));
      expect(files.every((f, i) => Buffer.compare(f.bytes, expected[i].bytes) === 0), d).toBe(true);
    }
  });

  it('names what it cannot read: a name that is not UTF-8, a FIFO, a broken link, a link loop', () => {
    const make = (name) => {
      const root = path.join(tmp, name);
      fs.cpSync(data, root, { recursive: true });
      return root;
    };
    const bytes = make('bytes');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${bytes}/input/x`), Buffer.from([0xc3, 0x28]), Buffer.from('.npy')]), 'x');
    expect(messageOf(() => readCalibrationFolder(bytes))).toBe(`${bytes}/input/x\\xc3(.npy: the file name is not valid UTF-8; rename it`);
    const fifo = make('fifo');
    execFileSync('mkfifo', [path.join(fifo, 'input', 'f.npy')]);
    expect(messageOf(() => readCalibrationFolder(fifo))).toBe(`${fifo}/input/f.npy is a FIFO, not a file`);
    const broken = make('broken');
    fs.symlinkSync(path.join(tmp, 'nowhere'), path.join(broken, 'input', 'l.npy'));
    expect(messageOf(() => readCalibrationFolder(broken))).toMatch(new RegExp(`^${broken}/input/l\\.npy is a broken symbolic link`));
    const loop = make('loop');
    fs.symlinkSync(loop, path.join(loop, 'input', 'again'));
    expect(messageOf(() => readCalibrationFolder(loop))).toMatch(new RegExp(`^${loop}/input/again is a symbolic link loop`));
    expect(showName(Buffer.from([0x61, 0xe2, 0x82, 0xac, 0xff]))).toBe('a€\\xff');
  });
});

describe('through the CLI', () => {
  it('runs on a calibration folder made of symbolic links', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-links-'));
    fs.mkdirSync(path.join(dir, 'data'));
    fs.symlinkSync(path.join(data, 'input'), path.join(dir, 'data', 'input'));
    fs.symlinkSync(model, path.join(dir, 'model.onnx'));
    const r = await cli(['run', path.join(dir, 'model.onnx'), path.join(dir, 'data'), '--quant', 'off', '--out', path.join(dir, 'out'), '--quiet']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(fs.readdirSync(path.join(dir, 'out')).length).toBe(fs.readdirSync(path.join(data, 'input')).length);
  });

  it('a run that fails while writing leaves no result that looks complete', async () => {
    // runall's tree under out/: accumulate_error is a file, so writing its charts fails after the work.
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-fail-'));
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, 'accumulate_error'), 'in the way');
    const r = await cli(['runall', model, data, '-s', out, '--json', path.join(dir, 'results.json'), '--png', 'False', '--quiet', '--workers', '1']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(path.join(out, 'accumulate_error'));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(listing(dir)).toEqual(['out', 'out/accumulate_error']);
  });

  it('fix: a run that fails while writing its chart leaves neither --json nor --config-out', async () => {
    // fix_path.svg is a folder in the chart folder: the search runs, then writing the chart fails.
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-fix-fail-'));
    fs.mkdirSync(path.join(dir, 'charts', 'fix_path.svg'), { recursive: true });
    const r = await cli(['fix', model, data, '--target', 'cosine-similarity>=0.99999', '-s', path.join(dir, 'charts'),
      '--json', path.join(dir, 'fix.json'), '--config-out', path.join(dir, 'found', 'fix.config.json'), '--quiet', '--workers', '1']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(path.join(dir, 'charts', 'fix_path.svg'));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).not.toContain('configuration written');
    expect(listing(dir)).toEqual(['charts', 'charts/fix_path.svg']);
  });

  it('fix and export-config write their files when the run succeeds', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-fix-ok-'));
    const config = path.join(dir, 'found', 'fix.config.json');
    const fix = await cli(['fix', model, data, '--target', 'cosine-similarity>=0.99999', '-s', path.join(dir, 'charts'),
      '--json', path.join(dir, 'fix.json'), '--config-out', config, '--quiet', '--workers', '1']);
    expect(fix.code, fix.stderr).toBe(0);
    expect(fix.stdout).toContain(`fix: configuration written to ${config}`);
    const out = path.join(dir, 'yaml', 'node_info.yaml');
    const exp = await cli(['export-config', config, '--model', model, '--format', 'horizon-yaml', '--out', out]);
    expect(exp.code, exp.stderr).toBe(0);
    expect(listing(dir)).toEqual(['charts', 'charts/fix_path.png', 'charts/fix_path.svg', 'fix.json', 'found', 'found/fix.config.json',
      'yaml', 'yaml/node_info.yaml']);
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual(JSON.parse(fs.readFileSync(path.join(dir, 'fix.json'), 'utf8')).config);
  });

  it('bad output paths are refused before any work, naming the path', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-early-'));
    fs.writeFileSync(path.join(dir, 'f'), 'x');
    const r = await cli(['get-sensitivity-of-nodes', model, path.join(dir, 'no-data-here'), '--json', path.join(dir, 'f', 'r.json')]);
    // The output is checked first: the missing data folder is not reached.
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--json ${path.join(dir, 'f', 'r.json')}: cannot write the output file: ${path.join(dir, 'f')} is a file`);
    expect(r.stderr).not.toContain('no-data-here');
  });
});

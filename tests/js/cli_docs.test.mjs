// Every `ptqscope ...` command shown in README.md, web/cli/README.md and docs/**/*.md runs: extracted
// by tests/js/doc_commands.mjs (fenced code blocks; synopsis notation expanded), run against the
// example (the calibrated digits CNN and its calibration_data). Each command runs in a fresh working
// folder holding the example under the placeholder names the docs use (MODEL, DATA, FLOAT.onnx,
// calibrated_model.onnx, calibration_data, CONFIG, ...) and `.cache` (the repository's fixtures, for
// commands written with their paths), so relative outputs land there. A command that reads a file an
// earlier command of the same page writes (`export-config fix.config.json` after `fix --config-out
// fix.config.json`) runs after that command in the same folder. A block whose commands use shell
// variables (`M=...; ptqscope node-errors $M $D`) runs whole as a shell script. A command must end
// with the exit code its line states (`# exit N`, default 0) and never with a stack trace.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './cli_fixture.mjs';
import { REPO_ROOT, fixture } from './helpers.mjs';
import { documentedCommands, documentedScripts, expandSynopsis, shellWords, usesShellVariables, writtenFiles } from './doc_commands.mjs';

// The names a documented command may use for the example's files.
const PLACEHOLDERS = {
  calibrated: ['MODEL', 'MODEL_OR_FILE', 'CALIBRATED_MODEL', 'calibrated_model.onnx', 'model.onnx'],
  float: ['FLOAT', 'FLOAT.onnx', 'FLOAT_MODEL', 'float.onnx', 'float_model.onnx'],
  data: ['DATA', 'CALIBRATED_DATA', 'CALIBRATION_DATA', 'calibration_data'],
  config: ['CONFIG'],
};
// CONFIG: a configuration document (docs/config-schema.md) for the example: one convolution at int16.
const EXAMPLE_CONFIG = { schema: 'ptqscope.config', version: 1, intents: [{ node: '/features/features.3/Conv', action: 'int16' }] };
// Values the docs leave to the reader (`--max-nodes N`).
const VALUES = { N: '2' };

// Documented commands that cannot run in this test, each with the reason. Matched on the command's
// text (`file:line` of the docs is in the test name). None at present: every command shown runs.
const EXCEPTIONS = [];

const CONCURRENCY = 3;
const TIMEOUT_MS = 300_000;
const SCRIPT_TIMEOUT_MS = 900_000;

const { model, data } = fixture('digits_cnn_calibrated');
const floatModel = fixture('digits_cnn').model;
const documented = documentedCommands(REPO_ROOT).map((c) => ({ ...c, args: c.args.map((a) => VALUES[a] ?? a) }));
const commands = documented.filter((c) => !usesShellVariables(c) && !EXCEPTIONS.some((e) => e.match.test(c.text)));
const scripts = documentedScripts(REPO_ROOT);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-docs-'));

// `ptqscope` for the scripts: the repository's CLI.
const bin = path.join(tmp, 'bin');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'ptqscope'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, { mode: 0o755 });

function prepare(dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of PLACEHOLDERS.calibrated) fs.copyFileSync(model, path.join(dir, name));
  for (const name of PLACEHOLDERS.float) fs.copyFileSync(floatModel, path.join(dir, name));
  for (const name of PLACEHOLDERS.data) fs.cpSync(data, path.join(dir, name), { recursive: true });
  for (const name of PLACEHOLDERS.config) fs.writeFileSync(path.join(dir, name), JSON.stringify(EXAMPLE_CONFIG));
  // Commands written from the repository root: its fixtures (the generated ones and the report samples
  // of tests/fixtures) and `node web/cli/ptqscope.mjs`.
  fs.symlinkSync(path.join(REPO_ROOT, '.cache'), path.join(dir, '.cache'));
  fs.symlinkSync(path.join(REPO_ROOT, 'web'), path.join(dir, 'web'));
  fs.mkdirSync(path.join(dir, 'tests'));
  fs.symlinkSync(path.join(REPO_ROOT, 'tests/fixtures'), path.join(dir, 'tests/fixtures'));
}

// The earlier commands of the same page that write a file `c` reads, each before its own prerequisites' users.
function prerequisites(c) {
  const needed = [];
  const visit = (cmd) => {
    const written = writtenFiles(cmd.args);
    const reads = cmd.args.filter((a) => !written.includes(a));
    for (const e of documented) {
      if (e.file !== cmd.file || e.line >= cmd.line || needed.includes(e)) continue;
      if (writtenFiles(e.args).some((f) => reads.includes(f))) {
        visit(e);
        needed.push(e);
      }
    }
  };
  visit(c);
  return needed;
}

function run(command, args, cwd, timeout) {
  return new Promise((resolve) => {
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let hung = false;
    const timer = setTimeout(() => { hung = true; child.kill('SIGKILL'); }, timeout);
    child.stdout.resume();
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stderr, hung }); });
  });
}

async function runCommand(c, cwd) {
  const before = [];
  for (const p of prerequisites(c)) {
    const r = await run(process.execPath, [CLI, ...p.args], cwd, TIMEOUT_MS);
    before.push(`(first ${p.file}:${p.line}: exit ${r.code})\n${r.stderr}`);
  }
  const r = await run(process.execPath, [CLI, ...c.args], cwd, TIMEOUT_MS);
  return { ...r, before: before.join('') };
}

const results = [];
const scriptResults = [];
beforeAll(async () => {
  const queue = [
    ...commands.map((c, i) => async () => { results[i] = await runCommand(c, path.join(tmp, String(i))); }),
    ...scripts.map((s, i) => async () => { scriptResults[i] = await run('bash', ['-e', '-c', s.script], path.join(tmp, `script-${i}`), SCRIPT_TIMEOUT_MS); }),
  ];
  commands.forEach((c, i) => prepare(path.join(tmp, String(i))));
  scripts.forEach((s, i) => prepare(path.join(tmp, `script-${i}`)));
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (queue.length) await queue.shift()();
  }));
}, 2_400_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('documented commands', () => {
  it('the docs show commands of every sub-command in the README', () => {
    const shown = new Set(commands.filter((c) => c.file === 'README.md').map((c) => c.args[0]));
    for (const sub of ['get-sensitivity-of-nodes', 'plot-acc-error', 'plot-distribution', 'get-channelwise-data-distribution',
      'sensitivity-analysis', 'runall', 'leave-one-out', 'get-calibration-nodes-stat-info', 'calibrate', 'run', 'node-errors',
      'fix', 'export-config', 'import-report', 'merge']) {
      expect(shown.has(sub), sub).toBe(true);
    }
  });

  it('every documented command runs here: alone, after the command it needs, or in its script', () => {
    const inScripts = documented.filter(usesShellVariables);
    for (const c of inScripts) {
      expect(scripts.some((s) => s.file === c.file && c.line >= s.line && c.line <= s.end), `${c.file}:${c.line}`).toBe(true);
    }
    expect(commands.length + inScripts.length).toBe(documented.length);
  });

  commands.forEach((c, i) => {
    it(`${c.file}:${c.line}: ptqscope ${c.args.join(' ')}`, () => {
      const r = results[i];
      const where = `${c.file}:${c.line}: ${c.text}\n${r.before}${r.stderr}`;
      expect(r.hung, where).toBe(false);
      expect(r.code, where).toBe(c.exit);
      expect(r.stderr, where).not.toMatch(/\n\s+at |internal error/);
      expect(r.before, where).not.toMatch(/exit [1-9]/);
    });
  });

  scripts.forEach((s, i) => {
    it(`${s.file}:${s.line}: the block runs as a script`, () => {
      const r = scriptResults[i];
      const where = `${s.file}:${s.line}:\n${s.script}\n${r.stderr}`;
      expect(r.hung, where).toBe(false);
      expect(r.code, where).toBe(0);
      expect(r.stderr, where).not.toMatch(/\n\s+at |internal error/);
    });
  });
});

describe('command extraction', () => {
  it('splits words as a shell does and expands synopsis notation', () => {
    const { words, comment } = shellWords(`ptqscope x M D -m "['a','b']" -q [['c']] --k=v\\ w  # exit 2`);
    expect(words.map((w) => w.text)).toEqual(['ptqscope', 'x', 'M', 'D', '-m', "['a','b']", '-q', '[[c]]', '--k=v w']);
    expect(comment).toBe('exit 2');
    const expand = (line) => expandSynopsis(shellWords(line).words).map((ws) => ws.map((w) => w.text).join(' '));
    expect(expand('a | b c D ...')).toEqual(['a c D', 'b c D']);
    expect(expand('p | q R ...')).toEqual(['p R', 'q R']);
    expect(expand('c F D --out o [--method max|kl] [--qdq q.onnx]')).toEqual([
      'c F D --out o --method max --qdq q.onnx', 'c F D --out o --method kl --qdq q.onnx']);
    expect(expand('run M D --quant on|off --out DIR')).toEqual(['run M D --quant on --out DIR', 'run M D --quant off --out DIR']);
  });

  it('takes commands from code blocks but not from ```text blocks, which show output', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-docs-extract-'));
    fs.mkdirSync(path.join(root, 'docs'));
    fs.writeFileSync(path.join(root, 'docs/page.md'), [
      '```sh', 'ptqscope run M D', '```', '', '  ```text', '  ptqscope run exited 2: error', '  ```', '',
      '```', 'ptqscope fix M D', '```', ''].join('\n'));
    try {
      expect(documentedCommands(root).map((c) => `${c.line}: ${c.args.join(' ')}`)).toEqual(['2: run M D', '10: fix M D']);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

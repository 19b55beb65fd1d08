// scripts/plugin-install.mjs on a Netron-like web folder: copies, patches index.html and
// onnx-metadata.json, is idempotent, and --uninstall restores every file byte for byte.
import { describe, it, expect, beforeEach } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { install, uninstall, patchIndexHtml, TAG } from '../../../scripts/plugin-install.mjs';
import { horizonSchemas } from '../../../plugin/netron/metadata.mjs';
import { pageHtml } from './fake_netron.mjs';

const SCRIPT = path.resolve(import.meta.dirname, '../../../scripts/plugin-install.mjs');
let dir;
let dist;

function snapshot(root) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(root, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(root);
  return out;
}

beforeEach(() => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-plugin-install-'));
  dir = path.join(tmp, 'source');
  dist = path.join(tmp, 'dist');
  fs.mkdirSync(dir);
  fs.mkdirSync(path.join(dist, 'ptqscope-plugin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.html'), pageHtml({ head: '\n<script type="text/javascript" src="index.js"></script>\n' }));
  fs.writeFileSync(path.join(dir, 'onnx-metadata.json'), JSON.stringify([
    { name: 'Conv', module: 'ai.onnx', version: 11, category: 'Layer' },
    { name: 'Relu', module: 'ai.onnx', version: 14, category: 'Activation' },
  ], null, 2));
  fs.writeFileSync(path.join(dist, 'ptqscope-plugin.js'), '// plugin v1\n');
  fs.writeFileSync(path.join(dist, 'ptqscope-plugin', 'worker-AAAA.js'), '// worker v1\n');
});

describe('plugin-install', () => {
  it('copies the bundle, adds one script tag and the horizon schemas', () => {
    install(dir, { dist, quiet: true });
    const html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
    expect(html.split('ptqscope-plugin.js').length - 1).toBe(1);
    expect(html.indexOf(TAG)).toBeGreaterThan(html.indexOf('index.js')); // after Netron's loader
    expect(html.indexOf(TAG)).toBeLessThan(html.indexOf('</head>'));
    expect(fs.readFileSync(path.join(dir, 'ptqscope-plugin.js'), 'utf8')).toBe('// plugin v1\n');
    expect(fs.existsSync(path.join(dir, 'ptqscope-plugin', 'worker-AAAA.js'))).toBe(true);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'onnx-metadata.json'), 'utf8'));
    expect(meta).toHaveLength(2 + horizonSchemas().length);
    const hz = meta.find((e) => e.name === 'HzCalibration');
    expect(hz).toMatchObject({ module: 'horizon', version: 1, category: 'Quantization' });
    expect(hz.inputs.map((i) => i.name)).toEqual(['input']);
    expect(meta.find((e) => e.name === 'HzPreprocess').inputs.map((i) => i.name)).toEqual(['input', 'weight', 'bias']);
  });

  it('is idempotent and replaces an older build', () => {
    install(dir, { dist, quiet: true });
    const first = snapshot(dir);
    install(dir, { dist, quiet: true });
    expect(snapshot(dir)).toEqual(first);
    // A new build with another worker hash: the old worker goes away.
    fs.rmSync(path.join(dist, 'ptqscope-plugin', 'worker-AAAA.js'));
    fs.writeFileSync(path.join(dist, 'ptqscope-plugin', 'worker-BBBB.js'), '// worker v2\n');
    install(dir, { dist, quiet: true });
    expect(fs.readdirSync(path.join(dir, 'ptqscope-plugin'))).toEqual(['worker-BBBB.js']);
    expect(patchIndexHtml(fs.readFileSync(path.join(dir, 'index.html'), 'utf8'))).toBe(fs.readFileSync(path.join(dir, 'index.html'), 'utf8'));
  });

  it('--uninstall restores the folder byte for byte (through the npm script entry point)', () => {
    const before = snapshot(dir);
    execFileSync(process.execPath, [SCRIPT, dir, '--dist', dist], { stdio: 'pipe' });
    execFileSync(process.execPath, [SCRIPT, dir, '--dist', dist], { stdio: 'pipe' });
    expect(snapshot(dir)).not.toEqual(before);
    execFileSync(process.execPath, [SCRIPT, dir, '--uninstall'], { stdio: 'pipe' });
    expect(snapshot(dir)).toEqual(before);
  });

  it('names what is wrong: not a Netron folder, plugin not built', () => {
    const run = (...args) => {
      try {
        execFileSync(process.execPath, [SCRIPT, ...args], { stdio: 'pipe' });
        return null;
      } catch (err) {
        return { code: err.status, stderr: String(err.stderr) };
      }
    };
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-not-netron-'));
    expect(run(empty, '--dist', dist)).toMatchObject({ code: 2, stderr: expect.stringContaining(`${path.join(empty, 'index.html')} not found`) });
    expect(run(dir, '--dist', empty)).toMatchObject({ code: 2, stderr: expect.stringContaining('npm run plugin:build') });
    expect(run()).toMatchObject({ code: 2, stderr: expect.stringContaining('usage') });
  });

  it('works without onnx-metadata.json (the file is optional in a Netron checkout)', () => {
    fs.rmSync(path.join(dir, 'onnx-metadata.json'));
    const before = snapshot(dir);
    install(dir, { dist, quiet: true });
    uninstall(dir, { quiet: true });
    expect(snapshot(dir)).toEqual(before);
  });
});

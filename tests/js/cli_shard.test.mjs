// `--shard K/N` and `ptqscope merge` through the real CLI on the calibrated digits model:
//  - the activation and node sensitivity sweeps in N = 3 and N = 1 shards (the node sweep also in more
//    shards than items: empty shards) merge into the unsharded --json, byte for byte but for the wall-clock
//    timings_ms, and merge prints the unsharded -v table;
//  - leave-one-out, plot-acc-error, plot-distribution and get-channelwise-data-distribution: the same
//    for N = 3, and merge writes the unsharded command's charts, byte-identical;
//  - the sweep-like commands are those whose core analysis describe() marks splittable: each takes
//    --shard, the others refuse it;
//  - bad K/N, a shard without --json, and merge of parts that are not the N shards of one run (another
//    model, data, options, N, command; a shard twice or missing; not a partial; a bad version) exit 2
//    naming the option or the file;
//  - with GNU parallel installed, the documented parallel line (docs/cli-shards.md) gives the same result.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../web/cli/commands/index.mjs';
import { isSplittable } from '../../web/pipeline/sweep.mjs';
import { CLI, calibratedDigits, cli } from './cli_fixture.mjs';
import { REPO_ROOT } from './helpers.mjs';

const { model, data } = calibratedDigits();
let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-shard-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const file = (name) => path.join(tmp, name);
const text = (name) => fs.readFileSync(file(name), 'utf8');
// The --json text without its wall-clock timings (the one field that differs between runs).
function withoutTimings(t) {
  const out = t.replace(/\n "timings_ms": \{[^{}]*\}/, '');
  if (out === t) throw new Error('the result has no timings_ms object: update withoutTimings');
  return out;
}
const ok = (r) => {
  expect(r.stderr, r.stderr).not.toMatch(/error|\n\s+at /);
  expect(r.code, r.stderr).toBe(0);
};

// Runs `args` whole (--json <tag>-full.json) and in `count` shards, merges them (in reverse order:
// merge sorts the shards); returns the outputs' names.
// The whole run on `workers` workers (1: one call to the core, no merge; 2: two parts merged), each
// shard on 2.
async function shardAndMerge(tag, args, count, { whole = true, workers = 2, mergeArgs = [] } = {}) {
  const shards = Array.from({ length: count }, (_, k) => `${tag}-${k + 1}of${count}.json`);
  const runs = [
    ...(whole ? [cli([...args, '--quiet', '--workers', String(workers), '--json', file(`${tag}-full.json`)])] : []),
    ...shards.map((s, k) => cli([...args, '--quiet', '--workers', '2', '--shard', `${k + 1}/${count}`, '--json', file(s)])),
  ];
  const results = await Promise.all(runs);
  for (const r of results) ok(r);
  const merged = `${tag}-merged${count}.json`;
  const m = await cli(['merge', ...[...shards].reverse().map(file), '--json', file(merged), ...mergeArgs]);
  ok(m);
  return { full: `${tag}-full.json`, merged, shards, mergeOut: m, wholeOut: results[0] };
}

describe('shard and merge = the unsharded run', () => {
  for (const nodeType of ['activation', 'node']) {
    it(`get-sensitivity-of-nodes -n ${nodeType}: N = 3 and N = 1 (node: also more shards than items) merge into the unsharded --json, byte for byte`, async () => {
      const args = ['get-sensitivity-of-nodes', model, data, '-n', nodeType, '-m', "['cosine-similarity','mse']", '-d', '4', '-v', 'True'];
      const three = await shardAndMerge(`sens-${nodeType}`, args, 3, { workers: nodeType === 'activation' ? 1 : 2 });
      const full = text(three.full);
      const doc = JSON.parse(full);
      const total = doc.sweep.total;
      expect(total).toBeGreaterThan(3);
      expect(doc.cancelled).toBe(false);
      expect(withoutTimings(text(three.merged))).toBe(withoutTimings(full));
      // The -v table: printed by merge as by the unsharded run; the shards print nothing.
      expect(three.mergeOut.stdout).toBe(three.wholeOut.stdout);
      expect(three.mergeOut.stdout).toContain('cosine-similarity');
      // Each shard holds items i with i mod 3 = K - 1, and only those.
      for (let k = 0; k < 3; k++) {
        const part = JSON.parse(text(three.shards[k]));
        expect(part).toMatchObject({ schema: 'ptqscope.shard', version: 1, command: 'get-sensitivity-of-nodes', shard: { index: k + 1, count: 3 } });
        expect(part.result.sweep.indices).toEqual(doc.sweep.indices.filter((i) => i % 3 === k));
        expect(Object.keys(part.result.sensitivity[nodeType]).sort()).toEqual([...part.result.sweep.items].sort());
      }
      const one = await shardAndMerge(`sens-${nodeType}`, args, 1, { whole: false });
      expect(withoutTimings(text(one.merged))).toBe(withoutTimings(full));
      if (nodeType === 'node') { // more shards than items: the last ones are empty
        const more = await shardAndMerge(`sens-${nodeType}`, args, total + 2, { whole: false });
        expect(JSON.parse(text(more.shards.at(-1))).result.sweep.items).toEqual([]);
        expect(withoutTimings(text(more.merged))).toBe(withoutTimings(full));
      }
    });
  }

  it('leave-one-out: N = 3 merges into the unsharded --json', async () => {
    const r = await shardAndMerge('loo', ['leave-one-out', model, data, '-n', 'activation', '-d', '2'], 3);
    expect(withoutTimings(text(r.merged))).toBe(withoutTimings(text(r.full)));
  });

  const charts = (dir) => fs.readdirSync(dir).sort();
  const chartCases = [
    ['plot-acc-error', ['-q', "[['/features/features.0/Conv'],['/features/features.0/Conv','/features/features.7/Conv'],'weight','activation']"]],
    ['plot-distribution', ['-n', "['/features/features.2/Relu_output_0_HzCalibration','/fc/Gemm','onnx::Conv_41_HzCalibration','input_HzCalibration']"]],
    ['get-channelwise-data-distribution', ['-n', "['onnx::Conv_41_HzCalibration','onnx::Conv_38_HzCalibration','fc.weight_HzCalibration']"]],
  ];
  for (const [command, extra] of chartCases) {
    it(`${command}: N = 3 merges into the unsharded --json and writes its charts, byte-identical`, async () => {
      const wholeDir = file(`${command}-whole`);
      const shardDir = file(`${command}-sharded`);
      const tag = command;
      const shards = [1, 2, 3].map((k) => `${tag}-${k}.json`);
      const results = await Promise.all([
        cli([command, model, data, ...extra, '-s', wholeDir, '--quiet', '--json', file(`${tag}-full.json`)]),
        ...shards.map((s, k) => cli([command, model, data, ...extra, '-s', shardDir, '--quiet', '--shard', `${k + 1}/3`, '--json', file(s)])),
      ]);
      for (const r of results) ok(r);
      expect(fs.existsSync(shardDir)).toBe(false); // a shard writes its partial result only
      ok(await cli(['merge', ...shards.map(file), '--json', file(`${tag}-merged.json`), '--quiet']));
      expect(withoutTimings(text(`${tag}-merged.json`))).toBe(withoutTimings(text(`${tag}-full.json`)));
      expect(charts(shardDir).length).toBeGreaterThan(1);
      expect(charts(shardDir)).toEqual(charts(wholeDir));
      for (const c of charts(wholeDir)) expect(fs.readFileSync(path.join(shardDir, c)).equals(fs.readFileSync(path.join(wholeDir, c))), c).toBe(true);
      // --save_dir: the charts elsewhere.
      ok(await cli(['merge', ...shards.map(file), '--save_dir', file(`${command}-elsewhere`), '--quiet']));
      expect(charts(file(`${command}-elsewhere`))).toEqual(charts(wholeDir));
    });
  }
});

describe('which commands are sharded', () => {
  it('the commands whose core analysis is splittable take --shard; the others refuse it (exit 2)', async () => {
    const sweepLike = [];
    for (const [name, load] of Object.entries(COMMANDS)) {
      const mod = await load();
      const takesShard = Boolean(mod.SPEC?.options?.some?.((o) => o.name === 'shard'));
      expect(takesShard, name).toBe(Boolean(mod.analysis && isSplittable(mod.analysis)));
      if (takesShard) {
        sweepLike.push(name);
        expect(typeof mod.compute, name).toBe('function');
        expect(typeof mod.present, name).toBe('function');
        expect(mod.usage, name).toContain('--shard K/N');
      }
    }
    expect(sweepLike.sort()).toEqual(['get-channelwise-data-distribution', 'get-sensitivity-of-nodes', 'leave-one-out', 'plot-acc-error', 'plot-distribution']);
    for (const name of ['get-calibration-nodes-stat-info', 'sensitivity-analysis', 'node-errors', 'runall']) {
      const r = await cli([name, model, data, '--shard', '1/2', '--json', file('never.json')]);
      expect(r.code, name).toBe(2);
      expect(r.stderr, name).toContain('No such option: --shard');
    }
  });
});

describe('bad input', () => {
  const sens = ['get-sensitivity-of-nodes', model, data, '-n', 'activation', '--quiet'];

  it('a bad K/N exits 2 naming --shard', async () => {
    const cases = [['0/3', 'K must be between 1 and N'], ['4/3', 'K must be between 1 and N'], ['1/0', 'N must be'],
      ['a/3', 'is not K/N'], ['1/b', 'is not K/N'], ['3', 'is not K/N'], ['-1/3', 'is not K/N'], ['1.5/3', 'is not K/N'], ['', 'is not K/N']];
    const runs = await Promise.all(cases.map(([value]) => cli([...sens, '--shard', value, '--json', file('never.json')])));
    cases.forEach(([value, reason], k) => {
      expect(runs[k].code, value).toBe(2);
      expect(runs[k].stderr, value).toContain("Invalid value for '--shard'");
      expect(runs[k].stderr, value).toContain(reason);
    });
    expect(fs.existsSync(file('never.json'))).toBe(false);
  });

  it('a shard without --json exits 2', async () => {
    const r = await cli([...sens, '--shard', '1/2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--shard 1/2 writes a partial result: give --json FILE');
  });

  describe('merge refuses parts that are not the N shards of one run', () => {
    let good; // three shards of the activation sweep
    beforeAll(async () => {
      const base = [...sens, '-d', '2'];
      good = [1, 2, 3].map((k) => file(`bad-${k}.json`));
      const runs = await Promise.all([
        ...good.map((g, k) => cli([...base, '--shard', `${k + 1}/3`, '--json', g])),
        cli([...base, '-m', 'mse', '--shard', '3/3', '--json', file('bad-mse.json')]),
        cli([...base, '--shard', '3/4', '--json', file('bad-of4.json')]),
        cli(['leave-one-out', model, data, '-n', 'activation', '-d', '2', '--quiet', '--shard', '3/3', '--json', file('bad-loo.json')]),
        cli([...base, '--json', file('bad-whole.json')]),
      ]);
      for (const r of runs) ok(r);
      const edit = (from, to, change) => {
        const doc = JSON.parse(fs.readFileSync(from, 'utf8'));
        change(doc);
        fs.writeFileSync(file(to), JSON.stringify(doc));
      };
      edit(good[2], 'bad-model.json', (d) => { d.inputs.model_sha256 = '0'.repeat(64); });
      edit(good[2], 'bad-data.json', (d) => { d.inputs.data_sha256 = '0'.repeat(64); });
      edit(good[2], 'bad-version.json', (d) => { d.version = 2; });
      edit(good[2], 'bad-command.json', (d) => { d.command = 'sensitivity-analysis'; });
      edit(good[2], 'bad-unknown.json', (d) => { d.command = 'no-such-command'; });
      edit(good[2], 'bad-conv.json', (d) => { d.options.conv = 'fast'; });
      edit(good[2], 'bad-result.json', (d) => { d.result.options.sensitivity.data_num = 3; });
      edit(good[2], 'bad-config.json', (d) => { d.result.config = { schema: 'ptqscope.config', version: 1, intents: [] }; });
      fs.writeFileSync(file('bad-text.json'), 'not json');
    }, 120_000);

    const cases = [
      ['another model', ['bad-1', 'bad-2', 'bad-model'], 'bad-model.json: made from another model (its sha256 differs) than'],
      ['other calibration data', ['bad-1', 'bad-2', 'bad-data'], 'bad-data.json: made from other calibration data'],
      ['other options', ['bad-1', 'bad-2', 'bad-mse'], 'bad-mse.json: made with --metrics "mse", another value ("cosine-similarity")'],
      ['other convolution kernels', ['bad-1', 'bad-2', 'bad-conv'], 'bad-conv.json: made with --conv "fast"'],
      ['another command', ['bad-1', 'bad-2', 'bad-loo'], "bad-loo.json: made by 'leave-one-out', another command than"],
      ['another shard count', ['bad-1', 'bad-2', 'bad-of4'], 'bad-of4.json: shard 3/4, but'],
      ['a shard twice', ['bad-1', 'bad-2', 'bad-2', 'bad-3'], 'bad-2.json: shard 2/3 is given twice'],
      ['a missing shard', ['bad-1', 'bad-3'], 'shard 2/3 missing: 2 of 3 parts given'],
      ['a result of another request', ['bad-1', 'bad-2', 'bad-result'], 'bad-result.json: options differs from'],
      ['another configuration (--config)', ['bad-1', 'bad-2', 'bad-config'], 'bad-config.json: config differs from bad-1.json'],
      ['a non-splittable analysis', ['bad-1', 'bad-2', 'bad-command'], "bad-command.json: 'sensitivity-analysis' is not a sweep split into items"],
      ['an unknown command', ['bad-unknown'], 'bad-unknown.json: unknown command "no-such-command"'],
      ['a whole result', ['bad-whole'], 'bad-whole.json: not a partial result of --shard'],
      ['another version', ['bad-version'], 'bad-version.json: partial result version 2 is not supported'],
      ['not JSON', ['bad-text'], 'bad-text.json: not a JSON document'],
      ['a missing file', ['bad-1', 'bad-nothere'], 'bad-nothere.json: cannot read the partial result'],
    ];
    for (const [what, parts, message] of cases) {
      it(`${what}: exit 2 naming the file`, async () => {
        const r = await cli(['merge', ...parts.map((p) => file(`${p}.json`)), '--json', file('bad-merged.json')]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(message.replaceAll(/bad-[a-z0-9]+\.json/g, (m) => file(m)));
        expect(fs.existsSync(file('bad-merged.json'))).toBe(false);
      });
    }

    it('bad merge options exit 2 naming the option', async () => {
      for (const [args, message] of [
        [['--jsn', file('x.json')], 'unknown option --jsn'],
        [['-v'], 'unknown option -v'],
        [['--quiet=1'], 'option --quiet takes no value'],
        [['--save_dir', file('charts')], '--save_dir: get-sensitivity-of-nodes writes no charts'],
      ]) {
        const r = await cli(['merge', ...good, ...args]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toContain(message);
      }
      const none = await cli(['merge', '--json', file('x.json')]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('expected at least 1 argument (PART...), got 0');
    });
  });
});

// GNU parallel (Debian package `parallel`), when installed: the documented line of docs/cli-shards.md.
const hasParallel = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v parallel'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasParallel) console.warn('cli_shard: GNU parallel is not installed (Debian package `parallel`): its test is skipped');

describe.skipIf(!hasParallel)('GNU parallel', () => {
  it('the documented parallel line (docs/cli-shards.md) runs the shards; merge gives the unsharded result', async () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/cli-shards.md'), 'utf8');
    const line = doc.split('\n').find((l) => l.startsWith('parallel '));
    expect(line).toBeDefined();
    const dir = file('parallel');
    fs.mkdirSync(dir);
    fs.symlinkSync(model, path.join(dir, 'MODEL'));
    fs.symlinkSync(data, path.join(dir, 'DATA'));
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'ptqscope'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
    execFileSync('bash', ['-e', '-c', line], { cwd: dir, env, stdio: 'pipe' });
    const parts = fs.readdirSync(dir).filter((f) => /^part-\d+\.json$/.test(f)).sort();
    expect(parts.length).toBeGreaterThan(1);
    const args = line.replace(/^parallel\s+/, '').split(' ::: ')[0];
    // The same command unsharded (its --shard and --json removed) and the merge of the parts.
    const wholeArgs = args.replace(/ --shard \S+/, '').replace(/ --json \S+/, ' --json whole.json');
    execFileSync('bash', ['-e', '-c', `${wholeArgs}\nptqscope merge ${parts.join(' ')} --json merged.json`], { cwd: dir, env, stdio: 'pipe' });
    expect(withoutTimings(fs.readFileSync(path.join(dir, 'merged.json'), 'utf8')))
      .toBe(withoutTimings(fs.readFileSync(path.join(dir, 'whole.json'), 'utf8')));
  }, 300_000);
});

// The Kubernetes and Slurm examples of docs/cli-shards.md, run as their schedulers would run them: the
// containers' shell commands with JOB_COMPLETION_INDEX = 0 .. N-1, the array script with
// SLURM_ARRAY_TASK_ID = 1 .. N (`srun` running its command), then the merge; in a folder holding the
// example as model/calibrated_model.onnx and model/calibration_data.
describe('the scheduler examples of docs/cli-shards.md', () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/cli-shards.md'), 'utf8');
  const blocks = (lang) => [...doc.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]);

  function workFolder(name) {
    const dir = file(name);
    fs.mkdirSync(path.join(dir, 'model'), { recursive: true });
    fs.copyFileSync(model, path.join(dir, 'model/calibrated_model.onnx'));
    fs.cpSync(data, path.join(dir, 'model/calibration_data'), { recursive: true });
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'ptqscope'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'srun'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
    return { dir, env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` } };
  }
  const sh = (shell, script, cwd, env) => execFileSync(shell, ['-c', script], { cwd, env, stdio: 'pipe' });
  // The shard command run whole: --shard, --json and --workers removed, --json whole.json added.
  const unsharded = (command) => `${command.replace(/ --(shard|json|workers) \S+/g, '')} --json whole.json`;

  it('Kubernetes Indexed Job: each index runs its shard, the merge Job gives the unsharded result', () => {
    const [yaml] = blocks('yaml');
    const n = Number(/completions: (\d+)/.exec(yaml)[1]);
    expect(Number(/name: SHARDS\n\s+value: "(\d+)"/.exec(yaml)[1])).toBe(n);
    // The folded `- >-` argument of each container: its lines joined by spaces.
    const scripts = [...yaml.matchAll(/- >-\n((?:\s{14}.*\n)+)/g)].map((m) => m[1].split('\n').map((l) => l.trim()).filter(Boolean).join(' '));
    expect(scripts.length).toBe(2);
    const { dir, env } = workFolder('k8s');
    for (let index = 0; index < n; index++) sh('sh', scripts[0], dir, { ...env, JOB_COMPLETION_INDEX: String(index), SHARDS: String(n) });
    expect(fs.readdirSync(path.join(dir, 'out')).sort()).toEqual(Array.from({ length: n }, (_, k) => `part-${k + 1}.json`).sort());
    sh('sh', scripts[1], dir, env);
    const shard = /exec (ptqscope get-sensitivity-of-nodes .*?) --shard/.exec(scripts[0])[1];
    sh('sh', unsharded(`${shard} --json x`), dir, env);
    expect(withoutTimings(fs.readFileSync(path.join(dir, 'out/sensitivity.json'), 'utf8')))
      .toBe(withoutTimings(fs.readFileSync(path.join(dir, 'whole.json'), 'utf8')));
  }, 300_000);

  it('Slurm job array: each task runs its shard, the dependent merge job gives the unsharded result', () => {
    const scripts = blocks('bash');
    const shards = scripts.find((b) => b.includes('#SBATCH --array='));
    const merge = scripts.find((b) => b.includes('ptqscope merge'));
    const n = Number(/#SBATCH --array=1-(\d+)/.exec(shards)[1]);
    expect(Number(/\nN=(\d+)/.exec(shards)[1])).toBe(n);
    const { dir, env } = workFolder('slurm');
    fs.mkdirSync(path.join(dir, 'out'));
    for (let task = 1; task <= n; task++) sh('bash', shards, dir, { ...env, SLURM_ARRAY_TASK_ID: String(task), SLURM_CPUS_PER_TASK: '1' });
    sh('bash', merge, dir, env);
    const line = /\nsrun (ptqscope get-sensitivity-of-nodes .*)/.exec(shards)[1].replace(/ --(shard|json|workers) "[^"]*"/g, '');
    sh('bash', `${line} --json whole.json`, dir, env);
    expect(withoutTimings(fs.readFileSync(path.join(dir, 'out/sensitivity.json'), 'utf8')))
      .toBe(withoutTimings(fs.readFileSync(path.join(dir, 'whole.json'), 'utf8')));
  }, 300_000);
});

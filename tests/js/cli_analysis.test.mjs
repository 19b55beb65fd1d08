// The analysis sub-commands on the calibrated digits model, through the real CLI (worker threads on
// the wasm core):
//  - get-sensitivity-of-nodes: --workers 2 gives exactly the --workers 1 result; nothing on stdout
//    without -v, the §3.5 table with -v True; --json writes the result document;
//  - runall: the §8.4 tree (names derived here from the ranking in results.json and the original's
//    naming rules), the .log files in the §8.3 layout, .svg + .png charts, results.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyFloatRepr } from '../../web/pipeline/pyformat.mjs';
import { calibratedDigits, cli } from './cli_fixture.mjs';
import { fixture, openSession } from './helpers.mjs';
import { buildHeat } from '../../web/app/heatmap/mapping.mjs';
import { resolveSettings } from '../../web/app/heatmap/controller.mjs';
import { heatScale } from '../../web/charts/heat_scale.mjs';
import { parseHTML } from 'linkedom';

const { model, data } = calibratedDigits();
// §3.5 / §8.3: names longer than 50 characters are shown as "..." + their last 47.
const shown = (name) => (name.length > 50 ? `...${name.slice(-47)}` : name);
const readJson = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
// The parts of a sensitivity document that must not depend on how the sweep was split.
const sweepResult = (doc) => ({ sensitivity: doc.sensitivity, sensitivity_order: doc.sensitivity_order,
  samples: doc.samples, compared_tensors: doc.compared_tensors, cancelled: doc.cancelled });

let tmp;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptqscope-cli-analysis-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('get-sensitivity-of-nodes', () => {
  for (const nodeType of ['node', 'activation', 'weight']) {
    it(`-n ${nodeType}: --workers 2 equals --workers 1 exactly`, async () => {
      const base = ['get-sensitivity-of-nodes', model, data, '-n', nodeType, '-m', "['mse','cosine-similarity']", '-d', '4', '--quiet'];
      const [one, two] = await Promise.all([1, 2].map((w) => cli([...base, '--workers', String(w), '--json', path.join(tmp, `sens-${nodeType}-${w}.json`)])));
      for (const r of [one, two]) {
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(''); // the original prints nothing without -v True
      }
      const a = readJson(path.join(tmp, `sens-${nodeType}-1.json`));
      const b = readJson(path.join(tmp, `sens-${nodeType}-2.json`));
      expect(Object.keys(a.sensitivity[nodeType]).length).toBeGreaterThan(1);
      expect(a.samples).toHaveLength(4);
      expect(sweepResult(b)).toEqual(sweepResult(a));
      // Ranked by the first metric (mse: descending, most sensitive first).
      const mse = a.sensitivity_order[nodeType].map((k) => a.sensitivity[nodeType][k].mse).filter((v) => typeof v === 'number');
      expect(mse).toEqual([...mse].sort((x, y) => y - x));
    });
  }

  it('-v True prints the §3.5 table of the ranking; progress goes to stderr', async () => {
    const r = await cli(['get-sensitivity-of-nodes', model, data, '-n', 'activation', '-v', 'True', '--workers', '1',
      '--json', path.join(tmp, 'verbose.json')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Start calculating activation sensitivity...');
    const doc = readJson(path.join(tmp, 'verbose.json'));
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('');
    expect(lines[1]).toMatch(/^=+node sensitivity=+$/);
    expect(lines[2]).toMatch(/^activation\s+node\s+threshold\s+qtype\s+cosine-similarity\s*$/);
    expect(lines[3]).toBe('-'.repeat(lines[1].length));
    const names = lines.slice(4).filter(Boolean).map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual(doc.sensitivity_order.activation.map(shown));
  });
});

describe('runall', () => {
  let saveDir;
  let run;
  let results;
  beforeAll(async () => {
    saveDir = path.join(tmp, 'debug_result/');
    run = await cli(['runall', model, data, '-s', saveDir, '--workers', '2']);
    results = fs.existsSync(path.join(saveDir, 'results.json')) ? readJson(path.join(saveDir, 'results.json')) : null;
  });

  it('exits 0 and reports the stages in the original order on stderr', () => {
    expect(run.code, run.stderr).toBe(0);
    const stages = ['Start calculating weight sensitivity...', 'Start calculating activation sensitivity...',
      'Start getting data distribution...', 'Start getting channelwise data distribution...',
      'Start ploting accumulate error...', 'Start analyzing node sensitivity...'];
    const at = stages.map((s) => run.stderr.indexOf(s));
    expect(at.every((i) => i >= 0), run.stderr).toBe(true);
    expect(at).toEqual([...at].sort((x, y) => x - y));
  });

  it('writes the §8.4 tree: logs, top-5 distributions and box plots, accumulated error, partial quantization', () => {
    const top = (t) => results.sensitivity_order[t].slice(0, 5);
    const cali = [...top('weight'), ...top('activation')];
    const safe = (n) => n.replace(/[/:]/g, '_'); // "onnx::Conv_41_HzCalibration" -> "onnx__Conv_41_HzCalibration"
    const charts = (dir, bases) => bases.flatMap((b) => [`${dir}/${b}.png`, `${dir}/${b}.svg`]);
    const expected = [
      'node_sensitivity/sensitivity_of_activation.log',
      'node_sensitivity/sensitivity_of_weight.log',
      // §6.2: weight calibration nodes named <initializer>_HzCalibration -> weight_<name>; activations -> activation_<name>
      ...charts('data_distribution', [...top('weight').map((n) => `weight_${safe(n)}`), ...top('activation').map((n) => `activation_${safe(n)}`)]),
      ...charts('channelwise_distribution', cali.map((n) => `${safe(n)}_boxplot`)),
      ...charts('accumulate_error', ['weight_activation_quantized_separately_cosine-similarity']),
      ...charts('sensitivity_analysis', ['partial_quantization']),
      'results.json',
      'report.html',
    ];
    const found = [];
    const walk = (rel) => {
      for (const e of fs.readdirSync(path.join(saveDir, rel), { withFileTypes: true })) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(child);
        else found.push(child);
      }
    };
    walk('');
    expect(found.sort()).toEqual(expected.sort());
    for (const f of found.filter((n) => n.endsWith('.png'))) {
      expect([...fs.readFileSync(path.join(saveDir, f)).subarray(0, 8)], f).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    }
    for (const f of found.filter((n) => n.endsWith('.svg'))) {
      expect(fs.readFileSync(path.join(saveDir, f), 'utf8'), f).toMatch(/<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
  });

  it('.log files follow §8.3: symmetric title, Node + metric header, dashes, rows in ranking order', () => {
    for (const t of ['weight', 'activation']) {
      const text = fs.readFileSync(path.join(saveDir, `node_sensitivity/sensitivity_of_${t}.log`), 'utf8');
      const lines = text.split('\n');
      expect(lines.at(-1)).toBe(''); // newline-terminated
      const order = results.sensitivity_order[t];
      const nameWidth = Math.min(50, Math.max(4, ...order.map((k) => k.length)));
      const values = order.map((k) => results.sensitivity[t][k]['cosine-similarity']);
      // width of the metric column: max(len(name), len(str(value))), str() being numpy's shortest
      // float32 text (cosines are in [1e-4, 1], so the positional form: '0.99812', '1.0')
      const numpyStr = (v) => {
        for (let p = 1; ; p++) {
          const t = Number(Math.fround(v).toPrecision(p));
          if (Math.fround(t) === Math.fround(v)) return Number.isInteger(t) ? `${t}.0` : String(t);
        }
      };
      const metricWidth = Math.max('cosine-similarity'.length, ...values.map(numpyStr).map((x) => x.length));
      const head = nameWidth + 2 + metricWidth + 2;
      const e = Math.trunc((head - t.length) / 2);
      expect(lines[0]).toBe('='.repeat(e) + t + '='.repeat(e));
      expect(lines[1]).toBe('Node'.padEnd(nameWidth + 2) + 'cosine-similarity'.padEnd(metricWidth + 2));
      expect(lines[2]).toBe('-'.repeat(head));
      expect(lines.slice(3, -1)).toEqual(order.map((k, i) => shown(k).padEnd(nameWidth + 2) + pyFloatRepr(Math.fround(values[i])).padEnd(metricWidth + 2)));
    }
  });

  it('report.html is one self-contained page with every chart inline, the picture of the graph coloured as the page colours these results', async () => {
    const html = fs.readFileSync(path.join(saveDir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?(https?:|\/\/)/i);
    const charts = (html.match(/<svg[\s>]/g) ?? []).length;
    const files = fs.readdirSync(saveDir, { recursive: true }).filter((f) => String(f).endsWith('.svg')).length;
    expect(charts).toBeGreaterThanOrEqual(files);
    // The page opens these results on the weight sweep's cosine (its first view): the nodes it colours
    // (the consumers of the weight calibration nodes) are the picture's coloured nodes, in its colours.
    const { session } = await openSession(fixture('digits_cnn_calibrated'));
    const graph = JSON.parse(session.graphJson());
    session.delete();
    const heat = buildHeat(results, graph, resolveSettings(results, {}), heatScale);
    expect(heat.legend.title).toBe('weight sensitivity: cosine-similarity');
    const picture = html.slice(html.indexOf('<section id="graph">'), html.indexOf('</section>', html.indexOf('<section id="graph">')));
    expect(picture).toContain('coloured by weight sensitivity: cosine-similarity (lower is worse)');
    const { document } = parseHTML(`<!doctype html><html><body>${picture}</body></html>`);
    const heated = Object.fromEntries([...document.querySelectorAll('svg.ptq-graph-picture g.node.heated')]
      .map((g) => [g.getAttribute('data-name'), /fill:\s*([^;]+)/.exec(g.querySelector('.node-body').getAttribute('style'))[1]]));
    const normal = new Set(graph.nodes.filter((n) => n.op_type !== 'HzCalibration').map((n) => n.name));
    const expected = Object.fromEntries([...heat.values].filter(([n]) => normal.has(n)).map(([n, h]) => [n, h.color]));
    expect(Object.keys(heated).sort()).toEqual(Object.keys(expected).sort());
    for (const [n, c] of Object.entries(expected)) expect(heated[n].replace(/\s/g, ''), n).toBe(c.replace(/\s/g, ''));
  });

  it('results.json holds every section of the run', () => {
    expect(results.schema).toBe('ptqscope.result');
    for (const key of ['sensitivity', 'distribution', 'channelwise', 'acc_error', 'acc_error_figures', 'sensitivity_analysis']) {
      expect(results, key).toHaveProperty(key);
    }
    expect(Object.keys(results.sensitivity).sort()).toEqual(['activation', 'weight']);
    expect(results.acc_error_figures.map((f) => f.prefix)).toEqual(['weight_activation_quantized_separately']);
  });
});

describe('the chart sub-commands write the original file names (.svg + .png)', () => {
  const list = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
  const both = (bases) => bases.flatMap((b) => [`${b}.png`, `${b}.svg`]).sort();
  let weights;
  let activations;
  let nodes;
  beforeAll(async () => {
    // The names to plot, from a node ranking's JSON (no chart written by get-sensitivity-of-nodes).
    const file = path.join(tmp, 'names.json');
    const [w, a, n] = await Promise.all(['weight', 'activation', 'node'].map((t) => cli(['get-sensitivity-of-nodes', model, data, '-n', t, '--quiet', '--json', `${file}.${t}`])));
    expect([w.code, a.code, n.code]).toEqual([0, 0, 0]);
    [weights, activations, nodes] = ['weight', 'activation', 'node'].map((t) => readJson(`${file}.${t}`).sensitivity_order[t]);
  });

  it('plot-distribution: activation_<name>, weight_<name>, node_output_:<tensor>_of_<node> (§6.2), "/" and what Windows refuses (":") -> "_"', async () => {
    const dir = path.join(tmp, 'dist');
    const names = [activations[0], weights[0], nodes[0]];
    const r = await cli(['plot-distribution', model, data, '-n', `[${names.join(',')}]`, '-s', dir, '--quiet', '--json', path.join(tmp, 'dist.json')]);
    expect(r.code, r.stderr).toBe(0);
    const nodeOutput = Object.values(readJson(path.join(tmp, 'dist.json')).distribution).filter((p) => p.kind === 'node_output');
    expect(nodeOutput.length).toBeGreaterThan(0);
    const safe = (n) => n.replace(/[/:]/g, '_');
    expect(list(dir)).toEqual(both([`activation_${safe(activations[0])}`, `weight_${safe(weights[0])}`,
      ...nodeOutput.map((p) => `node_output__${safe(p.tensor)}_of_${safe(nodes[0])}`)]));
  });

  it('get-channelwise-data-distribution: <name>_boxplot (§7)', async () => {
    const dir = path.join(tmp, 'cw');
    const r = await cli(['get-channelwise-data-distribution', model, data, '-n', `['${weights[1]}','${activations[1]}']`, '-a', '0', '-s', dir, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(list(dir)).toEqual(both([weights[1], activations[1]].map((n) => `${n.replace(/[/:]/g, '_')}_boxplot`)));
  });

  it('plot-acc-error: nested -q -> quantize_node_accumulate_err_of_partial_qmodel, average_ prefix with -a True (§5.3, §5.5)', async () => {
    const dir = path.join(tmp, 'acc');
    const r = await cli(['plot-acc-error', model, data, '-q', `[[${nodes[0]}],[${nodes[0]},${nodes[1]}]]`, '-nq', `[${nodes[2]}]`,
      '-m', 'mse', '-a', 'True', '-s', dir, '--quiet', '--json', path.join(tmp, 'acc.json')]);
    expect(r.code, r.stderr).toBe(0);
    expect(list(dir)).toEqual(both(['average_quantize_node_accumulate_err_of_partial_qmodel_mse', 'average_non_quantize_node_accumulate_err_of_node_mse']));
    const doc = readJson(path.join(tmp, 'acc.json'));
    expect(doc.acc_error_figures[0].curves.map((c) => doc.acc_error[c].label)).toEqual(['default calibrated model', 'partial_qmodel_0', 'partial_qmodel_1']);
  });

  it('plot-acc-error: --workers 2 (curves split across workers) writes exactly the --workers 1 JSON and charts', async () => {
    const args = (w) => ['plot-acc-error', model, data, '-q', `[[${nodes[0]}],[${nodes[1]},${nodes[2]}]]`, '-nq', `[[${nodes[1]}],[${nodes[0]}]]`,
      '-s', path.join(tmp, `acc-w${w}`), '--quiet', '--workers', String(w), '--json', path.join(tmp, `acc-w${w}.json`)];
    const runs = await Promise.all([1, 2].map((w) => cli(args(w))));
    expect(runs.map((r) => r.code), runs.map((r) => r.stderr).join('')).toEqual([0, 0]);
    const [a, b] = [1, 2].map((w) => ({ ...readJson(path.join(tmp, `acc-w${w}.json`)), timings_ms: undefined }));
    expect(a.sweep.items).toHaveLength(6);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const files = list(path.join(tmp, 'acc-w1'));
    expect(files).toHaveLength(4);
    expect(list(path.join(tmp, 'acc-w2'))).toEqual(files);
    for (const f of files.filter((n) => n.endsWith('.svg'))) {
      expect(fs.readFileSync(path.join(tmp, 'acc-w2', f), 'utf8'), f).toBe(fs.readFileSync(path.join(tmp, 'acc-w1', f), 'utf8'));
    }
  });

  it('sensitivity-analysis -sd: partial_quantization (§8.2) with the given sensitive nodes', async () => {
    const dir = path.join(tmp, 'sa');
    const r = await cli(['sensitivity-analysis', model, data, '-sn', `[${nodes[0]},${nodes[1]}]`, '-sd', dir, '--quiet', '--json', path.join(tmp, 'sa.json')]);
    expect(r.code, r.stderr).toBe(0);
    expect(list(dir)).toEqual(both(['partial_quantization']));
    expect(readJson(path.join(tmp, 'sa.json')).sensitivity_analysis.x).toEqual(['none', nodes[0], nodes[1]]);
  });

  it('an unknown node name: exit 2 with the original message', async () => {
    const r = await cli(['plot-distribution', model, data, '-n', 'NoSuchNode', '-s', path.join(tmp, 'none'), '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NoSuchNode does not exist in the model.');
    const d = await cli(['get-sensitivity-of-nodes', model, data, '-d', '999', '--quiet']);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain('There are only 32 data, but data_num is set to 999!');
  });
});

describe("ptqscope's own sub-commands", () => {
  it('get-calibration-nodes-stat-info -v True: the §8.1 table (title "", key header Node) and both curve charts', async () => {
    const dir = path.join(tmp, 'stat');
    const r = await cli(['get-calibration-nodes-stat-info', model, data, '-v', 'True', '-s', dir, '--quiet', '--json', path.join(tmp, 'stat.json')]);
    expect(r.code, r.stderr).toBe(0);
    const doc = readJson(path.join(tmp, 'stat.json'));
    const lines = r.stdout.split('\n');
    expect(lines[1]).toMatch(/^=+$/);
    expect(lines[2].split(/\s+/).filter(Boolean)).toEqual(['Node', 'Tensor_type', 'Granularity', 'Thresholds', 'Scales', 'Max_vals', 'Min_nz_vals']);
    expect(lines.slice(4).filter(Boolean).map((l) => l.split(/\s+/)[0])).toEqual(doc.stat_info_order.map(shown));
    expect(fs.readdirSync(dir).sort()).toEqual(['feature_stat_info.png', 'feature_stat_info.svg', 'weight_stat_info.png', 'weight_stat_info.svg']);
  });

  it('leave-one-out: the same options as get-sensitivity-of-nodes, section leave_one_out, workers 2 = workers 1', async () => {
    const base = ['leave-one-out', model, data, '-n', 'activation', '-m', '[mse]', '--quiet'];
    const [one, two] = await Promise.all([1, 2].map((w) => cli([...base, '--workers', String(w), '--json', path.join(tmp, `loo-${w}.json`)])));
    expect([one.code, two.code]).toEqual([0, 0]);
    const a = readJson(path.join(tmp, 'loo-1.json'));
    const b = readJson(path.join(tmp, 'loo-2.json'));
    expect(a.leave_one_out_order.activation.length).toBeGreaterThan(1);
    expect(b.leave_one_out).toEqual(a.leave_one_out);
    expect(b.leave_one_out_order).toEqual(a.leave_one_out_order);
  });
});

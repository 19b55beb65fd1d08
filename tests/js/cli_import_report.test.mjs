// `ptqscope import-report MODEL REPORT`: the mapped table, the rows placed on no node, unreadable lines
// on stderr as FILE:LINE, --json (the result-shaped report, compared here with ptqscope's own node
// errors on the same model), and exit code 2 naming the file for bad input.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli, calibratedDigits } from './cli_fixture.mjs';
import { REPO_ROOT } from './helpers.mjs';
import { compareDocuments } from '../../web/app/compare/compare.mjs';

const REPORTS = path.join(REPO_ROOT, 'tests/fixtures/reports');
const { model, data } = calibratedDigits();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ptq-import-report-'));

describe('ptqscope import-report', () => {
  it('prints each row with its node and rule, the unplaced rows, and unreadable lines on stderr', async () => {
    const report = path.join(REPORTS, 'error_analysis.txt');
    const r = await cli(['import-report', model, report]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`${report}: rknn-toolkit2 accuracy_analysis (error_analysis.txt)`);
    expect(lines[1]).toMatch(/^15 rows: 14 placed on 9 nodes of .*, 1 not placed, 2 unreadable$/);
    expect(lines.find((l) => l.startsWith('25 '))).toMatch(/^25\s+logits\s+\/fc\/Gemm\s+exact\s+0\.98802\s+2\.4431\b/);
    expect(lines.find((l) => l.startsWith('23 '))).toMatch(/logits_conv\s+\/fc\/Gemm \(shows another row\)\s+renamed/);
    expect(r.stdout).toContain('not placed on a node (1):\n  line 26: /head/Softmax_output_0: no node or tensor of that name');
    expect(r.stderr).toContain(`${report}:27: unreadable metric cells`);
    expect(r.stderr).toContain(`${report}:28: not a table row`);
  });

  it('--json is comparable with ptqscope node-errors measured as the converter does', async () => {
    const out = path.join(tmp, 'report.json');
    const ne = path.join(tmp, 'ne.json');
    const [a, b] = await Promise.all([
      cli(['import-report', model, path.join(REPORTS, 'hb_mapper_makertbin.log'), '--json', out]),
      cli(['node-errors', model, data, '--measure', 'converter', '--json', ne, '--quiet']),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(doc.schema).toBe('ptqscope.report');
    expect(doc.node_errors.nodes['/features/features.7/Conv']).toEqual({ accumulated: 0.994552 });
    const own = JSON.parse(fs.readFileSync(ne, 'utf8'));
    // The Horizon log's cosine is measured as the converter does (behaviour.md §12.3): it pairs with node
    // errors measured so (a table of its own), not with those at node outputs.
    expect(doc.node_errors.measure).toBe('converter');
    expect(own.node_errors.measure).toBe('converter');
    const cmp = compareDocuments(own, doc, { source: 'node_errors:converter:accumulated', metric: 'cosine-similarity' });
    // ptqscope's node errors are about the normal nodes (those with calibrated inputs): the three
    // convolutions of the log are in both; its Relu / MaxPool rows are the report's only.
    expect(cmp.rows.map((x) => x.name).sort()).toEqual(['/features/features.0/Conv', '/features/features.3/Conv', '/features/features.7/Conv']);
    expect(cmp.onlyB).toEqual(expect.arrayContaining(['/features/features.2/Relu', '/features/features.6/MaxPool']));
    const conv7 = cmp.rows.find((x) => x.name === '/features/features.7/Conv');
    expect(conv7.a).toBe(Number(own.node_errors.nodes['/features/features.7/Conv'].accumulated));
    expect(conv7.b).toBe(0.994552);
  });

  it('--format forces a reader', async () => {
    const r = await cli(['import-report', model, path.join(REPORTS, 'per_layer_mse_loss.json'), '--format', 'aimet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/AIMET mse loss \(lower is better\)/);
  });

  it('exit 2 naming the file: missing, not a report, unknown format, bad model', async () => {
    const missing = path.join(tmp, 'nope.txt');
    const notReport = path.join(tmp, 'notes.txt');
    fs.writeFileSync(notReport, 'nothing to see\n');
    const cases = [
      [[model, missing], `${missing}: cannot read the report: no such file`],
      [[model, notReport], `${notReport}: not a report ptqscope reads`],
      [[model, path.join(REPORTS, 'error_analysis.txt'), '--format', 'tflite'], "--format: unknown report format 'tflite'"],
      [[notReport, path.join(REPORTS, 'error_analysis.txt')], notReport],
      [[model], 'expected 2 arguments'],
    ];
    for (const [args, message] of cases) {
      const r = await cli(['import-report', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
  });
});

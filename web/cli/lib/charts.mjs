// Writes the charts of a result document as .svg and .png files, drawn by the web app's D3 chart
// modules (web/charts) on a linkedom document, PNG through resvg (web/charts/png.mjs).
// Which charts a document holds and their file names (the original's .png names; the .svg sits
// beside it) are the result module's chartsOf.
import path from 'node:path';
import { chartsOf, safeName } from '../../pipeline/result.mjs';
import { makeOutputDir, writeOutput } from './outputs.mjs';

let chartModules;
async function loadCharts() {
  chartModules ??= (async () => {
    const [dom, svg, png, acc, hist, box, sa, si, fix] = await Promise.all([
      import('../../charts/node_dom.mjs'), import('../../charts/svg.mjs'), import('../../charts/png.mjs'),
      import('../../charts/acc_error.mjs'), import('../../charts/histogram.mjs'), import('../../charts/boxplot.mjs'),
      import('../../charts/sensitivity_analysis.mjs'), import('../../charts/stat_info.mjs'), import('../../charts/fix_path.mjs'),
    ]);
    return {
      createDocument: dom.createDocument, renderToString: svg.renderToString, svgToPng: png.svgToPng,
      render: {
        acc_error: acc.renderAccError, distribution: hist.renderHistogram, channelwise: box.renderBoxplot, sensitivity_analysis: sa.renderSensitivityAnalysis,
        stat_info: (target, f, options) => si.renderStatInfo(target, f.curves, { ...options, tensorType: f.tensorType }),
        fix: fix.renderFixPath,
      },
    };
  })();
  return chartModules;
}

// Draws every chart of `doc` into `dir`; returns the paths written. `png: false` skips the PNGs.
export async function writeCharts(doc, dir, { png = true } = {}) {
  const m = await loadCharts();
  const document = m.createDocument();
  const written = [];
  makeOutputDir(dir);
  // The fix search's path (ours, CLI only): fix_path.png.
  const fixPath = doc.fix ? [{ kind: 'fix', file_name: 'fix_path.png', data: doc.fix }] : [];
  for (const fig of [...chartsOf(doc), ...fixPath]) {
    const svgText = m.renderToString(m.render[fig.kind], fig.data, {}, document);
    const base = path.join(dir, safeName(fig.file_name).replace(/\.png$/, ''));
    writeOutput(`${base}.svg`, svgText);
    written.push(`${base}.svg`);
    if (png) {
      writeOutput(`${base}.png`, m.svgToPng(svgText));
      written.push(`${base}.png`);
    }
  }
  return written;
}

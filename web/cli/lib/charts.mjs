// Writes the charts of a result document as .svg and .png files, drawn by the web app's D3 chart
// modules (web/charts) on a linkedom document, PNG through resvg (web/charts/png.mjs).
// File names are the original's (`file_name` in the document, a .png name); the .svg sits beside it.
import fs from 'node:fs';
import path from 'node:path';

let chartModules;
async function loadCharts() {
  chartModules ??= (async () => {
    const [dom, svg, png, acc, hist, box, sa, si] = await Promise.all([
      import('../../charts/node_dom.mjs'), import('../../charts/svg.mjs'), import('../../charts/png.mjs'),
      import('../../charts/acc_error.mjs'), import('../../charts/histogram.mjs'), import('../../charts/boxplot.mjs'),
      import('../../charts/sensitivity_analysis.mjs'), import('../../charts/stat_info.mjs'),
    ]);
    return {
      createDocument: dom.createDocument, renderToString: svg.renderToString, svgToPng: png.svgToPng,
      acc, render: {
        distribution: hist.renderHistogram, channelwise: box.renderBoxplot, sensitivity_analysis: sa.renderSensitivityAnalysis,
        stat_info: (target, f, options) => si.renderStatInfo(target, f.curves, { ...options, tensorType: f.tensorType }),
      },
    };
  })();
  return chartModules;
}

// '/' in names becomes '_' in file names (§6.2, §7, §8.4).
export const fileSafe = (name) => name.replace(/\//g, '_');

// The figures of one document: [{kind, file_name, data}], data as the chart module takes it.
async function figuresOf(doc, m) {
  const out = [];
  for (const figure of m.acc.accErrorFigures(doc)) out.push({ kind: 'acc_error', file_name: figure.file_name, data: figure });
  for (const section of ['distribution', 'channelwise']) {
    for (const key of doc[`${section}_order`] ?? Object.keys(doc[section] ?? {})) {
      const data = doc[section][key];
      out.push({ kind: section, file_name: data.file_name, data: { name: key, ...data } });
    }
  }
  // §8.1 visualize: <weight|feature>_stat_info.png
  for (const [tensorType, curves] of Object.entries(doc.stat_info_curves ?? {})) {
    if (curves?.nodes?.length) out.push({ kind: 'stat_info', file_name: `${tensorType}_stat_info.png`, data: { tensorType, curves } });
  }
  if (doc.sensitivity_analysis) {
    out.push({ kind: 'sensitivity_analysis', file_name: doc.sensitivity_analysis.file_name ?? 'partial_quantization.png', data: doc.sensitivity_analysis });
  }
  return out;
}

// Draws every chart of `doc` into `dir`; returns the paths written. `png: false` skips the PNGs.
export async function writeCharts(doc, dir, { png = true } = {}) {
  const m = await loadCharts();
  const document = m.createDocument();
  const written = [];
  fs.mkdirSync(dir, { recursive: true });
  for (const fig of await figuresOf(doc, m)) {
    const render = fig.kind === 'acc_error' ? m.acc.renderAccError : m.render[fig.kind];
    const svgText = m.renderToString(render, fig.data, {}, document);
    const base = path.join(dir, fileSafe(fig.file_name).replace(/\.png$/, ''));
    fs.writeFileSync(`${base}.svg`, svgText);
    written.push(`${base}.svg`);
    if (png) {
      fs.writeFileSync(`${base}.png`, m.svgToPng(svgText));
      written.push(`${base}.png`);
    }
  }
  return written;
}

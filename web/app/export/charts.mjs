// Every chart of the results as SVG text and PNG bytes (the browser draws the PNG on a canvas).
import { serializeSvg } from '../../charts/svg.mjs';
import { svgToPngBlob } from '../../charts/png_browser.mjs';
import { chartList } from '../analysis/charts.mjs';

// [{name: '<folder>/<file>.svg', text, chart}] rendered into detached elements of `doc`.
export function chartSvgFiles(doc, result, graph) {
  return chartList(result, graph).map((chart) => {
    const holder = doc.createElement('div');
    const out = chart.render(holder, { interactive: false });
    const svg = out?.svg ?? holder.querySelector('svg');
    return { name: `${chart.file}.svg`, text: serializeSvg(svg), chart };
  });
}

export async function chartPngFiles(doc, result, graph) {
  const out = [];
  for (const f of chartSvgFiles(doc, result, graph)) {
    const blob = await svgToPngBlob(f.text, { document: doc });
    out.push({ name: f.name.replace(/\.svg$/, '.png'), bytes: new Uint8Array(await blob.arrayBuffer()) });
  }
  return out;
}

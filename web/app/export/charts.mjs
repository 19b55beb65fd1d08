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

// Several conversions in flight: the browser encodes each canvas to PNG off the main thread, so a
// Run all's dozens of charts do not wait for one another (order of the files kept).
const PNG_IN_FLIGHT = 4;

export async function chartPngFiles(doc, result, graph) {
  const svgs = chartSvgFiles(doc, result, graph);
  const out = new Array(svgs.length);
  let next = 0;
  const convert = async () => {
    while (next < svgs.length) {
      const i = next++;
      const blob = await svgToPngBlob(svgs[i].text, { document: doc });
      out[i] = { name: svgs[i].name.replace(/\.svg$/, '.png'), bytes: new Uint8Array(await blob.arrayBuffer()) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PNG_IN_FLIGHT, svgs.length) }, convert));
  return out;
}

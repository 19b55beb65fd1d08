// Named re-exports of the browser-safe chart modules (png.mjs and node_dom.mjs are Node only;
// png_browser.mjs is browser only).
export { renderAccError, accErrorFigures, accErrorYLabel, runningMean, averagedFigure } from './acc_error.mjs';
export { renderHistogram } from './histogram.mjs';
export { renderHintHistogram } from './hint_histogram.mjs';
export { renderBoxplot } from './boxplot.mjs';
export { renderSensitivityAnalysis } from './sensitivity_analysis.mjs';
export { renderStatInfo } from './stat_info.mjs';
export { sensitivityTable, sortRows, filterRows, topK, toCsv, tableHtml, renderSensitivityTable } from './sensitivity_table.mjs';
export { heatScale, worseDirection } from './heat_scale.mjs';
export { renderHeatLegend } from './legend.mjs';
export { renderToString, serializeSvg } from './svg.mjs';
export { toNumber, formatValue, safeName } from './format.mjs';

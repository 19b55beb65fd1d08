// The self-contained HTML report (CLI report.html, web export): one HTML string with inline CSS,
// inline SVG charts (the same chart modules, rendered non-interactive) and tables; a small inline
// script sorts tables and toggles chart series. No external resource: works from file:// offline,
// and its Content-Security-Policy forbids every network request.
import { renderToString } from '../charts/svg.mjs';
import { renderAccError } from '../charts/acc_error.mjs';
import { renderHistogram } from '../charts/histogram.mjs';
import { renderBoxplot } from '../charts/boxplot.mjs';
import { renderSensitivityAnalysis } from '../charts/sensitivity_analysis.mjs';
import { renderStatInfo } from '../charts/stat_info.mjs';
import { sensitivityTable, tableHtml } from '../charts/sensitivity_table.mjs';
import { escapeHtml as esc, formatValue } from '../charts/format.mjs';
import { NAME_CELL_CSS, nameCellHtml, nameHtml } from '../charts/name_cell.mjs';
import { renderHeatLegend } from '../charts/legend.mjs';
import { chartsOf, combineDocuments, notRunNote, orderedKeys, samplesNote } from '../pipeline/result.mjs';
import { RELATION_RULES } from '../pipeline/catalog.mjs';

export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

const svgOf = (text) => text.replace(/^<\?xml[^>]*>\s*/, '').trim();

const STYLE = `
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;font-size:12px;color:#cfd8dc}
nav{padding:8px 24px;background:#eceff1;font-size:13px;position:sticky;top:0;z-index:1}nav a{margin-right:14px;color:#1565c0}
main{padding:8px 24px 40px}section{margin:18px 0 30px}h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:4px}
h3{font-size:14px;margin:18px 0 6px}figure{margin:10px 0;background:#fff;border:1px solid #e0e0e0;display:inline-block;max-width:100%}
figure.wide{display:block;overflow-x:auto}figcaption{font-size:11px;color:#666;padding:2px 6px}
table.ptq-table{border-collapse:collapse;font-size:12px;background:#fff;margin:6px 0}
.ptq-table th,.ptq-table td{border:1px solid #ddd;padding:3px 8px;text-align:left;white-space:nowrap}
.ptq-table th{background:#f1f3f4;cursor:pointer;user-select:none}.ptq-table td.num{text-align:right;font-variant-numeric:tabular-nums}
.ptq-table th[aria-sort=ascending]::after{content:" \\25B2"}.ptq-table th[aria-sort=descending]::after{content:" \\25BC"}
.ptq-table caption{text-align:left;font-size:12px;color:#555;padding:2px 0}
.summary td:first-child{font-weight:bold}ul.messages{font-size:12px;color:#555}
.legend-item{cursor:pointer}.empty{color:#777;font-style:italic}p.samples{font-size:12px;color:#555;margin:2px 0 8px}
figure.graph{display:block;max-height:80vh;overflow:auto}.graph-legend{margin:4px 0}
${NAME_CELL_CSS}`;

// Sort a table by a clicked header (numbers by data-value with inf/nan, NaN last; metric columns start
// in their "worse first" direction) and toggle a chart series from its legend entry.
const SCRIPT = `
(function(){
function num(v){if(v==null)return NaN;var s=String(v).toLowerCase();if(s==="inf")return Infinity;if(s==="-inf")return -Infinity;if(s===""||s==="nan")return NaN;return Number(s);}
document.querySelectorAll("table.ptq-table").forEach(function(t){
 var ths=t.tHead?t.tHead.rows[0].cells:[];
 Array.prototype.forEach.call(ths,function(th,col){th.addEventListener("click",function(){
  var desc=th.getAttribute("aria-sort")?th.getAttribute("aria-sort")==="ascending":th.getAttribute("data-worse")==="higher";
  Array.prototype.forEach.call(ths,function(o){o.removeAttribute("aria-sort");});
  th.setAttribute("aria-sort",desc?"descending":"ascending");
  var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
  rows.forEach(function(r,i){r._i=r._i==null?i:r._i;});
  rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col];
   if(x.hasAttribute("data-value")||y.hasAttribute("data-value")){var p=num(x.getAttribute("data-value")),q=num(y.getAttribute("data-value"));
    if(isNaN(p)||isNaN(q))return isNaN(p)===isNaN(q)?a._i-b._i:isNaN(p)?1:-1;var c=p<q?-1:p>q?1:0;return (desc?-c:c)||a._i-b._i;}
   var c2=x.textContent.localeCompare(y.textContent);return (desc?-c2:c2)||a._i-b._i;});
  rows.forEach(function(r){body.appendChild(r);});});});});
document.querySelectorAll("svg .legend-item").forEach(function(item){item.addEventListener("click",function(){
 var svg=item.ownerSVGElement,name=item.getAttribute("data-series"),off=item.getAttribute("opacity")!=="0.4";
 item.setAttribute("opacity",off?"0.4":"1");
 svg.querySelectorAll(".plot [data-series]").forEach(function(e){if(e.getAttribute("data-series")===name)e.style.display=off?"none":"";});});});
})();`;

function figure(svgText, caption, wide = false) {
  return `<figure${wide ? ' class="wide"' : ''}>${svgOf(svgText)}${caption ? `<figcaption>${esc(caption)}</figcaption>` : ''}</figure>`;
}

function summarySection(result) {
  const m = result.model || {};
  const cal = m.calibration_nodes || [];
  const kinds = (k) => cal.filter((c) => c.kind === k).length;
  const dims = (v) => `${esc(v.name)} ${esc(v.dtype || '')} [${(v.dims || []).map(esc).join(', ')}]`;
  const rows = [
    ['model', m.file],
    ['producer', m.producer],
    ['ir version', m.ir_version],
    ['opsets', Object.entries(m.opsets || {}).map(([d, v]) => `${d} ${v}`).join(', ')],
    ['inputs', (m.inputs || []).map(dims).join('<br>')],
    ['outputs', (m.outputs || []).map(dims).join('<br>')],
    ['nodes', m.node_count],
    ['calibration nodes', cal.length ? `${cal.length} (${kinds('feature')} activation, ${kinds('weight')} weight)` : undefined],
    ['calibration samples', result.calibration_samples],
    ['samples used', samplesByAnalysis(result)],
    ['node relations', relationsText(result)],
    ['compared tensors', (result.compared_tensors || []).join(', ')],
    ['timings', Object.entries(result.timings_ms || {}).map(([k, v]) => `${k} ${formatValue(v, 4)} ms`).join(', ')],
  ].filter(([, v]) => v !== undefined && v !== null && v !== '');
  const raw = new Set(['inputs', 'outputs', 'samples used']);
  const body = rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${raw.has(k) ? v : esc(v)}</td></tr>`).join('\n');
  const cancelled = result.cancelled ? '<p class="empty">The run was cancelled: the tables hold the items finished so far.</p>' : '';
  return `<table class="summary ptq-table"><tbody>\n${body}\n</tbody></table>${cancelled}${topSensitive(result)}`;
}

// Which toolchain's rules related calibration nodes to the nodes reading them (§1.9): the result
// names them only when they are not the default (the first of the core's list).
function relationsText(result) {
  const rule = RELATION_RULES.find((r) => r.name === (result.relations ?? RELATION_RULES[0]?.name));
  if (!rule) return result.relations;
  return `${rule.name}${result.relations ? '' : ' (default)'}: ${rule.doc}`;
}

// The five most sensitive items of each sensitivity table, by the core's order (first metric).
function topSensitive(result) {
  const parts = [];
  for (const section of ['sensitivity', 'leave_one_out']) {
    for (const [type, rows] of Object.entries(result[section] || {})) {
      const table = sensitivityTable(rows, (result[`${section}_order`] || {})[type]);
      const metric = table.columns.find((c) => !['Node', 'node', 'threshold', 'qtype'].includes(c));
      const top = table.rows.slice(0, 5).map((r) => `<li><b>${nameHtml(r.item)}</b>${r.cells.node ? ` (${nameHtml(r.cells.node)})` : ''}: ${esc(metric)} ${esc(formatValue(r.cells[metric]))}</li>`);
      if (top.length) parts.push(`<h3>Most sensitive — ${esc(section === 'sensitivity' ? '' : 'leave-one-out ')}${esc(type)}</h3><ol>${top.join('')}</ol>`);
    }
  }
  return parts.join('\n');
}

function tablesSection(result, section) {
  return Object.entries(result[section] || {}).map(([type, rows]) => {
    const table = sensitivityTable(rows, (result[`${section}_order`] || {})[type]);
    return `<h3>${esc(type)}</h3>${tableHtml(table)}`;
  }).join('\n');
}

// The charts of one kind, in the result module's order.
const chartsOfKind = (result, kind) => chartsOf(result).filter((c) => c.kind === kind);

const messageList = (messages) => (messages && messages.length ? `<ul class="messages">${messages.map((m) => `<li>${esc(m)}</li>`).join('')}</ul>` : '');

function accErrorSection(result, doc) {
  return chartsOfKind(result, 'acc_error').map((c) => figure(renderToString(renderAccError, c.data, {}, doc), c.file_name)).join('\n')
    + messageList(result.acc_error_messages);
}

function distributionSection(result, doc) {
  return chartsOfKind(result, 'distribution').map((c) => figure(renderToString(renderHistogram, c.data, {}, doc), c.file_name)).join('\n')
    + messageList([notRunNote(result, 'distribution')].filter(Boolean));
}

function channelwiseSection(result, doc) {
  return chartsOfKind(result, 'channelwise').map((c) => figure(renderToString(renderBoxplot, c.data, {}, doc), c.file_name, true)).join('\n')
    + messageList([notRunNote(result, 'channelwise')].filter(Boolean));
}

function statInfoSection(result, doc) {
  const info = result.stat_info || {};
  const keys = orderedKeys(info, result.stat_info_order);
  const heads = ['Node', 'Tensor_type', 'Granularity', 'Thresholds', 'Scales', 'Max_vals', 'Min_nz_vals'];
  const rows = keys.map((k) => `<tr>${nameCellHtml(k)}${(info[k].cells || []).map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  const table = keys.length ? `<table class="ptq-table"><thead><tr>${heads.map((h) => `<th>${h}</th>`).join('')}</tr></thead>\n<tbody>\n${rows}\n</tbody></table>` : '';
  const charts = chartsOfKind(result, 'stat_info')
    .map((c) => figure(renderToString(renderStatInfo, c.data.curves, { tensorType: c.data.tensorType }, doc), c.file_name)).join('\n');
  return table + charts + messageList(result.stat_info_messages);
}

function sensitivityAnalysisSection(result, doc) {
  const sa = result.sensitivity_analysis;
  let html = chartsOfKind(result, 'sensitivity_analysis')
    .map((c) => figure(renderToString(renderSensitivityAnalysis, c.data, {}, doc), c.file_name)).join('\n');
  if (sa.ranked && sa.ranking && Object.keys(sa.ranking).length) {
    html += `<h3>Ranking the sensitive nodes were picked from</h3>${tableHtml(sensitivityTable(sa.ranking, sa.ranking_order))}`;
  }
  return html + messageList(result.sensitivity_analysis_messages);
}

// What each section's numbers were computed on ("6 of 6 samples"), as the page says beside them.
const SECTION_SAMPLES = { sensitivity: 'sensitivity', leave_one_out: 'leave_one_out', acc_error: 'acc_error', sensitivity_analysis: 'sensitivity_analysis' };
const sectionNote = (result, id) => {
  const note = SECTION_SAMPLES[id] ? samplesNote(result, SECTION_SAMPLES[id]) : '';
  return note ? `<p class="samples">computed on ${esc(note)}</p>\n` : '';
};

// The summary's line of samples: each analysis present, on how many of the data's samples.
function samplesByAnalysis(result) {
  const lines = [['sensitivity', 'node sensitivity'], ['leave_one_out', 'leave-one-out'], ['acc_error', 'accumulated error'],
    ['sensitivity_analysis', 'sensitivity analysis'], ['what_if', 'what-if'], ['node_errors', 'node errors'], ['fix', 'fix']]
    .filter(([section]) => result[section]).map(([section, label]) => [label, samplesNote(result, section)]).filter(([, note]) => note);
  return lines.map(([label, note]) => `${esc(label)}: ${esc(note)}`).join('<br>');
}

// The picture of the coloured graph (web/app/graph/picture.mjs), with its heat legend.
function graphSection(graph, document) {
  if (!graph) return '';
  if (!graph.svg) return `<section id="graph"><h2>Graph</h2>\n<p class="empty">${esc(graph.note ?? 'No picture of the graph.')}</p>\n</section>`;
  const legend = graph.legend;
  const caption = legend ? `coloured by ${legend.title} (${legend.direction})${legend.note ? `; ${legend.note}` : ''}` : 'not coloured: no analysis gave the nodes a value';
  const legendSvg = legend ? `<div class="graph-legend">${svgOf(renderToString(renderHeatLegend, legend, { width: 300 }, document))}</div>` : '';
  const changed = graph.configuration ? '<p class="samples">Badges show the calibration nodes in the configuration in effect (what-if).</p>' : '';
  return `<section id="graph"><h2>Graph</h2>\n<p class="samples">The model's graph as ptqscope draws it, ${esc(caption)}.</p>${changed}${legendSvg}` +
    `<figure class="graph">${graph.svg}</figure>\n</section>`;
}

const SECTIONS = [
  { id: 'sensitivity', title: 'Node sensitivity', has: (r) => r.sensitivity && Object.keys(r.sensitivity).length, html: (r) => tablesSection(r, 'sensitivity') },
  { id: 'leave_one_out', title: 'Leave-one-out sensitivity', has: (r) => r.leave_one_out && Object.keys(r.leave_one_out).length, html: (r) => tablesSection(r, 'leave_one_out') },
  { id: 'distribution', title: 'Data distribution', has: (r) => r.distribution && Object.keys(r.distribution).length, html: distributionSection },
  { id: 'channelwise', title: 'Channel-wise distribution', has: (r) => r.channelwise && Object.keys(r.channelwise).length, html: channelwiseSection },
  { id: 'acc_error', title: 'Accumulated error', has: (r) => (r.acc_error_figures || []).length, html: accErrorSection },
  { id: 'sensitivity_analysis', title: 'Sensitivity analysis', has: (r) => r.sensitivity_analysis, html: sensitivityAnalysisSection },
  { id: 'stat_info', title: 'Calibration node statistics', has: (r) => r.stat_info && Object.keys(r.stat_info).length, html: statInfoSection },
];

/**
 * buildReport(result, {title, document, graph}) -> HTML string
 * result: a result document (docs/result-schema.md), or an array of documents (combined by the
 *   result module's combineDocuments).
 * document: a DOM document to render the charts with (default globalThis.document; in Node pass
 *   createDocument() from web/charts/node_dom.mjs). Same input -> same text (no clock, no random).
 * graph: the picture of the coloured graph, web/app/graph/picture.mjs's {svg} or {note}, with
 *   `legend` (the heat's legend) and `configuration` (true: badges show a what-if configuration);
 *   no Graph section without it.
 */
export function buildReport(input, { title = 'ptqscope report', document = globalThis.document, graph = null } = {}) {
  const result = Array.isArray(input) ? combineDocuments(input) : input;
  if (!result || result.schema !== 'ptqscope.result') {
    throw new Error('buildReport: the input is not a ptqscope result document (expected "schema": "ptqscope.result")');
  }
  if (!document) throw new Error('buildReport: no DOM document (in Node pass {document: createDocument()} from web/charts/node_dom.mjs)');
  const present = SECTIONS.filter((s) => s.has(result));
  const body = present.map((s) => `<section id="${s.id}"><h2>${esc(s.title)}</h2>\n${sectionNote(result, s.id)}${s.html(result, document)}\n</section>`).join('\n');
  const nav = [['summary', 'Summary'], ...(graph ? [['graph', 'Graph']] : []), ...present.map((s) => [s.id, s.title])].map(([id, t]) => `<a href="#${id}">${esc(t)}</a>`).join('');
  const model = result.model && result.model.file ? ` — ${result.model.file}` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style></head>
<body>
<header><h1>${esc(title)}</h1><p>ptqscope result schema ${esc(result.schema)} v${esc(result.version)}${esc(model)}</p></header>
<nav>${nav}</nav>
<main>
<section id="summary"><h2>Summary</h2>
${summarySection(result)}
</section>
${graphSection(graph, document)}
${body || '<p class="empty">This result has no analysis sections.</p>'}
</main>
<script>${SCRIPT}</script>
</body></html>
`;
}

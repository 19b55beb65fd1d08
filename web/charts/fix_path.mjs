// The path of the automatic fix search (result section `fix`, docs/result-schema.md): categorical
// x = "start" then one point per accepted step ("+node int16" added, "node → float" escalated,
// "−node" pruned, "node → int16" lowered while pruning); y = the target's metric after the step (red
// line with dots); the target bound as a blue dashed line. Laid out like the partial quantization
// chart (sensitivity_analysis.mjs). Non-finite points are gaps.
import { scalePoint, scaleLinear, line } from 'd3';
import { chartRoot, background } from './svg.mjs';
import { drawAxes, drawTitle, drawLegend, legendWidth, tickTexts, maxTextWidth, isolatedDots } from './axes.mjs';
import { toNumber, r2, ellipsize } from './format.mjs';
import { BASELINE_COLOR as TARGET_COLOR, CUMULATIVE_COLOR as PATH_COLOR } from './sensitivity_analysis.mjs';

const LABEL_CHARS = 32;

// The x label of one step.
export function stepLabel(step) {
  if (step.phase === 'add') return `+${step.node} ${step.action}`;
  if (step.action === 'removed') return `−${step.node}`;
  return `${step.node} → ${step.action}`;
}

// "16 int16, 2 float": how many of a fix's final nodes got each action, in the order the actions first
// appear (the CLI's report and the page's fix panel).
export function actionCounts(nodes) {
  const counts = new Map();
  for (const n of nodes) counts.set(n.action, (counts.get(n.action) ?? 0) + 1);
  return [...counts].map(([action, k]) => `${k} ${action}`).join(', ');
}

/**
 * renderFixPath(target, data, options) -> {svg, points}
 * data: the `fix` section {target: {text, metric, op, bound}, start, steps: [{phase, node, action, value}],
 *   reached, final}.
 * options: width (800; widens to 16 px per step), height (520), interactive (true: click a step's node ->
 *   onFocus(nodeName)), onFocus, fit (false: keep `width` however many steps and label only every
 *   k-th step, at least 14 px apart, so a long search stays readable in a panel).
 */
export function renderFixPath(target, data, options = {}) {
  const interactive = options.interactive ?? true;
  const steps = data.steps || [];
  const names = ['start', ...steps.map(stepLabel)];
  const values = [toNumber(data.start), ...steps.map((s) => toNumber(s.value))];
  const bound = toNumber(data.target?.bound);
  const finite = [...values, bound].filter(Number.isFinite);
  const y = scaleLinear().domain([Math.min(...finite), Math.max(...finite)]).nice();
  if (y.domain()[0] === y.domain()[1]) y.domain([y.domain()[0] - 0.01, y.domain()[1] + 0.01]);
  const left = 30 + maxTextWidth(tickTexts(y, 8));
  const items = [
    { name: 'target', label: `target ${data.target?.text ?? ''}`, color: TARGET_COLOR, mark: 'dashed' },
    { name: 'path', label: 'metric after each step', color: PATH_COLOR, mark: 'line' },
  ];
  const legendW = legendWidth(items.map((i) => i.label));
  const labelRoom = Math.min(LABEL_CHARS, names.reduce((m, n) => Math.max(m, n.length), 5)) * 10 * 0.6 + 12;
  const width = options.fit ? options.width ?? 800 : Math.ceil(Math.max(options.width ?? 800, left + 14 + names.length * 16 + legendW + 24));
  const height = options.height ?? 520;

  const svg = chartRoot(target, width, height, 'fix-path');
  background(svg, width, height);
  const outcome = data.reached ? 'target reached' : 'target not reached';
  const top = drawTitle(svg, `Automatic fix search\n(${outcome})`, width / 2) + 8;
  const margin = { top, right: legendW + 16, bottom: 40 + labelRoom, left: left + 14 };
  const w = Math.max(40, width - margin.left - margin.right);
  const h = Math.max(40, height - margin.top - margin.bottom);
  const x = scalePoint().domain(names.map((_, i) => i)).range([0, w]).padding(0.5);
  y.range([h, 0]);
  // Every step labelled when they are at least 14 px apart, else one in k; the last one always, in
  // place of the one before it when they would be closer than k steps (so no two are nearer than k).
  const every = Math.max(1, Math.ceil((names.length * 14) / w));
  const labelled = names.map((_, i) => i).filter((i) => i % every === 0);
  const last = names.length - 1;
  if (labelled.at(-1) !== last) {
    if (labelled.length > 1 && last - labelled.at(-1) < every) labelled.pop();
    labelled.push(last);
  }
  const g = svg.append('g').attr('class', 'plot').attr('transform', `translate(${margin.left},${margin.top})`);
  drawAxes(g, x, y, w, h, { xLabel: every > 1 ? `step (1 in ${every} labelled)` : 'step', yLabel: data.target?.metric ?? 'metric',
    xFormat: (i) => ellipsize(names[i], LABEL_CHARS), xTickValues: labelled, rotateX: true, yTicks: 8, grid: true,
    xLabelOffset: labelRoom + 28, yLabelOffset: left });

  const marks = g.append('g').attr('class', 'marks');
  if (Number.isFinite(bound)) {
    marks.append('line').attr('class', 'target').attr('x1', 0).attr('x2', w).attr('y1', r2(y(bound))).attr('y2', r2(y(bound)))
      .attr('stroke', TARGET_COLOR).attr('stroke-dasharray', '6,4').attr('stroke-width', 1.5);
  }
  const path = line().defined((d) => Number.isFinite(d[1])).x((d) => r2(x(d[0]))).y((d) => r2(y(d[1])));
  marks.append('path').attr('class', 'path').attr('fill', 'none').attr('stroke', PATH_COLOR).attr('stroke-width', 1.5)
    .attr('d', path(values.map((v, i) => [i, v])) || '');
  let dots = '';
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) return;
    const px = r2(x(i));
    const py = r2(y(v));
    dots += `M${r2(px - 2.5)},${py}a2.5,2.5 0 1,0 5,0a2.5,2.5 0 1,0 -5,0`;
  });
  marks.append('path').attr('class', 'steps').attr('fill', PATH_COLOR).attr('d', dots);
  const isolated = isolatedDots(values, (i) => x(i), (v) => y(v));
  if (isolated) marks.append('path').attr('class', 'path-isolated').attr('fill', PATH_COLOR).attr('d', isolated);
  drawLegend(svg, items, width - legendW - 8, margin.top + 6, { maxChars: 48 });

  if (interactive && options.onFocus) {
    g.selectAll('.axis-x .tick').attr('cursor', 'pointer').on('click', (event, i) => {
      if (i > 0) options.onFocus(steps[i - 1].node);
    });
  }
  const points = names.map((name, i) => ({ name, x: r2(x(i)), value: values[i] }));
  return { svg: svg.node(), points };
}

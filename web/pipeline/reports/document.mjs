// A mapped report in the shape of a result document (docs/result-schema.md), so the heat layer and the
// compare view read it as they read ptqscope's own results:
//   report        {format, label, file, metrics: [{name, better}], nodes: {node: {metric: value}},
//                  order, matched, unmatched, problems}: every metric of the report, per node
//   node_errors   when the report holds one of the core's metrics at each node's output, as
//                 accumulated (everything quantized) and / or own (this node alone) error: the same
//                 table as ptqscope's node errors (`ptqscope node-errors`, the what-if panel), with
//                 the measure it was taken with ('converter' for the Horizon log, else 'output'), so
//                 the compare view pairs the report's cosine with ptqscope's node by node
// Non-finite numbers are written as the strings "nan", "inf", "-inf", as in result documents.
import { mapReport } from './mapping.mjs';

export const SCHEMA = 'ptqscope.report';

const num = (v) => (Number.isFinite(v) ? v : Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf');

export function reportDocument(report, graph, mapped = mapReport(report, graph)) {
  const nodes = {};
  for (const n of mapped.order) nodes[n] = Object.fromEntries(Object.entries(mapped.nodes[n]).map(([k, v]) => [k, num(v)]));
  const doc = {
    schema: SCHEMA,
    version: 1,
    report: {
      format: report.format,
      label: report.label,
      file: report.name,
      metrics: report.metrics.map(({ name, better, core, kind, measure }) => ({
        name, better, ...(core ? { core } : {}), ...(kind ? { kind } : {}), ...(measure ? { measure } : {}),
      })),
      nodes,
      order: mapped.order,
      matched: mapped.matched,
      unmatched: mapped.unmatched,
      problems: report.problems,
    },
  };
  // node_errors: the first core metric the report gives per kind (a document has one node-errors metric).
  const kinds = report.metrics.filter((m) => m.core && m.kind);
  const core = kinds[0]?.core;
  if (core) {
    const cols = Object.fromEntries(kinds.filter((m) => m.core === core).map((m) => [m.kind, m.name]));
    const ne = {};
    for (const n of mapped.order) {
      const entry = {};
      for (const [kind, metric] of Object.entries(cols)) if (metric in mapped.nodes[n]) entry[kind] = num(mapped.nodes[n][metric]);
      if (Object.keys(entry).length) ne[n] = entry;
    }
    // How the report measured it (node_errors' option measure): the compare view pairs like with like.
    const measure = kinds[0].measure ?? 'output';
    if (Object.keys(ne).length) doc.node_errors = { metric: core, measure, nodes: ne, order: mapped.order.filter((n) => n in ne), source: report.format };
  }
  return doc;
}

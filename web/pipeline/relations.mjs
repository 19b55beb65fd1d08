// get_calibration_by_node (§1.9) for runall's node_type=node path, which turns its top-5
// nodes into their calibration sets. The relation itself is computed once, in the core
// (quant/relations.cpp), and read here from the graph document's `input_calibrations`
// (docs/graph-schema.md).
export function calibrationSetResolver(graph) {
  const sets = new Map();
  for (const node of graph.nodes) if (node.input_calibrations?.length) sets.set(node.name, node.input_calibrations);
  // node_to_calibration[name] if present, else the name itself (a calibration node selects itself).
  return (name) => sets.get(name) ?? [name];
}

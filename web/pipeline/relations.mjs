// get_calibration_by_node (reference §1.9) on a graph document (docs/graph-schema.md), for runall's
// node_type=node path, which turns its top-5 nodes into their calibration sets. The core has the
// same relation (quant/relations.cpp) but does not export it in the graph document (yet): this is
// the one place in JS that rebuilds it. Each input of a node finds its calibration node directly, or
// through a chain of "skippable" ops (the first HzCalibration among a skippable producer's producers,
// else the first skippable producer's answer).
const SKIPPABLE = new Set(['MaxPool', 'GlobalMaxPool', 'Relu', 'Reshape', 'Transpose', 'ReduceMax', 'Split', 'Slice', 'Gather', 'ScatterND']);
const CALIBRATION = 'HzCalibration';

export function calibrationSetResolver(graph) {
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  const producerOf = (tensor) => byName.get(graph.values?.[tensor]?.producer) ?? null;

  const searchSkippable = (node, seen) => {
    if (seen.has(node.name)) return null; // a cycle cannot happen in an ONNX graph; be safe anyway
    seen.add(node.name);
    const inputs = node.op_type === 'ScatterND' ? node.inputs.slice(0, 1) : node.inputs;
    const producers = [...new Set(inputs.filter(Boolean).map(producerOf).filter(Boolean))];
    const cali = producers.find((p) => p.op_type === CALIBRATION);
    if (cali) return cali.name;
    const skippable = producers.find((p) => SKIPPABLE.has(p.op_type));
    return skippable ? searchSkippable(skippable, seen) : null;
  };

  const nodeToCalibration = new Map();
  for (const node of graph.nodes) {
    if (node.op_type === CALIBRATION) continue;
    const producers = node.inputs.filter(Boolean).map(producerOf);
    if (!producers.some(Boolean)) continue;
    const found = new Set();
    for (const p of producers) {
      if (!p) continue;
      const c = p.op_type === CALIBRATION ? p.name : SKIPPABLE.has(p.op_type) ? searchSkippable(p, new Set()) : null;
      if (c) found.add(c);
    }
    if (found.size) nodeToCalibration.set(node.name, [...found]);
  }
  // node_to_calibration[name] if present, else the name itself (a calibration node selects itself).
  return (name) => nodeToCalibration.get(name) ?? [name];
}

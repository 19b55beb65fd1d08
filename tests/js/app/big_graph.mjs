// A synthetic calibrated graph in the graphJson shape: `blocks` residual blocks of
// HzCalibration(x) -> Conv(HzCalibration(w)) -> Relu -> Add(x), i.e. 5 nodes (3 normal) per block,
// deep (one level per node) like the worst case for layered layouts.
export function bigGraph(blocks) {
  const nodes = [];
  const values = {};
  const value = (name, extra = {}) => { values[name] = { dtype: 'float32', dims: [1, 8, 8, 8], initializer: false, producer: null, consumers: [], ...extra }; };
  const calibrate = (t, kind) => {
    const out = `${t}_q`;
    nodes.push({ name: `${t}_HzCalibration`, op_type: 'HzCalibration', domain: 'horizon', inputs: [t], outputs: [out], attributes: {},
      calibration: { kind, qtype: 'int8', switch: 'ON', axis: kind === 'weight' ? 0 : 1, thresholds: [1], scales: [1 / 127], consumers: [], tensor: t } });
    value(out, { producer: `${t}_HzCalibration` });
    return out;
  };
  value('x');
  let prev = 'x';
  for (let b = 0; b < blocks; b++) {
    value(`w${b}`, { dims: [8, 8, 3, 3], initializer: true });
    const a = calibrate(prev, 'feature');
    const w = calibrate(`w${b}`, 'weight');
    nodes.push({ name: `conv${b}`, op_type: 'Conv', domain: '', inputs: [a, w], outputs: [`c${b}`], attributes: { kernel_shape: [3, 3] }, calibration: null });
    nodes.push({ name: `relu${b}`, op_type: 'Relu', domain: '', inputs: [`c${b}`], outputs: [`r${b}`], attributes: {}, calibration: null });
    nodes.push({ name: `add${b}`, op_type: 'Add', domain: '', inputs: [`r${b}`, prev], outputs: [`s${b}`], attributes: {}, calibration: null });
    value(`c${b}`, { producer: `conv${b}` });
    value(`r${b}`, { producer: `relu${b}` });
    value(`s${b}`, { producer: `add${b}` });
    prev = `s${b}`;
  }
  return {
    schema: 'ptqscope.graph', version: 1,
    inputs: [{ name: 'x', dtype: 'float32', dims: [1, 8, 8, 8] }], outputs: [{ name: prev, dtype: 'float32', dims: [1, 8, 8, 8] }],
    nodes, values,
  };
}

// A model that ptqscope reads with warnings (docs/compatibility.md, "What is rejected"): the
// calibrated digits example with ir_version 12 (newer than the reader knows) and its graph input's
// first dimension declared as -1. Both are loaded and run; the CLI prints each warning on stderr
// and the page shows them in its banner.
import fs from 'node:fs';
import path from 'node:path';
import * as W from './onnx_wire.mjs';

// Writes dir/warned_model.onnx from `model`; returns {file, warnings: [text each warning must contain]}.
export function writeWarningModel(dir, model) {
  const m = W.decode(fs.readFileSync(model));
  W.first(m, 1).value = 12n; // ir_version
  const input = W.all(W.graphOf(m), 11)[0].value.fields;
  const inputName = W.nameOf(input, 1);
  const shape = W.first(W.first(W.first(input, 2).value.fields, 1).value.fields, 2).value.fields;
  const dim = W.all(shape, 1)[0].value.fields;
  dim.splice(0, dim.length, W.int(1, -1));
  const file = path.join(dir, 'warned_model.onnx');
  fs.writeFileSync(file, W.encode(m));
  return {
    file,
    warnings: [
      'the model declares ir_version 12, newer than the newest this reader knows (11)',
      `graph input '${inputName}' declares dimension 0 as -1, which is not a size`,
    ],
  };
}

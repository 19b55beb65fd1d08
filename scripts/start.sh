#!/usr/bin/env bash
# `npm start`: the main job on the embedded example. Installs/builds what is missing, makes the
# digits example (trained CNN + calibration_data), then runs `ptqscope run` on it with quantization
# on and off and prints where the outputs went.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${PTQSCOPE_OUT:-build/example-out}

bash scripts/setup.sh
bash scripts/build.sh release wasm-module   # incremental; release has ptq_calibrate for the example
/usr/bin/python3 scripts/fixtures/make_fixtures.py --parts digits,calibrated

EXAMPLE=.cache/fixtures/digits
for quant in on off; do
  node web/cli/ptqscope.mjs run "$EXAMPLE/digits_cnn.onnx" "$EXAMPLE/calibration_data" --quant "$quant" --out "$OUT/quant-$quant"
done
echo "start: outputs in $OUT/quant-on and $OUT/quant-off (sample_<k>/<output>.npy)"

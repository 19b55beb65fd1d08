#!/usr/bin/env bash
# `npm start`: the main job on the embedded example. Installs/builds what is missing (incremental),
# then
#  1. runs every analysis from the command line on the example (calibrated digits CNN + its
#     calibration_data): `ptqscope runall` writes the hmct-debugger debug_result/ tree (logs, SVG/PNG
#     charts), results.json and a self-contained report.html;
#  2. builds the web app: dist/ptqscope.html opens from disk (file://) with no server and no network;
#     its start screen has "Open example". With a display, both pages are opened in the browser.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${PTQSCOPE_OUT:-build/example-out}

bash scripts/setup.sh
bash scripts/build.sh release web   # release: ptq_calibrate for the example; web: wasm + example + dist/

EXAMPLE=build/web-example           # made by build.sh web from the calibrated fixture
rm -rf "$OUT"
node web/cli/ptqscope.mjs runall "$EXAMPLE/digits_cnn_calibrated_model.onnx" "$EXAMPLE/calibration_data" \
  -s "$OUT/debug_result" --json "$OUT/results.json"

report=$(find "$OUT" -name report.html | awk 'NR == 1')
cat <<MSG

start: done.
  analyses (CLI):  $OUT/debug_result/  (logs and charts), $OUT/results.json
  report:          file://$PWD/${report}
  web app:         file://$PWD/dist/ptqscope.html   (or serve dist/ from any static host)
MSG
if [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]] && command -v xdg-open >/dev/null; then
  xdg-open "dist/ptqscope.html" >/dev/null 2>&1 || true
fi

#!/usr/bin/env bash
# Builds everything, or only the named parts:  scripts/build.sh [release] [asan] [wasm] [wasm-module]
#   release: build/native-release  Release ptq_core + the native `ptqscope` and `ptq_calibrate` tools, and
#            the CLI's native engine build/native-release/ptqscope.node (where Node's headers are)
#   asan:    build/native-asan     Debug + ASan/UBSan: ptq_tests (+ ptq_oracle_tests when available)
#   wasm:    build/wasm            ptqscope.mjs (SINGLE_FILE ES module) + ptq_tests.js (gtest under node)
#   wasm-module: build/wasm        ptqscope.mjs only (what the CLI and `npm start` need)
#   web:     dist/                 the web app (vite.config.mjs): dist/index.html + assets for a static
#            host and the single-file dist/ptqscope.html; first makes what it embeds: ptqscope.mjs
#            (wasm-module), the digits fixture and build/web-example (the digits CNN calibrated by
#            the native ptq_calibrate + its calibration_data). Also `npm run build:web`.
# -j2: the machine has 2 cores shared with other work.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${PTQ_JOBS:-2}
parts=("$@")
((${#parts[@]})) || parts=(release asan wasm web)

step() { printf '\n== build %s ==\n' "$1"; }

# Node's C headers beside the running node (NodeSource, Node's tarballs), for the native engine;
# CMake also looks in /usr/include/node (Debian's libnode-dev).
node_include() {
  local dir
  dir=$(node -p "require('path').resolve(process.execPath, '../../include/node')" 2>/dev/null) || return 0
  [[ -f $dir/node_api.h ]] && echo "-DPTQ_NODE_INCLUDE=$dir"
  return 0
}

build_release() {
  step "native release (build/native-release)"
  cmake -S "$ROOT" -B build/native-release -DCMAKE_BUILD_TYPE=Release -DPTQ_TESTS=OFF $(node_include) >/dev/null
  cmake --build build/native-release -j"$JOBS" --target ptq_core ptqscope_native ptq_calibrate
  # The CLI's native engine (bind/node_addon.cpp), where CMake found Node's headers.
  if grep -q '^PTQ_NODE_INCLUDE:PATH=/' build/native-release/CMakeCache.txt; then
    cmake --build build/native-release -j"$JOBS" --target ptqscope_node
  else
    echo "build: Node's headers (node_api.h) not found: no native engine, the CLI runs the wasm engine"
  fi
}

build_asan() {
  step "native Debug + ASan/UBSan tests (build/native-asan)"
  cmake -S "$ROOT" -B build/native-asan -DCMAKE_BUILD_TYPE=Debug -DPTQ_SANITIZE=ON -DPTQ_TESTS=ON >/dev/null
  cmake --build build/native-asan -j"$JOBS"
}

build_wasm() { # [target]
  step "wasm (build/wasm${1:+, $1})"
  # Every emcc call needs Debian's node modules; emcmake's default emulator passes a flag Node 20
  # rejects (--experimental-wasm-threads), so name node explicitly.
  export NODE_PATH=/usr/share/nodejs
  emcmake cmake -S "$ROOT" -B build/wasm -DCMAKE_BUILD_TYPE=Release -DPTQ_TESTS=ON \
    -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node >/dev/null
  # ptq_tests.js is CommonJS, but the repository's package.json says "type": "module": without this
  # marker node (and ctest) would load it as an ES module and fail with "require is not defined".
  echo '{"type":"commonjs"}' > build/wasm/package.json
  cmake --build build/wasm -j"$JOBS" ${1:+--target "$1"}
}

# The embedded example of the web app: the calibrated digits fixture (HzCalibration nodes, made by
# ptq_calibrate in scripts/fixtures/calibrated_models.py) and its data, copied where Vite bundles it.
build_example() {
  step "web example (build/web-example)"
  cmake -S "$ROOT" -B build/native-release -DCMAKE_BUILD_TYPE=Release -DPTQ_TESTS=OFF >/dev/null
  cmake --build build/native-release -j"$JOBS" --target ptq_calibrate
  /usr/bin/python3 scripts/fixtures/make_fixtures.py --parts digits,calibrated
  local fixtures=.cache/fixtures out=build/web-example
  rm -rf "$out.tmp" && mkdir -p "$out.tmp"
  cp "$fixtures/calibrated/digits_cnn_calibrated_model.onnx" "$out.tmp/"
  cp -r "$fixtures/digits/calibration_data" "$out.tmp/calibration_data"
  rm -rf "$out" && mv "$out.tmp" "$out"
}

build_web() {
  build_wasm ptqscope_wasm
  build_example
  step "web app (dist/)"
  npx vite build --logLevel warn
  ls -l dist/ptqscope.html dist/index.html
}

for p in "${parts[@]}"; do
  case "$p" in
    release) build_release ;;
    asan) build_asan ;;
    wasm) build_wasm ;;
    wasm-module) build_wasm ptqscope_wasm ;;
    web) build_web ;;
    *) echo "build.sh: unknown part '$p' (expected release, asan, wasm, wasm-module, web)" >&2; exit 2 ;;
  esac
done

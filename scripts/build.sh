#!/usr/bin/env bash
# Builds everything, or only the named parts:  scripts/build.sh [release] [asan] [wasm] [wasm-module]
#   release: build/native-release  Release ptq_core + the native `ptqscope` tool
#   asan:    build/native-asan     Debug + ASan/UBSan: ptq_tests (+ ptq_oracle_tests when available)
#   wasm:    build/wasm            ptqscope.mjs (SINGLE_FILE ES module) + ptq_tests.js (gtest under node)
#   wasm-module: build/wasm        ptqscope.mjs only (what the CLI and `npm start` need)
# -j2: the machine has 2 cores shared with other work.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${PTQ_JOBS:-2}
parts=("$@")
((${#parts[@]})) || parts=(release asan wasm)

step() { printf '\n== build %s ==\n' "$1"; }

build_release() {
  step "native release (build/native-release)"
  cmake -S "$ROOT" -B build/native-release -DCMAKE_BUILD_TYPE=Release -DPTQ_TESTS=OFF >/dev/null
  cmake --build build/native-release -j"$JOBS" --target ptq_core ptqscope_native
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

for p in "${parts[@]}"; do
  case "$p" in
    release) build_release ;;
    asan) build_asan ;;
    wasm) build_wasm ;;
    wasm-module) build_wasm ptqscope_wasm ;;
    *) echo "build.sh: unknown part '$p' (expected release, asan, wasm, wasm-module)" >&2; exit 2 ;;
  esac
done

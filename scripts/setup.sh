#!/usr/bin/env bash
# Installs what ptqscope needs on a fresh Debian 12 + Node 20 machine, and nothing that is already there:
# Debian packages are checked one by one with `dpkg -s`; `npm ci` runs only when node_modules is missing
# or older than package-lock.json. Safe to run before every build or test.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake g++ googletest                  # native build + GoogleTest sources (/usr/src/googletest)
  emscripten                            # 3.1.6 with its prebuilt system-library cache
  libonnx-testdata                      # ONNX single-op conformance tests
  libprotobuf-dev protobuf-compiler libonnx-dev   # native oracle tests (libprotobuf reader cross-check)
  python3-torch python3-torchvision python3-onnx python3-sklearn python3-numpy  # fixture generation
  clang libclang-rt-14-dev              # libFuzzer harnesses
  clang-format                          # C++ style check (tests/js/style.test.mjs)
  chromium                              # browser tests (playwright-core drives Debian's chromium)
)

# Node's C headers (node_api.h) for the CLI's native engine (scripts/build.sh release builds it where
# they are): NodeSource's nodejs package and Node's own tarballs ship them beside node
# (<prefix>/include/node); Debian's nodejs has them in libnode-dev (its Node 18: Node-API is
# ABI-stable, so they build an addon that Node 20 loads).
node_include=$(node -p "require('path').resolve(process.execPath, '../../include/node')" 2>/dev/null || true)
if [[ ! -f $node_include/node_api.h && ! -f /usr/include/node/node_api.h ]]; then
  APT_PACKAGES+=(libnode-dev)
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  # One `apt-get update` only when a package is missing (a fresh machine has empty lists).
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
else
  echo "setup: Debian packages present"
fi

if [[ ! -d node_modules || package-lock.json -nt node_modules ]]; then
  echo "setup: npm ci"
  # ONNXRUNTIME_NODE_INSTALL=skip as well as .npmrc: npm 11 warns that project-level unknown keys
  # will stop working, and the CUDA download would fail here (no network beyond the registries).
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
  touch node_modules
else
  echo "setup: node_modules up to date"
fi

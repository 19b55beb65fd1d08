#!/usr/bin/env bash
# Long fuzzing runs (not in CI; scripts/fuzz-smoke.sh is the bounded run `npm test` makes): every
# libFuzzer harness of tests/fuzz/ for SECONDS each (default 600), clang + ASan/UBSan, in fork mode
# so a run continues after a finding and collects them all. The structure-aware model_exec_fuzz
# mutates valid models (dims, attributes, initializer sizes, graph edges) and runs them through the
# executor. Corpora persist in build/fuzz-long/corpus/<target>/ between runs; findings are written as
# build/fuzz-long/<target>/{crash,leak,oom,timeout,slow-unit}-<hash> (a slow unit took over 10 s,
# e.g. quadratic work); reproduce one with
#   build/fuzz/<target> <file>
# and turn it into a regression test (tests/cpp/...). Exit code 1 when anything was found.
# Usage: scripts/fuzz-long.sh [seconds-per-target] [target ...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(model_exec_fuzz onnx_reader_fuzz npy_reader_fuzz)
build=build/fuzz
out=build/fuzz-long
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DPTQ_FUZZ=ON -DPTQ_TESTS=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build "$build" -j"${PTQ_JOBS:-2}" --target "${targets[@]}" >/dev/null

# Seeds: small valid models (the fixtures under 512 KiB, the libonnx-testdata node models) and npy files.
seed_models() {
  local dir=$1
  mkdir -p "$dir"
  find .cache/fixtures -name '*.onnx' -size -512k 2>/dev/null | sort | while read -r f; do cp "$f" "$dir/"; done
  if [ -d /usr/share/libonnx-testdata/data/node ]; then
    find /usr/share/libonnx-testdata/data/node -name model.onnx | sort | while read -r f; do
      cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-12).onnx"; done
  fi
}
found=0
for target in "${targets[@]}"; do
  corpus="$out/corpus/$target"
  artifacts="$out/$target"
  mkdir -p "$corpus" "$artifacts"
  if [ -z "$(ls -A "$corpus")" ]; then
    case $target in
      npy_reader_fuzz) find .cache/fixtures -name '*.npy' 2>/dev/null | sort | awk 'NR <= 200' | while read -r f; do cp "$f" "$corpus/"; done ;;
      *) seed_models "$corpus" ;;
    esac
  fi
  echo "fuzz-long: $target for ${seconds}s (corpus $corpus, findings $artifacts/)"
  # -malloc_limit_mb: one allocation above 2 GiB is a finding (the wasm heap is 4 GiB in all).
  "$build/$target" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$seconds" \
    -rss_limit_mb=3072 -malloc_limit_mb=2048 -timeout=30 -max_len=1048576 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" >"$out/$target.log" 2>&1 || true
  n=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'slow-unit-*' \) | wc -l)
  grep -E '^#[0-9]+:? ' "$out/$target.log" | tail -1 || true
  echo "fuzz-long: $target: $n finding(s)"
  found=$((found + n))
done
echo "fuzz-long: $found finding(s) in all (see $out/<target>/)"
((found == 0))

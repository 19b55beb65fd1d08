#!/usr/bin/env bash
# Bounded fuzz smoke run of the ONNX and npy readers (libFuzzer, clang + ASan/UBSan).
# Seeds: the libonnx-testdata models and our fixture npy files (awk, not head: with pipefail, head
# closing the pipe early kills find with SIGPIPE and the script with it).
# Usage: scripts/fuzz-smoke.sh [seconds-per-target] [report.json]  (the report: {"passed": [...], "failed": [...]})
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
report="${2:-}"
passed=() failed=()
json_list() { local out="" x; for x in "$@"; do out+="${out:+,}\"$x\""; done; printf '[%s]' "$out"; }
write_report() {
  [[ -n $report ]] || return 0
  printf '{"passed": %s, "failed": %s}\n' "$(json_list "${passed[@]}")" "$(json_list "${failed[@]}")" > "$report"
}
build=build/fuzz
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DPTQ_FUZZ=ON -DPTQ_TESTS=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build "$build" -j2 --target onnx_reader_fuzz npy_reader_fuzz >/dev/null
corpus="$build/corpus"
mkdir -p "$corpus/onnx" "$corpus/npy"
if [ -d /usr/share/libonnx-testdata/data/node ]; then
  find /usr/share/libonnx-testdata/data/node -name model.onnx | sort | awk 'NR <= 200' | while read -r f; do
    cp "$f" "$corpus/onnx/$(echo "$f" | md5sum | cut -c1-12).onnx"; done
fi
find .cache/fixtures -name '*.npy' 2>/dev/null | sort | awk 'NR <= 50' | while read -r f; do cp "$f" "$corpus/npy/"; done
printf '\x93NUMPY\x01\x00v\x00{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (2,), }' > "$corpus/npy/seed.npy"
for target in onnx_reader_fuzz:onnx npy_reader_fuzz:npy; do
  name="${target%%:*}"; dir="${target##*:}"
  echo "fuzz: $name for ${seconds}s"
  "$build/$name" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=0 -artifact_prefix="$build/" \
    "$corpus/$dir" 2>"$build/$name.log" || { tail -40 "$build/$name.log"; echo "fuzz: $name FAILED"; failed+=("$name"); continue; }
  grep -E '^#[0-9]+ +DONE' "$build/$name.log" | tail -1 || true
  passed+=("$name")
done
write_report
echo "fuzz smoke: ${#passed[@]} passed, ${#failed[@]} failed"
((${#failed[@]} == 0))

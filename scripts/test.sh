#!/usr/bin/env bash
# Every test: setup (installs what is missing), build (native release, native ASan/UBSan, wasm),
# fixtures (cached in .cache/fixtures), native GoogleTest (+ oracle tests when built), the wasm
# GoogleTest binary under node, then Vitest. Every step runs even after a failure (except those whose
# build failed: stale binaries would give misleading results); the last line sums all test counts:
#   summary: N passed, N failed, N skipped
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RESULTS=build/test-results
mkdir -p "$RESULTS"
rm -f "$RESULTS"/*.json

declare -a STEP_NAMES=() STEP_STATUS=()
# Failures no runner reported (a build, a crash before the JSON report, a step not run): each counts
# as one failed test in the summary so it can never read "0 failed".
unreported=0
record() {
  STEP_NAMES+=("$1"); STEP_STATUS+=("$2")
  if [[ $2 != ok && ( -z ${3:-} || ! -s ${3:-/nonexistent} ) ]]; then unreported=$((unreported + 1)); fi
}
run_step() { # name [--report FILE] command...
  local name=$1 report=
  shift
  if [[ $1 == --report ]]; then report=$2; shift 2; fi
  printf '\n==== %s ====\n' "$name"
  if "$@"; then record "$name" ok; return 0; fi
  record "$name" FAILED "$report"
  return 1
}
skip_step() { printf '\n==== %s ====\nskipped: %s\n' "$1" "$2"; record "$1" "NOT RUN ($2)"; }

run_step setup bash scripts/setup.sh || { echo "setup failed: cannot continue" >&2; exit 1; }

run_step "build native-release" bash scripts/build.sh release
asan_ok=0; wasm_ok=0
run_step "build native-asan" bash scripts/build.sh asan && asan_ok=1
run_step "build wasm" bash scripts/build.sh wasm && wasm_ok=1
fixtures_ok=0
run_step fixtures /usr/bin/python3 scripts/fixtures/make_fixtures.py && fixtures_ok=1
# The web app (dist/, dist/ptqscope.html) and its example: the browser tests open them. After the
# fixtures: the example is the calibrated digits fixture.
run_step "build web" bash scripts/build.sh web

if ((asan_ok)); then
  run_step "native gtest (ASan/UBSan)" --report "$RESULTS/gtest-native.json" build/native-asan/ptq_tests --gtest_brief=1 --gtest_output=json:"$RESULTS/gtest-native.json"
  if [[ -x build/native-asan/ptq_oracle_tests ]]; then
    run_step "native oracle gtest" --report "$RESULTS/gtest-oracle.json" build/native-asan/ptq_oracle_tests --gtest_brief=1 --gtest_output=json:"$RESULTS/gtest-oracle.json"
  fi
else
  skip_step "native gtest (ASan/UBSan)" "build failed"
fi

# Bounded libFuzzer smoke of the two readers of untrusted bytes (ONNX, npy): clang + ASan/UBSan.
run_step "fuzz smoke (readers)" --report "$RESULTS/fuzz.json" bash scripts/fuzz-smoke.sh 15 "$RESULTS/fuzz.json"

if ((wasm_ok)); then
  run_step "wasm gtest (node)" --report "$RESULTS/gtest-wasm.json" node build/wasm/ptq_tests.js --gtest_brief=1 --gtest_output=json:"$RESULTS/gtest-wasm.json"
else
  skip_step "wasm gtest (node)" "build failed"
fi

if ((wasm_ok && fixtures_ok)); then
  run_step vitest --report "$RESULTS/vitest.json" npx vitest run --reporter=default --reporter=json --outputFile.json="$RESULTS/vitest.json"
else
  skip_step vitest "the wasm build or the fixtures failed"
fi

printf '\n==== steps ====\n'
failed_steps=0
for i in "${!STEP_NAMES[@]}"; do
  printf '  %-28s %s\n' "${STEP_NAMES[$i]}" "${STEP_STATUS[$i]}"
  [[ ${STEP_STATUS[$i]} == ok ]] || failed_steps=$((failed_steps + 1))
done

# Sum the runners' own counts (GoogleTest JSON, Vitest JSON).
node --input-type=module - "$RESULTS" "$unreported" <<'JS'
import fs from 'node:fs';
const [dir, unreported] = process.argv.slice(2);
let passed = 0, failed = 0, skipped = 0;
for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
  const r = JSON.parse(fs.readFileSync(`${dir}/${f}`, 'utf8'));
  let p = 0, x = 0, s = 0;
  if (f.startsWith('fuzz')) {
    p = r.passed.length; x = r.failed.length;
  } else if (f.startsWith('gtest')) {
    for (const suite of r.testsuites ?? []) for (const t of suite.testsuite ?? []) {
      if (t.result === 'SKIPPED' || t.status === 'NOTRUN') s++;
      else if (t.failures?.length) x++;
      else p++;
    }
  } else {
    p = r.numPassedTests; x = r.numFailedTests; s = r.numPendingTests + r.numTodoTests;
    // A file that failed without a failed test (it did not load, or a beforeAll threw so its tests
    // were skipped) must still count as a failure.
    x += (r.testResults ?? []).filter((t) => t.status === 'failed'
      && !(t.assertionResults ?? []).some((a) => a.status === 'failed')).length;
  }
  console.log(`  ${f.replace(/\.json$/, '').padEnd(28)} ${p} passed, ${x} failed, ${s} skipped`);
  passed += p; failed += x; skipped += s;
}
if (Number(unreported)) console.log(`  ${'steps without test results'.padEnd(28)} ${unreported} failed (see above)`);
console.log(`summary: ${passed} passed, ${failed + Number(unreported)} failed, ${skipped} skipped`);
JS
((failed_steps == 0))

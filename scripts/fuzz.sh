#!/usr/bin/env bash
# Runs every fuzz harness (Sources/FuzzHarnesses) under libFuzzer with the address sanitizer, a few
# seconds each, starting from the seed corpus in Fuzz/corpus/NAME/. Called by `./run.sh test`.
#   scripts/fuzz.sh [--seconds N] [NAME…]     default: every harness, FUZZ_SECONDS (8) each
# A crash leaves the input in Fuzz/findings/NAME/ and fails the run: copy that file into
# Fuzz/corpus/NAME/ and it becomes a regular test (Tests/FuzzHarnessesTests replays every corpus file).
# Found inputs that merely add coverage are not kept (the corpus in git stays small and reviewed).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-8}
names=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    *) names+=("$1"); shift ;;
  esac
done

# libFuzzer without its main (our executable keeps its own and calls LLVMFuzzerRunDriver), the
# coverage instrumentation libFuzzer needs, and ASan — on Swift code only (C dependencies are
# not instrumented, which is fine: they are not what we fuzz).
runtime=$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/clang
nomain=$(ls "$runtime"/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a 2>/dev/null | head -n 1 || true)
if [[ -z "$nomain" ]]; then
  echo "SKIPPED: fuzz: this toolchain has no libclang_rt.fuzzer_no_main (libFuzzer); nothing fuzzed"
  exit 0
fi
build=.build-fuzz
echo "fuzz: building the harnesses with libFuzzer and the address sanitizer (in $build)" >&2
swift build --build-path "$build" --product analog-remote-fuzz \
  -Xswiftc -sanitize=address \
  -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
  -Xlinker --undefined=LLVMFuzzerRunDriver -Xlinker "$nomain" -Xlinker -lstdc++ \
  2>&1 | grep -vE '^\[|^Building|^Build complete|Compiling|ld.gold: warning' || true
bin="$build/debug/analog-remote-fuzz"
[[ -x "$bin" ]] || { echo "fuzz: the fuzz build failed (output above)" >&2; exit 1; }

if ((${#names[@]} == 0)); then
  mapfile -t names < <(ls Fuzz/corpus)
fi

export SWIFT_BACKTRACE=enable=no   # a crash ends at once; libFuzzer prints the stack and the input
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan-suppressions.txt:print_suppressions=0"
# A harness is one process on one core for its seconds: as many run at once as there are cores
# (FUZZ_JOBS to change it), each still fuzzing its full time; the report keeps the names' order.
parallel=${FUZZ_JOBS:-$(nproc)}
work=$(mktemp -d -t analog-remote-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
fuzz_one() {
  local name=$1 log="$work/$1.log"
  mkdir -p "$work/$name" "Fuzz/findings/$name"
  cp Fuzz/corpus/"$name"/* "$work/$name/"
  if "$bin" "$name" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=4096 \
       -artifact_prefix="Fuzz/findings/$name/" -print_final_stats=1 "$work/$name" >"$log" 2>&1; then
    local runs cov
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 || true)
    echo "fuzz: $name ok — $runs inputs in ${seconds} s, $cov" >"$work/$name.result"
    rmdir "Fuzz/findings/$name" 2>/dev/null || true
  else
    { echo "fuzz: $name FAILED — input kept in Fuzz/findings/$name/; libFuzzer said:"
      grep -vE 'ld.gold|^#[0-9]+' "$log" | tail -n 40; } >"$work/$name.failed"
  fi
}
for name in "${names[@]}"; do
  while (( $(jobs -rp | wc -l) >= parallel )); do wait -n || true; done
  fuzz_one "$name" &
done
wait
passed=0; failed=0
for name in "${names[@]}"; do
  if [[ -f "$work/$name.result" ]]; then
    cat "$work/$name.result"; passed=$((passed + 1))
  else
    cat "$work/$name.failed" 2>/dev/null || echo "fuzz: $name FAILED — no report (the harness did not run)"
    failed=$((failed + 1))
  fi
done
rmdir Fuzz/findings 2>/dev/null || true
echo "fuzz: $passed passed, $failed failed"
((failed == 0))

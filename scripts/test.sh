#!/usr/bin/env bash
# test.sh - install what is missing, build, and run every test twice: in the
# normal build (CUDA backend compiled when nvcc is found) and in the
# AddressSanitizer + UndefinedBehaviorSanitizer build (host only; tests named
# *slow* are skipped there), then a bounded fuzz run in a clang build that
# also compiles the library and `pista`. Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}

bash scripts/deps.sh || exit 1
if [ -x tests/oracle/setup.sh ] || [ -f tests/oracle/setup.sh ]; then
  bash tests/oracle/setup.sh || exit 1
fi

passed=0; failed=0
run_suite() {   # name, build dir, cmake args..., then ctest args after "--"
  local name=$1 dir=$2; shift 2
  local cargs=() targs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do cargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  targs=("$@")
  echo "== $name build ($dir)"
  cmake -S . -B "$dir" "${cargs[@]}" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; failed=$((failed+1)); return; }
  if ! cmake --build "$dir" -j"$JOBS" >"$dir.build.log" 2>&1; then
    grep -E 'error|Error' "$dir.build.log" | head -40
    echo "== $name: build FAILED (full log: $dir.build.log)"; failed=$((failed+1)); return
  fi
  echo "== $name tests"
  (cd "$dir" && ctest --output-on-failure -j"$JOBS" "${targs[@]}") | tee "$dir.ctest.log"
  local p f
  p=$(grep -oE '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$dir.ctest.log" | tail -1)
  f=$(echo "$p" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+)/\1/')
  local total; total=$(echo "$p" | sed -E 's/.*out of ([0-9]+)/\1/')
  if [ -z "$p" ]; then failed=$((failed+1)); return; fi
  passed=$((passed + total - f)); failed=$((failed + f))
}

mkdir -p build
# The normal build is Release (gcc -O3): its optimiser lets -Wall -Wextra
# -Werror see warnings an unoptimised build misses, so no separate
# compile-only gcc build is needed.
run_suite normal build/normal -DCMAKE_BUILD_TYPE=Release
# The sanitizer run of the differential SQL test takes the fixed seed's first
# 60 queries (all 300 run on cpu and sim in the normal build).
DIFFTEST_COUNT=60 run_suite sanitize build/asan -DCMAKE_BUILD_TYPE=Debug -DPISTA_SANITIZE=ON -DPISTA_CUDA=OFF -- -LE slow

# Bounded fuzzing (clang's libFuzzer, ASan+UBSan): fuzz_parquet over footer
# and page decoding, fuzz_scan over whole-file scans through SQL (half the
# time), fuzz_sql over SQL text (parse to run). The fuzz build
# also compiles the library and `pista` with clang -O2 and warnings as
# errors: clang's own warnings (e.g. unneeded declarations).
fuzz_run() {   # target, seconds, max input length (0: libFuzzer's), seed folders...
  local dir=build/fuzz target=$1 secs=$2 len=$3; shift 3
  local opts=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=20)
  [ "$len" -gt 0 ] && opts+=(-max_len="$len")
  rm -rf "$dir/corpus-$target" && mkdir -p "$dir/corpus-$target"
  echo "== fuzz: $target for ${secs}s"
  if (cd "$dir" && "./$target" "corpus-$target" "$@" "${opts[@]}" >"$target.log" 2>&1); then
    echo "fuzz: $target: $(grep -E '^Done [0-9]+ runs' "$dir/$target.log" | tail -1), no crash"; passed=$((passed+1))
  else
    tail -n 40 "$dir/$target.log"
    echo "fuzz: $target FAILED; the input is in $dir (crash-*, timeout-*): add it to tests/fuzz/corpus (or corpus_sql)"
    failed=$((failed+1))
  fi
}
fuzz_stage() {
  local dir=build/fuzz secs=${PISTA_FUZZ_SECONDS:-45}
  echo "== fuzz build ($dir)"
  if ! command -v clang >/dev/null; then echo "== fuzz: clang missing"; failed=$((failed+1)); return; fi
  if ! CC=clang CXX=clang++ cmake -S . -B "$dir" -DPISTA_FUZZ=ON -DPISTA_SANITIZE=ON -DPISTA_CUDA=OFF -DPISTA_TESTS=OFF \
        >"$dir.configure.log" 2>&1 ||
     ! cmake --build "$dir" --target pista_lib pista fuzz_parquet fuzz_scan fuzz_sql -j"$JOBS" >"$dir.build.log" 2>&1; then
    tail -n 30 "$dir.configure.log" "$dir.build.log"; echo "== fuzz: build FAILED"; failed=$((failed+1)); return
  fi
  echo "clang: library and pista built with warnings as errors"
  # Parquet seeds of at most 64 KiB (tests/fuzz/corpus_parquet: every codec,
  # v1 and v2 pages, the engine's types, other writers' files) and inputs as
  # long: with the megabyte-sized TPC-H files as seeds it ran 20 times fewer
  # inputs a second (about 300 against 6,000).
  fuzz_run fuzz_parquet "$secs" 65536 ../../tests/fuzz/corpus_parquet ../../tests/fuzz/corpus
  fuzz_run fuzz_scan "$((secs / 2))" 65536 ../../tests/fuzz/corpus_parquet ../../tests/fuzz/corpus \
    ../../tests/fuzz/corpus_scan
  fuzz_run fuzz_sql "$secs" 4096 ../../tests/fuzz/sql ../../tests/data/tpch/queries ../../tests/fuzz/corpus_sql
}
fuzz_stage

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# test_cli_device.sh - the `pista` program's device commands as a user runs
# them: listings, bench device in both formats, the memory limit, and clear
# errors with the documented exit codes for bad input.
set -u
P=${PISTA:?PISTA must point at the pista binary}
fails=0
check() {   # description, expected exit code, command...
  local what=$1 want=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ]; then echo "FAIL: $what: exit $rc, wanted $want"; echo "$out"; fails=$((fails+1)); return 1; fi
  echo "ok: $what"
}
expect_text() {   # description, needle
  if ! grep -qF -- "$2" <<<"$out"; then echo "FAIL: $1: output lacks '$2'"; echo "$out"; fails=$((fails+1)); fi
}

check "version" 0 "$P" --version && expect_text "version" "pista "
check "no arguments opens the shell (empty input: exit 0)" 0 "$P" </dev/null
check "unknown option is a usage error" 2 "$P" --frobnicate </dev/null && expect_text "unknown option" "unknown option '--frobnicate'"
check "unknown command" 2 "$P" frobnicate && expect_text "unknown command" "unknown command 'frobnicate'"

check "devices lists cpu" 0 "$P" devices --device cpu
expect_text "devices" "cpu "
expect_text "devices" "requested cpu"
check "devices auto says why" 0 "$P" devices
expect_text "auto" "auto: chose"

check "unknown device" 1 "$P" devices --device tpu && expect_text "unknown device" "unknown device 'tpu'"
if ! "$P" devices | grep -q '^cuda:0'; then
  # No usable GPU here: an explicit cuda must fail loudly, never fall back.
  check "explicit cuda without a GPU fails" 1 "$P" devices --device cuda
  expect_text "cuda error" "pista: "
fi

check "memory limit flag" 0 "$P" devices --device cpu --memory-limit 1.5G && expect_text "limit" "memory limit: 1.50 GiB"
check "memory limit env" 0 env PISTA_MEMORY_LIMIT=64M "$P" devices --device cpu && expect_text "env limit" "memory limit: 64.00 MiB"
check "bad memory limit" 2 "$P" devices --memory-limit lots && expect_text "bad limit" "--memory-limit"
check "zero memory limit" 2 "$P" devices --memory-limit 0 && expect_text "zero limit" "0 bytes"
check "tiny memory limit" 2 "$P" devices --memory-limit 100 && expect_text "tiny limit" "smallest memory limit"
check "memory limit above the machine" 2 "$P" devices --memory-limit 1000000T && expect_text "huge limit" "machine's memory"
check "bad env memory limit" 1 env PISTA_MEMORY_LIMIT=12Q "$P" devices --device cpu && expect_text "bad env" "PISTA_MEMORY_LIMIT"

check "bench device table" 0 "$P" bench device --device cpu --size 8M --repeat 2
for m in "host->device, pinned" "host->device, pageable" "device->host, pinned" "device->device" "pool alloc+free" "malloc+free"; do
  expect_text "bench row" "$m"
done
check "bench device json" 0 "$P" bench device --device cpu --size 4M --repeat 1 --json
expect_text "json" '"device": "cpu'
expect_text "json" '"unit": "GB/s"'
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert len(d["results"])==8 and all(r["value"]>0 for r in d["results"])' "$out" \
    || { echo "FAIL: bench json is not valid or has non-positive values"; fails=$((fails+1)); }
fi
check "bench over the memory limit fails cleanly" 1 "$P" bench device --device cpu --size 64M --memory-limit 16M
expect_text "oom" "out of memory"
# Every kernel family runs on cpu and, through the emulated CUDA kernels, on sim.
for d in cpu sim; do
  check "bench kernels on $d" 0 "$P" bench kernels --device "$d" --rows 4096 --repeat 1 --json
  if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert len(d["results"])==12 and all(r["gb_per_s"]>0 for r in d["results"])' "$out" \
      || { echo "FAIL: bench kernels on $d: not every kernel ran"; echo "$out"; fails=$((fails+1)); }
  fi
done
check "bench unknown option" 2 "$P" bench device --bogus
check "bench unknown benchmark" 2 "$P" bench nothing

echo "$fails failed"
[ "$fails" -eq 0 ]

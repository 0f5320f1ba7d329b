#!/usr/bin/env bash
# gpu-check.sh - prove the CUDA device on a machine with an NVIDIA GPU, in
# one command and under 10 minutes, and write one summary file.
#
#   scripts/gpu-check.sh [--out DIR] [--prebuilt DIR] [--sf "1 10"] [--budget SECONDS] [--no-suites]
#
# Steps, each with its own time limit and each reported PASS / FAIL / SKIP
# in DIR/summary.txt (default gpu-check-out/):
#   1. the GPU (nvidia-smi) and `pista devices`;
#   2. build: a Release build with PISTA_CUDA=ON in build/gpu-check (or use
#      --prebuilt DIR: a build folder, e.g. one made elsewhere with
#      scripts/gpu-bundle.sh, whose lib/ holds the shared libraries it needs);
#   3. the device conformance suite and every kernel conformance suite with
#      PISTA_TEST_DEVICE=cuda; a suite whose kernels have no CUDA
#      implementation yet is reported as such (the error names the kernel);
#      --no-suites skips them (a second run in a short lease);
#   4. TPC-H at each scale factor of --sf (default "1 10"): `pista gen tpch`,
#      then the 22 queries on cuda, each answer compared with the cpu
#      device's answer on the same files (the cpu answers are the ones CI
#      checks against DuckDB); the first scale factor with --page-decode
#      device (pages decoded by the GPU's kernels), the others by default;
#   5. `pista bench scan` of lineitem on cuda (pages decoded on the host and
#      by the GPU), `pista bench tpch` on cuda and on cpu (with --vs duckdb
#      where DuckDB is installed: node and tests/oracle/setup.sh), then
#      `pista bench device` and `pista bench kernels` (skipped first when the
#      budget runs out).
#   6. NCCL (src/net's GPU backend) on one rank: an all-to-all of device
#      memory with itself (tests/tools/net_check gpu).
# Exit status 0 when every step that ran passed.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$here/gpu-check-out"
prebuilt=""
sfs="1 10"
budget=570
suites=1
while [ $# -gt 0 ]; do
    case "$1" in
    --no-suites) suites=0; shift ;;
    --out) out="$2"; shift 2 ;;
    --prebuilt) prebuilt="$2"; shift 2 ;;
    --sf) sfs="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
summary="$out/summary.txt"
log="$out/log.txt"
: > "$summary"
: > "$log"
start=$(date +%s)
fails=0

note() { echo "$*" | tee -a "$summary"; }
left() { echo $((budget - ($(date +%s) - start))); }
# step NAME LIMIT CMD...: run with a time limit, output to the log.
step() {
    local name="$1" limit="$2"
    shift 2
    local l
    l=$(left)
    [ "$l" -lt "$limit" ] && limit=$l
    if [ "$limit" -le 5 ]; then
        note "SKIP $name (out of time)"
        return 3
    fi
    echo "=== $name (limit ${limit}s): $*" >> "$log"
    local t0 rc=0
    t0=$(date +%s)
    timeout "$limit" "$@" >> "$log" 2>&1 || rc=$?
    local dt=$(($(date +%s) - t0))
    if [ $rc -eq 0 ]; then
        note "PASS $name (${dt}s)"
    else
        [ $rc -eq 124 ] && note "FAIL $name: timed out after ${dt}s" || note "FAIL $name: exit $rc (${dt}s)"
        fails=$((fails + 1))
    fi
    return $rc
}

note "gpu-check $(date -u +%FT%TZ) on $(hostname)"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >> "$log" 2>&1; then
    note "FAIL no NVIDIA GPU found (nvidia-smi)"
    exit 1
fi
note "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"

# ------------------------------------------------------------------ build
if [ -n "$prebuilt" ]; then
    b="$(cd "$prebuilt" && pwd)"
    [ -d "$b/lib" ] && export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    note "build: prebuilt $b"
else
    b="$here/build/gpu-check"
    step "configure" 120 cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=Release -DPISTA_CUDA=ON || exit 1
    step "build" 400 cmake --build "$b" -j "$(nproc)" || exit 1
fi
pista="$b/pista"
tests="$b/tests"
[ -x "$pista" ] || { note "FAIL no pista binary in $b"; exit 1; }
"$pista" devices >> "$log" 2>&1
note "devices: $("$pista" devices 2>&1 | grep -m1 cuda || echo 'no cuda device listed')"

# ------------------------------------------------------- conformance suites
suite() {
    local t="$1" name
    name=$(basename "$t")
    [ -x "$t" ] || { note "SKIP $name (not built)"; return; }
    local o="$out/$name.out" rc=0 limit
    limit=$(left)
    [ "$limit" -gt 120 ] && limit=120
    [ "$limit" -gt 10 ] || { note "SKIP $name (out of time)"; return; }
    PISTA_TEST_DEVICE=cuda timeout "$limit" "$t" > "$o" 2>&1 || rc=$?
    local passed failed
    passed=$(grep -c '^\[       OK \]' "$o")
    failed=$(grep -c '^\[  FAILED  \] [a-z]' "$o")
    if [ $rc -eq 0 ]; then
        note "PASS $name on cuda: $passed cases"
    elif grep -q "is not implemented on device cuda" "$o"; then
        note "TODO $name on cuda: $passed cases pass, $failed need kernels not on cuda yet ($(grep -o 'kernel kn_[a-z_]* is not implemented' "$o" | sort -u | sed 's/ is not implemented//' | tr '\n' ' '))"
    else
        note "FAIL $name on cuda: exit $rc, $passed pass, $failed fail: $(grep -m2 -E 'ERROR|error' "$o" | tr '\n' ' ' | head -c 300)"
        fails=$((fails + 1))
    fi
    cat "$o" >> "$log"
}
if [ $suites -eq 1 ]; then
    suite "$tests/test_device_conformance"
    for t in "$tests"/test_kconf_* "$tests/test_kn_dispatch"; do
        suite "$t"
    done
else
    note "SKIP the conformance suites (--no-suites)"
fi

# ------------------------------------------- NCCL (one rank: to itself)
# The NCCL backend of src/net (loaded at run time) on this GPU: a one-rank
# all-to-all of device memory through ncclSend/ncclRecv, checked byte by
# byte (tests/tools/net_check.c); several ranks need a GPU each.
if [ -x "$tests/net_check" ] && command -v mpirun > /dev/null 2>&1; then
    step "NCCL all-to-all on one rank" 60 bash -c "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 1 '$tests/net_check' gpu cuda > '$out/nccl.txt' 2>&1 && grep -q 'gpu all-to-all ok' '$out/nccl.txt'"
    [ -s "$out/nccl.txt" ] && note "nccl: $(grep -m1 'gpu' "$out/nccl.txt")"
elif [ -x "$tests/net_check" ]; then
    step "NCCL all-to-all on one rank" 60 bash -c "'$tests/net_check' gpu cuda > '$out/nccl.txt' 2>&1 && grep -q 'gpu all-to-all ok' '$out/nccl.txt'"
    [ -s "$out/nccl.txt" ] && note "nccl: $(grep -m1 'gpu' "$out/nccl.txt")"
else
    note "SKIP NCCL (net_check not built)"
fi

# ------------------------------------------------------------------ TPC-H
qdir="$here/tests/data/tpch/queries"
for sf in $sfs; do
    data="$out/data/sf$sf"
    if [ ! -f "$data/lineitem.parquet" ]; then
        step "gen tpch sf $sf" 240 "$pista" gen tpch --sf "$sf" --out "$data" || continue
    fi
    pass=0 fail=0 todo=0 first=""
    # The first scale factor with pages decoded by the GPU's kernels (their
    # answers), the others as cuda decodes them by default (--page-decode auto).
    pd=""
    [ "$sf" = "$(echo "$sfs" | awk '{print $1}')" ] && pd="--page-decode device"
    # The cpu's answers are made beside the cuda runs (the GPU machine has
    # cores to spare), each marked .done when written; this saves about a
    # minute at SF 10. Per-query times of the cuda runs are informational;
    # bench tpch below measures with nothing beside it.
    rm -f "$out"/sf"$sf".q*.cpu.done
    (
        for q in $(seq -w 1 22); do
            ql=$(left)
            [ "$ql" -gt 120 ] && ql=120
            [ "$ql" -gt 5 ] || break
            timeout "$ql" "$pista" --device cpu --data "$data" --answers -f "$qdir/q$q.sql" \
                > "$out/sf$sf.q$q.cpu" 2> "$out/sf$sf.q$q.cpu.err"
            touch "$out/sf$sf.q$q.cpu.done"
        done
    ) &
    cpu_job=$!
    for q in $(seq -w 1 22); do
        [ "$(left)" -gt 20 ] || { note "SKIP the rest of sf $sf (out of time)"; break; }
        local_cpu="$out/sf$sf.q$q.cpu" local_gpu="$out/sf$sf.q$q.cuda"
        rc=0
        ql=$(left)
        [ "$ql" -gt 120 ] && ql=120
        [ "$ql" -gt 5 ] || ql=5
        t0=$(date +%s.%N)
        timeout "$ql" "$pista" --device cuda $pd --data "$data" --answers -f "$qdir/q$q.sql" > "$local_gpu" 2> "$local_gpu.err" || rc=$?
        echo "sf $sf q$q cuda: exit $rc after $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }")s" >> "$log"
        while [ ! -f "$local_cpu.done" ] && [ "$(left)" -gt 5 ] && kill -0 "$cpu_job" 2>/dev/null; do
            sleep 0.2
        done
        if [ $rc -eq 0 ] && [ -f "$local_cpu.done" ] && cmp -s "$local_cpu" "$local_gpu"; then
            pass=$((pass + 1))
        elif grep -q "is not implemented on device cuda" "$local_gpu.err"; then
            todo=$((todo + 1))
            [ -n "$first" ] || first="q$q: $(head -c 200 "$local_gpu.err")"
        else
            fail=$((fail + 1))
            [ -n "$first" ] || first="q$q: rc $rc $(head -c 200 "$local_gpu.err")"
        fi
    done
    pkill -P "$cpu_job" 2>/dev/null   # a cpu run still going when time ran out
    kill "$cpu_job" 2>/dev/null
    wait "$cpu_job" 2>/dev/null
    note "TPC-H sf $sf on cuda${pd:+ ($pd)}: $pass of 22 equal the cpu answers, $fail differ or fail, $todo need kernels not on cuda yet${first:+ (first: $first)}"
    [ $fail -eq 0 ] || fails=$((fails + 1))
done

# ------------------------------------------------------------- benchmarks
last_sf=$(echo "$sfs" | awk '{print $NF}')
if [ -f "$out/data/sf$last_sf/lineitem.parquet" ]; then
    vs="--vs none"
    [ -d "$here/tests/oracle/node_modules/@duckdb" ] && command -v node >/dev/null && vs="--vs duckdb"
    # The scan alone: lineitem with pages decoded on the host and by the GPU.
    step "bench scan sf $last_sf lineitem (cuda)" 120 bash -c "'$pista' bench scan '$out/data/sf$last_sf/lineitem.parquet' --device cuda --threads 16 --runs 3 --vs none --decode both > '$out/bench-scan-cuda.txt' 2>&1"
    [ -s "$out/bench-scan-cuda.txt" ] && { echo "--- bench scan sf $last_sf lineitem on cuda"; cat "$out/bench-scan-cuda.txt"; } >> "$summary"
    for dev in cuda cpu; do
        step "bench tpch sf $last_sf ($dev)" 150 bash -c "PISTA_SOURCE_DIR='$here' '$pista' bench tpch --runs 1 --device $dev --data '$out/data/sf$last_sf' $vs > '$out/bench-tpch-$dev.txt' 2>&1"
        [ -s "$out/bench-tpch-$dev.txt" ] && { echo "--- bench tpch sf $last_sf on $dev"; tail -30 "$out/bench-tpch-$dev.txt"; } >> "$summary"
    done
fi

# The kernels' and the device's own figures last: the first to go when time runs short.
step "bench device (cuda)" 60 bash -c "'$pista' bench device --device cuda > '$out/bench-device.txt' 2>&1"
step "bench kernels (cuda)" 90 bash -c "'$pista' bench kernels --device cuda > '$out/bench-kernels.txt' 2>&1"
step "bench kernels (cpu, 10^7 rows)" 60 bash -c "'$pista' bench kernels --device cpu > '$out/bench-kernels-cpu.txt' 2>&1"
for f in bench-device bench-kernels bench-kernels-cpu; do
    [ -s "$out/$f.txt" ] && { echo "--- $f"; cat "$out/$f.txt"; } >> "$summary"
done

note "gpu-check: $fails failing step(s) in $(($(date +%s) - start))s; log: $log"
[ $fails -eq 0 ]

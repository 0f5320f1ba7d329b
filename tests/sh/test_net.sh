#!/usr/bin/env bash
# test_net.sh - src/net's collectives (tests/tools/net_check.c) in a world of
# one process, then under mpirun with 1 to 4 ranks: the data of every round
# checked on every rank, an error of one rank reaching all, and a rank that
# stops or dies ending the job with an error naming it, in bounded time.
: "${PISTA_BUILD_DIR:?}"
CHECK="$PISTA_BUILD_DIR/tests/net_check"
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; shift; [ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/  /'; fail=1; }

out=$("$CHECK" basic 2>&1)
if [ "$out" == "net_check: rank 0 of 1 ok (local)" ]; then ok "one process: the local world"; else bad "one process" "$out"; fi

if ! command -v mpirun >/dev/null 2>&1; then
  bad "mpirun not found: install OpenMPI (scripts/deps.sh)"
  echo FAIL; exit 1
fi
# Root in containers and CI; more ranks than cores; no cross-memory attach
# (ptrace may be forbidden in containers).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# Under the sanitizers, leak checking is off in processes mpirun starts:
# OpenMPI's plugins are unloaded at exit, so their allocations cannot be
# told from ours (no symbols to suppress). The same code runs leak-checked
# in one process (net_check alone, test_result_pack, the SQL suites).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
run() { timeout 120 mpirun -np "$@" 2>&1; }

for n in 1 2 3 4; do
  out=$(run $n "$CHECK" basic); rc=$?
  good=$(grep -c "ok (mpi)" <<<"$out")
  if [ $rc -eq 0 ] && [ "$good" -eq $n ]; then ok "$n ranks: all-to-all, all-gather, broadcast, gather"
  else bad "$n ranks: basic (exit $rc, $good of $n ranks ok)" "$out"; fi
done

out=$(run 3 "$CHECK" fail 1); rc=$?
good=$(grep -c "ok (mpi)" <<<"$out")
if [ $rc -eq 0 ] && [ "$good" -eq 3 ]; then ok "an error of rank 1 reaches every rank; the world works on"
else bad "error round (exit $rc)" "$out"; fi

# NCCL between GPUs (nt_gpu_*): where the ranks have none (this machine,
# CI), nt_gpu_open must fail on every rank with the same error, the lowest
# failing rank's, and none may wait in NCCL's set-up. With GPUs (one per
# rank) the same command checks an all-to-all of device memory.
out=$(run 3 "$CHECK" gpu cuda); rc=$?
n=$(grep -c "^net_check: rank [0-2] of 3: gpu: rank [0-2]: " <<<"$out")
same=$(sed -nE 's/^net_check: rank [0-2] of 3: gpu: //p' <<<"$out" | sort -u | wc -l)
okgpu=$(grep -c "gpu all-to-all ok" <<<"$out")
if [ "$okgpu" -eq 3 ]; then ok "3 ranks: NCCL all-to-all of device memory ($(grep -m1 -o '(NCCL[^)]*)' <<<"$out"))"
elif [ $rc -ne 124 ] && [ "$n" -eq 3 ] && [ "$same" -eq 1 ]; then
  ok "3 ranks without a GPU each: every rank fails opening NCCL with the same rank's error"
else bad "NCCL set-up on 3 ranks (exit $rc)" "$out"; fi

# A rank that stops: the others name it within the timeout (3 s here) and
# exit; the launcher then ends the stopped one. mpirun ends the job when
# the first of them exits, so at least one names it (the rest may be ended
# before they print).
t0=$(date +%s)
out=$(PISTA_NET_TIMEOUT_MS=3000 PISTA_NET_HEARTBEAT_MS=200 run 3 "$CHECK" stop 2); rc=$?
t=$(( $(date +%s) - t0 ))
named=$(grep -c "rank 2 has not been heard from" <<<"$out")
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$named" -ge 1 ] && [ $t -le 30 ]; then ok "a stopped rank is named by the others (${t} s)"
else bad "stopped rank (exit $rc, named by $named ranks, ${t} s)" "$out"; fi

# A rank killed mid-query: the job ends within 10 s with a message naming it.
t0=$(date +%s)
out=$(run 3 "$CHECK" die 1); rc=$?
t=$(( $(date +%s) - t0 ))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "rank 1" <<<"$out" && [ $t -le 12 ]; then ok "a killed rank ends the job, named (${t} s)"
else bad "killed rank (exit $rc, ${t} s)" "$out"; fi

# pista under the launcher: the network ceiling runs; a one-process
# command refuses (rank 0 says why) rather than run N copies.
if [ -n "${PISTA:-}" ]; then
  out=$(run 2 "$PISTA" bench net --size 1M --runs 2); rc=$?
  if [ $rc -eq 0 ] && grep -q "^all-to-all (src/net round) .*x$" <<<"$out" && grep -q "^MPI_Alltoall" <<<"$out"; then
    ok "pista bench net on 2 ranks"; else bad "pista bench net (exit $rc)" "$out"; fi
  # The repartition join in its three modes: each checks its own answer
  # (matches and a checksum against what the ranks generated) and fails
  # when it is wrong; the matches are about half the probe rows.
  for np in 2 3; do
    out=$(run $np "$PISTA" bench join --build-rows 30000 --probe-rows 80000 --chunk-rows 4000 --runs 1); rc=$?
    m=$(sed -nE 's/^answer: ([0-9]+) matches.*/\1/p' <<<"$out")
    if [ $rc -eq 0 ] && [ -n "$m" ] && [ "$m" -gt 38000 ] && [ "$m" -lt 42000 ] && grep -q "^blocking " <<<"$out" &&
       grep -q "^chunked " <<<"$out" && grep -q "^overlapped " <<<"$out" && grep -q "^raw MPI_Alltoall" <<<"$out"; then
      ok "pista bench join on $np ranks: $m matches in every mode"
    else bad "pista bench join on $np ranks (exit $rc)" "$out"; fi
  done
  out=$(run 2 "$PISTA" tpch query 1); rc=$?
  n=$(grep -c "runs in one process" <<<"$out")
  if [ $rc -ne 0 ] && [ "$n" -eq 1 ]; then ok "a one-process command under mpirun -np 2 is refused once, by rank 0"
  else bad "one-process command under mpirun (exit $rc, said $n times)" "$out"; fi
  out=$(run 2 "$PISTA" -c "select 1 + 1 as two"); rc=$?
  if [ $rc -eq 0 ] && [ "$(grep -c '^| *2 *|$' <<<"$out")" -eq 1 ]; then ok "a statement on 2 ranks prints once"
  else bad "statement on 2 ranks (exit $rc)" "$out"; fi
fi

[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail

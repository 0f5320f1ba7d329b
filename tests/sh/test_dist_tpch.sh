#!/usr/bin/env bash
# test_dist_tpch.sh - queries across ranks (src/sql/distribute.c): the 22
# TPC-H queries at SF 0.01 under mpirun with 2, 3 and 4 ranks must print
# exactly the answers (tests/data/tpch/answers, DuckDB's), on cpu and sim.
# The data is generated here with 1000-row row groups, so the split table
# really is spread (60 row groups of lineitem); that it was is checked in
# EXPLAIN ANALYZE. Then an error on one rank (its own data directory with
# a damaged file) must fail the statement on every rank, named, without a
# hang.
set -u
: "${PISTA:?}" "${PISTA_TEST_DATA:?}"
Q="$PISTA_TEST_DATA/tpch/queries"
A="$PISTA_TEST_DATA/tpch/answers/sf0.01"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; shift; [ $# -gt 0 ] && printf '%s\n' "$@" | head -n 20 | sed 's/^/  /'; fail=1; }

if ! command -v mpirun >/dev/null 2>&1; then
  echo "FAIL mpirun not found: install OpenMPI (scripts/deps.sh)"; exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# Under the sanitizers, leak checking is off in processes mpirun starts:
# OpenMPI's plugins are unloaded at exit, so their allocations cannot be
# told from ours (no symbols to suppress). The same code runs leak-checked
# in one process (net_check alone, test_result_pack, the SQL suites).
ASAN0="${ASAN_OPTIONS:-}"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
run() { timeout 300 mpirun -np "$@"; }

D="$tmp/sf0.01"
"$PISTA" gen tpch --sf 0.01 --out "$D" --row-group-rows 1000 > "$tmp/gen.log" 2>&1 || { bad "gen tpch" "$(cat "$tmp/gen.log")"; echo FAIL; exit 1; }
args=()
for n in $(seq -w 1 22); do args+=(-f "$Q/q$n.sql"); done
for n in $(seq -w 1 22); do cat "$A/q$n.csv"; done > "$tmp/answers.csv"

ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" --answers "${args[@]}" > "$tmp/one.csv" 2>&1
if cmp -s "$tmp/one.csv" "$tmp/answers.csv"; then ok "one process: the 22 answers on the generated data"
else bad "one process" "$(diff "$tmp/answers.csv" "$tmp/one.csv" | head)"; fi

# 2 ranks: the default (lineitem alone is big enough to split at SF 0.01);
# 3, 4 and sim: --replicate-rows 1 splits every table, so joins of split
# tables exchange rows (repartition, broadcast) and aggregates repartition.
for dev in cpu sim; do
  for np in 2 3 4; do
    [ $dev = sim ] && [ $np -ne 3 ] && continue   # sim: one size (its kernels run emulated)
    split=(); [ $np -gt 2 ] && split=(--replicate-rows 1)
    # 4 ranks and sim: every exchange's receive queue 4 KiB, so senders wait
    # for readers throughout (back-pressure in every query's shape).
    q=""; { [ $np -eq 4 ] || [ $dev = sim ]; } && q=4096
    PISTA_EXCHANGE_QUEUE_BYTES=$q PISTA_DEVICE=$dev run $np "$PISTA" --data "$D" "${split[@]}" --answers "${args[@]}" > "$tmp/np.csv" 2> "$tmp/np.err"; rc=$?
    if [ $rc -eq 0 ] && cmp -s "$tmp/np.csv" "$tmp/answers.csv"; then ok "$np ranks on $dev ${split[*]}${q:+ (queues of $q bytes)}: the 22 answers"
    else bad "$np ranks on $dev ${split[*]} (exit $rc)" "$(diff "$tmp/answers.csv" "$tmp/np.csv" | head)" "$(head -5 "$tmp/np.err")"; fi
  done
done

# The split table really is spread: rank 0 read only its share of the
# rows it gathered; Q1 merges partial aggregates (AVG too).
out=$(run 3 "$PISTA" --data "$D" -c "explain analyze select l_orderkey, l_comment from lineitem where l_quantity > 45" 2>&1)
line=$(grep -o "distributed over 3 ranks: split by row groups: lineitem;.*" <<<"$out")
total=$(sed -nE 's/.*GATHERED result rows: ([0-9]+) here, ([0-9]+) from here.*/\1/p' <<<"$line")
mine=$(sed -nE 's/.*GATHERED result rows: ([0-9]+) here, ([0-9]+) from here.*/\2/p' <<<"$line")
if [ -n "$mine" ] && [ "$mine" -gt 0 ] && [ "$mine" -lt "$total" ]; then
  ok "lineitem split over 3 ranks ($mine of $total rows from rank 0)"
else bad "lineitem not spread" "$out"; fi
q1=$(grep -v '^--' "$Q/q01.sql" | tr '\n' ' ' | sed 's/;[[:space:]]*$//')
out=$(run 3 "$PISTA" --data "$D" -c "explain analyze $q1" 2>&1)
if grep -q "GATHERED partial aggregate rows: 12 here, 4 from here" <<<"$out"; then
  ok "Q1 on 3 ranks: 4 groups of partial aggregates from each rank"
else bad "Q1 not merged" "$out"; fi
q3=$(grep -v '^--' "$Q/q03.sql" | tr '\n' ' ' | sed 's/;[[:space:]]*$//')
out=$(run 3 "$PISTA" --data "$D" --replicate-rows 1 -c "explain analyze $q3" 2>&1)
if grep -q "split by row groups: lineitem orders customer;.*join rows" <<<"$out"; then
  ok "Q3 on 3 ranks, every table split: join rows exchanged"
else bad "Q3 not spread" "$out"; fi

# COUNT(DISTINCT) over split rows: each rank's distinct (key, value) pairs
# go by key and value, each rank counts its pairs and the counts add up; the
# answer is one process's (hand-checkable: 2,000 parts at SF 0.01).
cd_q="select count(distinct l_partkey) from lineitem"
out=$(run 3 "$PISTA" --data "$D" --replicate-rows 1 --answers -c "$cd_q" 2>&1)
ex=$(run 3 "$PISTA" --data "$D" --replicate-rows 1 -c "explain analyze $cd_q" 2>&1)
if [ "$(tail -n 1 <<<"$out")" = "2000" ] && grep -q "REPARTITIONED distinct pairs for COUNT(DISTINCT), by key and value" <<<"$ex" &&
   grep -q "GATHERED partial COUNT(DISTINCT) rows: 3 here" <<<"$ex"; then
  ok "COUNT(DISTINCT) on 3 ranks: distinct pairs by key and value, partial counts added"
else bad "COUNT(DISTINCT) on 3 ranks" "$out $(grep -o 'REPARTITIONED[^;]*;[^;]*' <<<"$ex")"; fi

# INTERVAL keys over ranks: equal lengths written differently ('3 days',
# '72:00:00') must go to the same rank (the repartition hashes an
# INTERVAL by its length), so the join of lineitem with itself on the
# interval finds every row on 3 ranks as in one process; and groups by an
# INTERVAL, with COUNT(DISTINCT), merge over ranks.
ivq="select count(*) n, sum(a.k) s from (select l_orderkey k, l_linenumber ln, (l_receiptdate - l_shipdate) * interval '1 day' iv from lineitem) a join (select l_orderkey k, l_linenumber ln, (l_receiptdate - l_shipdate) * interval '24 hours' iv from lineitem) b on a.k = b.k and a.ln = b.ln and a.iv = b.iv;
select extract(epoch from iv) e, count(*) n, count(distinct l_suppkey) s from (select case when l_linenumber % 2 = 0 then (l_receiptdate - l_shipdate) * interval '1 day' else (l_receiptdate - l_shipdate) * interval '24 hours' end iv, l_suppkey from lineitem) t group by iv order by 1;"
want=$(ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" --answers <<<"$ivq" 2>&1)
for dev in cpu sim; do
  got=$(PISTA_DEVICE=$dev run 3 "$PISTA" --data "$D" --replicate-rows 1 --answers <<<"$ivq" 2>&1); rc=$?
  plan=$(PISTA_DEVICE=$dev run 3 "$PISTA" --data "$D" --replicate-rows 1 -c "explain analyze $(head -1 <<<"$ivq")" 2>&1)
  if [ $rc -eq 0 ] && [ "$got" == "$want" ] && grep -q "REPARTITIONED join rows" <<<"$plan" &&
     grep -q "^60175|" <<<"$want" && [ "$(wc -l <<<"$want")" -gt 20 ]; then
    ok "INTERVAL join and group keys over 3 ranks on $dev: as in one process"
  else bad "INTERVAL keys over 3 ranks on $dev (exit $rc)" "$want" "---" "$got" "$(head -c 300 <<<"$plan")"; fi
done

# Exchanges move and read only the columns used above them: on 2 ranks,
# with both tables split and repartitioned for the join, the rank that
# reads most reads less than one process does (--timer's bytes read).
j="select sum(l_quantity), count(*) from lineitem join orders on l_orderkey = o_orderkey where o_orderstatus = 'F'"
one=$(ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" -c "explain analyze $j" | sed -nE 's/^read: ([0-9]+) bytes.*/\1/p')
out=$(run 2 "$PISTA" --data "$D" --replicate-rows 1 --timer -c "$j" 2>&1)
most=$(sed -nE 's/.*most read ([0-9.]+) MB.*/\1/p' <<<"$out")
if [ -n "$one" ] && [ -n "$most" ] && awk -v m="$most" -v o="$one" 'BEGIN { exit !(m * 1e6 < o && m > 0) }' &&
   grep -q "REPARTITIONED\|most received" <<<"$out"; then
  ok "a join on 2 ranks: at most $most MB read by a rank, one process $one bytes"
else bad "join on 2 ranks reads too much ($most MB against $one bytes)" "$out"; fi

# Exchanges stream (src/exec/op_exchange.c): the pipeline reading an
# exchange runs while its rows still arrive, a full receive queue holds the
# senders back, and a reader stopped early by LIMIT still lets every rank's
# exchange end. A self-join of lineitem repartitions both sides; the probe
# side's rows arrive while the build side still comes in, so with a queue
# of 4 KiB (PISTA_EXCHANGE_QUEUE_BYTES) its queue fills and says FULL.
sj="select count(*), sum(a.l_quantity * b.l_discount) from lineitem a, lineitem b where a.l_orderkey = b.l_orderkey and a.l_linenumber = b.l_linenumber + 1"
want=$(ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" --csv -c "$sj" 2>&1)
for cfg in "cpu overlapped" "cpu chunked" "cpu blocking" "sim overlapped"; do
  set -- $cfg
  got=$(PISTA_DEVICE=$1 PISTA_EXCHANGE_QUEUE_BYTES=4096 run 2 "$PISTA" --data "$D" --mode $2 --csv -c "$sj" 2>&1); rc=$?
  if [ $rc -eq 0 ] && [ "$got" == "$want" ] && grep -q "^45175,57256.6000$" <<<"$want"; then
    ok "a self-join repartitioned on 2 ranks on $1 in $2 mode with a 4 KiB queue: as in one process"
  else bad "self-join on 2 ranks on $1 in $2 mode (exit $rc)" "$want" "---" "$got"; fi
done
full=0
for try in 1 2 3; do
  plan=$(PISTA_EXCHANGE_QUEUE_BYTES=4096 run 2 "$PISTA" --data "$D" -c "explain analyze $sj" 2>&1)
  n=$(grep -oE "EXCHANGE REPARTITIONED join rows \(outer side\): [0-9]+ rounds \(([0-9]+) full here\)" <<<"$plan" | sed -nE 's/.*\(([0-9]+) full here\)/\1/p')
  if [ -n "$n" ] && [ "$n" -gt 0 ]; then full=$n; break; fi
done
if [ "$full" -gt 0 ]; then ok "the probe side's receive queue said FULL in $full rounds (back-pressure)"
else bad "the probe side's queue never filled" "$(head -1 <<<"$plan" | tr ';' '\n')"; fi
streamed=0
for try in 1 2 3; do
  plan=$(run 2 "$PISTA" --data "$D" -c "explain analyze $sj" 2>&1)
  t=$(grep -oE "EXCHANGE REPARTITIONED join rows \(inner side\)[^;]*; [^;]*; read from [0-9.]+ ms, ended [0-9.]+ ms" <<<"$plan" |
      sed -nE 's/.*read from ([0-9.]+) ms, ended ([0-9.]+) ms/\1 \2/p')
  if [ -n "$t" ] && awk -v a="${t% *}" -v b="${t#* }" 'BEGIN { exit !(a >= 0 && a < b) }'; then streamed=1; break; fi
done
if [ $streamed -eq 1 ]; then ok "the build side read its first rows at ${t% *} ms, before its exchange ended at ${t#* } ms"
else bad "the build side did not read before its exchange ended" "$(head -1 <<<"$plan" | tr ';' '\n')"; fi
lq="select count(*) from (select a.l_orderkey from lineitem a, lineitem b where a.l_orderkey = b.l_orderkey and a.l_linenumber = b.l_linenumber limit 7) t"
got=$(PISTA_EXCHANGE_QUEUE_BYTES=4096 run 3 "$PISTA" --data "$D" --replicate-rows 1 --answers -c "$lq" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(tail -n 1 <<<"$got")" = "7" ]; then ok "a LIMIT stops the exchange's reader early on 3 ranks: 7 rows, every rank's exchange ended"
else bad "LIMIT over a streamed exchange (exit $rc)" "$got"; fi
# Both sides of a FULL join without equality keys go to every rank, so the
# statement's top is whole on every rank: every rank runs it (its exchanges
# need them all), rank 0 keeps its answer.
fq="select count(*) from (select * from orders where o_custkey < 30) a full join (select * from orders where o_custkey between 30 and 60) b on a.o_totalprice < b.o_totalprice - 400000"
want=$(ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" --answers -c "$fq" 2>&1)
got=$(run 3 "$PISTA" --data "$D" --replicate-rows 1 --answers -c "$fq" 2>&1); rc=$?
plan=$(run 3 "$PISTA" --data "$D" --replicate-rows 1 -c "explain analyze $fq" 2>&1)
if [ $rc -eq 0 ] && [ "$got" == "$want" ] && grep -q "EXCHANGE BROADCAST join rows (outer side)" <<<"$plan" &&
   grep -q "RANK 0 result rows: 1 here" <<<"$plan"; then ok "a FULL join broadcast both ways on 3 ranks: every rank runs it, rank 0 answers"
else bad "FULL join broadcast both ways (exit $rc)" "$want" "---" "$got" "$(head -1 <<<"$plan")"; fi
# The materialized exchanges (each runs its subtree to the end first) stay
# for measurement: PISTA_EXCHANGE=materialized.
PISTA_EXCHANGE=materialized run 3 "$PISTA" --data "$D" --replicate-rows 1 --answers "${args[@]}" > "$tmp/np.csv" 2> "$tmp/np.err"; rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/np.csv" "$tmp/answers.csv"; then ok "3 ranks with materialized exchanges: the 22 answers"
else bad "3 ranks with materialized exchanges (exit $rc)" "$(diff "$tmp/answers.csv" "$tmp/np.csv" | head)" "$(head -5 "$tmp/np.err")"; fi

# Q15's view, evaluated once, is spread too: every rank aggregates its
# share of lineitem and all get the whole view (a broadcast).
q15=$(grep -v '^--' "$Q/q15.sql" | tr '\n' ' ' | sed 's/;[[:space:]]*$//')
out=$(run 2 "$PISTA" --data "$D" -c "explain analyze $q15" 2>&1)
if grep -q "^WITH query distributed over 2 ranks: split by row groups: lineitem;.*BROADCAST result rows" <<<"$out"; then
  ok "Q15's WITH query spread over 2 ranks, its result broadcast"
else bad "Q15's WITH query not spread" "$out"; fi

# AVG merged over ranks from partial sums and counts gives the one
# process's DOUBLE to the last bit (--csv prints every digit): of DECIMAL,
# INTEGER and BIGINT (which travels as rows), grouped and not, on cpu and
# on sim (the interpreter's MATH AVG runs there, emulated). Not of DOUBLE:
# a DOUBLE sum depends on the order of its terms, on one rank too.
avg="select l_returnflag, avg(l_extendedprice), avg(l_quantity * l_tax), avg(l_linenumber), avg(l_orderkey),
  count(*) from lineitem group by 1 order by 1;
select avg(l_extendedprice), avg(l_linenumber), avg(case when l_orderkey < 0 then l_tax end) from lineitem;"
want=$(ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" --csv <<<"$avg" 2>&1)
for dev in cpu sim; do
  got=$(PISTA_DEVICE=$dev run 3 "$PISTA" --data "$D" --csv <<<"$avg" 2>&1); rc=$?
  plan=$(PISTA_DEVICE=$dev run 3 "$PISTA" --data "$D" -c "explain analyze $(tail -1 <<<"$avg")" 2>&1)
  if [ $rc -eq 0 ] && [ "$got" == "$want" ] && grep -q "GATHERED partial aggregate rows" <<<"$plan" &&
     [ "$(grep -c ',' <<<"$want")" -ge 6 ]; then ok "AVG merged over 3 ranks on $dev: every digit as in one process"
  else bad "AVG over 3 ranks on $dev (exit $rc)" "$want" "---" "$got" "$(head -3 <<<"$plan")"; fi
done

# The shell's input goes to rank 0, which sends every statement to the
# workers: a view made on every rank, then queries over it, dot commands.
script="create view big as select * from lineitem where l_quantity > 45;
select count(*) from big;
.mode csv
select l_returnflag, sum(l_quantity), min(l_comment) from big group by 1 order by 1;"
want=$(ASAN_OPTIONS="$ASAN0" "$PISTA" --data "$D" <<<"$script" 2>&1)
got=$(run 3 "$PISTA" --data "$D" <<<"$script" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$got" == "$want" ] && grep -q "^A," <<<"$got"; then ok "statements from rank 0's input run on 3 ranks"
else bad "input on 3 ranks (exit $rc)" "$want" "---" "$got"; fi

# One rank's error fails the statement everywhere, named; the others do not hang.
mkdir "$tmp/bad"
for t in region nation supplier customer part partsupp orders; do ln -s "$D/$t.parquet" "$tmp/bad/$t.parquet"; done
cp "$D/lineitem.parquet" "$tmp/bad/lineitem.parquet"   # pages damaged, footer whole:
size=$(stat -c %s "$D/lineitem.parquet")
for ((at = 50000; at < size - 100000; at += 50000)); do   # in every rank's row groups
  printf '%*s' 2000 '' | tr ' ' '\377' | dd of="$tmp/bad/lineitem.parquet" bs=1 seek=$at conv=notrunc status=none
done
all="select count(*), max(l_comment), sum(l_quantity), max(l_shipdate), max(l_shipmode) from lineitem"
out=$(timeout 120 mpirun -np 1 "$PISTA" --data "$D" -c "$all" : -np 1 "$PISTA" --data "$tmp/bad" -c "$all" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "rank 1: .*lineitem.parquet" <<<"$out"; then
  ok "a damaged page on rank 1 fails the statement on every rank, naming rank 1 and the file"
else bad "error in a statement on one rank (exit $rc)" "$out"; fi
# The same after exchanges that succeeded: every table split, rank 1 fails
# on lineitem after orders and customer moved; every rank stops, named.
out=$(timeout 120 mpirun -np 1 "$PISTA" --data "$D" --replicate-rows 1 -c "$q3" : \
      -np 1 "$PISTA" --data "$tmp/bad" --replicate-rows 1 -c "$q3" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "rank 1: .*lineitem.parquet" <<<"$out"; then
  ok "a damaged page on rank 1 in a statement with several exchanges fails it on every rank, named"
else bad "error after exchanges on one rank (exit $rc)" "$out"; fi
# Ranks that see other files under the same names (here lineitem written
# with other row groups) would split them differently: the statement fails
# on every rank, naming the rank, before any rows move.
"$PISTA" gen tpch --sf 0.01 --out "$tmp/other" --row-group-rows 4000 > /dev/null 2>&1
out=$(timeout 120 mpirun -np 1 "$PISTA" --data "$D" -c "select count(*) from lineitem" : \
      -np 1 "$PISTA" --data "$tmp/other" -c "select count(*) from lineitem" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "rank 1 planned this statement unlike rank 0" <<<"$out"; then
  ok "ranks that see different files fail the statement, naming the rank"
else bad "different files on rank 1 (exit $rc)" "$out"; fi
# A file rank 1 cannot even register: its table is skipped there with a
# warning naming the file, and a statement reading it fails on every rank,
# naming rank 1.
head -c 20000 "$D/lineitem.parquet" > "$tmp/bad/lineitem.parquet"
out=$(timeout 120 mpirun -np 1 "$PISTA" --data "$D" -c "select count(*) from lineitem" : \
      -np 1 "$PISTA" --data "$tmp/bad" -c "select count(*) from lineitem" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "rank 1: table \"lineitem\" does not exist" <<<"$out" &&
   grep -q "warning: table lineitem skipped: .*bad/lineitem.parquet" <<<"$out"; then
  ok "a file rank 1 cannot open: skipped with a warning there, a statement reading it fails naming rank 1"
else bad "error opening on one rank (exit $rc)" "$out"; fi

# A rank stopped (SIGSTOP) or killed (SIGKILL) before a statement (rank 0
# sends it 5 s after the start, through its input): the job
# ends within 10 s of it with an error naming rank 1 (the stop: the others'
# heartbeat timeout, 3 s here; the kill: mpirun sees it die).
rank_pid() {   # the pid of rank $1 of the pista processes on $D
  local p
  for p in $(pgrep -f -- "--data $D\$" 2>/dev/null); do
    tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo $p
  done
}
for sig in STOP KILL; do
  rm -f "$tmp/end"
  ( (sleep 5; echo "select count(*) from lineitem;"; sleep 47) |
    { PISTA_NET_TIMEOUT_MS=3000 PISTA_NET_HEARTBEAT_MS=200 timeout 90 mpirun -np 3 "$PISTA" --data "$D" > "$tmp/sig.out" 2>&1
      echo "$? $(date +%s)" > "$tmp/end"; } ) &
  pid=""
  for i in $(seq 1 100); do pid=$(rank_pid 1); [ -n "$pid" ] && break; sleep 0.2; done
  sleep 2.5   # past MPI's start-up (a rank stopped inside MPI_Init is MPI's to notice)
  t0=$(date +%s)
  [ -n "$pid" ] && kill -$sig $pid
  for i in $(seq 1 120); do [ -f "$tmp/end" ] && break; sleep 0.5; done
  pkill -f "sleep 47" 2>/dev/null
  [ -n "$pid" ] && kill -9 $pid 2>/dev/null
  wait
  read -r rc t1 < "$tmp/end" 2>/dev/null || { rc=none; t1=$((t0 + 999)); }
  if [ -n "$pid" ] && [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ $((t1 - t0)) -le 10 ] && grep -q "rank 1" "$tmp/sig.out"; then
    ok "SIG$sig to rank 1 before a statement: the job ends in $((t1 - t0)) s, naming the rank"
  else bad "rank 1 $sig (pid ${pid:-none}, exit $rc, $((t1 - t0)) s)" "$(grep -v '^$' "$tmp/sig.out" | head -12)"; fi
done

[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail

#!/usr/bin/env bash
# `pista gen tpch` against dbgen's fingerprints (tests/data/tpch/dbgen-fingerprints.tsv:
# rows, bytes and sha256 of every dbgen 2.17.2 .tbl file) at SF 0.01 and 0.1, with
# 1 and 3 threads and split into parts; argument errors; `pista tpch query`.
set -u
: "${PISTA:?}" "${PISTA_TEST_DATA:?}"
FP="$PISTA_TEST_DATA/tpch/dbgen-fingerprints.tsv"
TABLES="region nation supplier customer part partsupp orders lineitem"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check SF NAME FILE: the file's rows, bytes and sha256 match dbgen's.
check() {
    local sf=$1 t=$2 f=$3 want got
    want=$(awk -F'\t' -v sf="$sf" -v t="$t" '$1 == sf && $2 == t { print $3, $4, $5 }' "$FP")
    [ -n "$want" ] || { fail "no fingerprint for $sf $t"; return; }
    got="$(wc -l < "$f" | tr -d ' ') $(stat -c %s "$f") $(sha256sum < "$f" | cut -d' ' -f1)"
    [ "$got" = "$want" ] || fail "SF $sf $t ($f): got '$got', dbgen '$want'"
}

for sf in 0.01 0.1; do
    for threads in 1 3; do
        d="$TMP/sf$sf-t$threads"
        "$PISTA" gen tpch --sf "$sf" --out "$d" --format tbl --threads "$threads" 2> "$TMP/err" \
            || fail "gen SF $sf threads $threads: $(cat "$TMP/err")"
        # stderr is not a terminal here: no progress output.
        [ ! -s "$TMP/err" ] || fail "unexpected stderr: $(cat "$TMP/err")"
        for t in $TABLES; do check "$sf" "$t" "$d/$t.tbl"; done
        rm -rf "$d"
    done
    # Four parts; concatenated in order they are the whole table.
    d="$TMP/sf$sf-parts"
    "$PISTA" gen tpch --sf "$sf" --out "$d" --format tbl --parts 4 --threads 2 \
        || fail "gen SF $sf --parts 4"
    for t in $TABLES; do
        cat "$d/$t/$t.0.tbl" "$d/$t/$t.1.tbl" "$d/$t/$t.2.tbl" "$d/$t/$t.3.tbl" > "$TMP/cat.tbl"
        check "$sf" "$t" "$TMP/cat.tbl"
    done
    # Lineitem part i holds exactly the lines of the orders of orders part i.
    for i in 0 1 2 3; do
        a=$(cut -d'|' -f1 "$d/orders/orders.$i.tbl" | sort -n | uniq | md5sum)
        b=$(cut -d'|' -f1 "$d/lineitem/lineitem.$i.tbl" | sort -n | uniq | md5sum)
        [ "$a" = "$b" ] || fail "SF $sf part $i: lineitem orders differ from orders part"
    done
    rm -rf "$d"
done

# --part i alone writes the same bytes as the full split.
d="$TMP/single"
"$PISTA" gen tpch --sf 0.01 --out "$d" --format tbl --parts 3 --threads 2 || fail "gen --parts 3"
for i in 0 1 2; do
    "$PISTA" gen tpch --sf 0.01 --out "$TMP/one$i" --format tbl --parts 3 --part "$i" \
        || fail "gen --part $i"
    for t in $TABLES; do
        cmp -s "$d/$t/$t.$i.tbl" "$TMP/one$i/$t/$t.$i.tbl" || fail "--part $i $t differs"
    done
    [ "$(ls "$TMP/one$i/lineitem")" = "lineitem.$i.tbl" ] || fail "--part $i wrote other parts"
done

# --tables: only the named tables.
"$PISTA" gen tpch --sf 0.01 --out "$TMP/some" --format tbl --tables nation,lineitem \
    || fail "gen --tables"
[ "$(ls "$TMP/some" | tr '\n' ' ')" = "lineitem.tbl nation.tbl " ] || fail "--tables wrote $(ls "$TMP/some")"
check 0.01 lineitem "$TMP/some/lineitem.tbl"

# Bad arguments: a clear message and exit status 2.
expect_usage() {
    local pattern=$1; shift
    "$PISTA" "$@" > /dev/null 2> "$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] || fail "'$*' exited $rc, want 2"
    grep -q -- "$pattern" "$TMP/err" || fail "'$*' said '$(cat "$TMP/err")', want /$pattern/"
}
expect_usage "positive scale factor" gen tpch --sf -1 --out "$TMP/x" --format tbl
expect_usage "positive scale factor" gen tpch --sf abc --out "$TMP/x" --format tbl
expect_usage "unknown TPC-H table 'foo'" gen tpch --sf 0.01 --tables foo --out "$TMP/x" --format tbl
expect_usage "does not exist" gen tpch --sf 0.01 --parts 4 --part 4 --out "$TMP/x" --format tbl
expect_usage "needs --parts" gen tpch --sf 0.01 --part 1 --out "$TMP/x" --format tbl
expect_usage "not tbl or parquet" gen tpch --sf 0.01 --format csv --out "$TMP/x"
expect_usage "unknown option" gen tpch --sf 0.01 --bogus
expect_usage "unknown generator" gen tpcds
expect_usage "query number" tpch query 23
expect_usage "seed" tpch query 1 --seed -5
[ ! -e "$TMP/x" ] || fail "a failed command created output"
# An output folder that cannot be created: exit status 1 and the path.
touch "$TMP/file"
"$PISTA" gen tpch --sf 0.01 --tables region --out "$TMP/file/sub" --format tbl 2> "$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "unwritable --out exited $rc, want 1"
grep -q "file/sub" "$TMP/err" || fail "unwritable --out said '$(cat "$TMP/err")'"

# Query texts: the specification's validation parameters.
for n in $(seq 1 22); do
    f="$PISTA_TEST_DATA/tpch/queries/q$(printf %02d "$n").sql"
    "$PISTA" tpch query "$n" | cmp -s - "$f" || fail "tpch query $n differs from $f"
done
a=$("$PISTA" tpch query 7 --seed 99) && b=$("$PISTA" tpch query 7 --seed 99) || fail "query --seed"
[ "$a" = "$b" ] || fail "query --seed is not deterministic"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"

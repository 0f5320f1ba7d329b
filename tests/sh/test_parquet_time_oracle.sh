#!/usr/bin/env bash
# test_parquet_time_oracle.sh - the time types through our writer, read by
# DuckDB: `pista parquet copy` scans the DuckDB-made fixtures of
# tests/data/parquet/time/ (TIMESTAMP in MICROS, MILLIS and NANOS,
# TIMESTAMPTZ, TIME, INTERVAL; INT96) and writes them back with the engine
# types; DuckDB must read every value exactly as it read the fixture
# (FILE.expect.txt), with the types TIMESTAMP, TIMESTAMP WITH TIME ZONE,
# TIMESTAMP_NS, TIME and INTERVAL, the annotations the format prescribes
# (parquet_schema), statistics equal to each row group's own min and max,
# the same counts under predicates it prunes row groups with, and `pista
# parquet meta --csv` (our statistics text) equal to parquet_metadata() on
# our files and on DuckDB's.
# Needs node and @duckdb/node-api (tests/oracle/setup.sh); without them FAILS.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
SRC="${PISTA_SOURCE_DIR:?}"
DATA="${PISTA_TEST_DATA:-$SRC/tests/data}/parquet/time"
ORACLE="$SRC/tests/oracle/oracle.mjs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not installed: the DuckDB oracle cannot run (install Node.js >= 18 and npm)" >&2
    exit 1
fi
if ! bash "$SRC/tests/oracle/setup.sh" >&2; then
    echo "FAIL: the DuckDB oracle is unavailable (tests/oracle/setup.sh failed)" >&2
    exit 1
fi

fails=0
checks=0
# same NAME EXPECTED_FILE SQL: DuckDB's answer to SQL must be EXPECTED_FILE.
same() {
    checks=$((checks + 1))
    if ! node "$ORACLE" -c "$3" > "$tmp/duck" 2> "$tmp/err"; then
        echo "FAIL: $1: DuckDB failed: $(cat "$tmp/err")" >&2
        fails=$((fails + 1))
    elif ! diff "$2" "$tmp/duck" > "$tmp/diff"; then
        echo "FAIL: $1 differs (< expected, > duckdb):" >&2
        head -20 "$tmp/diff" >&2
        fails=$((fails + 1))
    else
        echo "ok: $1"
    fi
}
# expect NAME TEXT SQL: DuckDB's answer to SQL must be TEXT.
expect() {
    printf '%s\n' "$2" > "$tmp/want"
    same "$1" "$tmp/want" "$3"
}

T="$tmp/time.parquet"
I="$tmp/int96.parquet"
"$PISTA" parquet copy "$DATA/time.parquet" "$T" --row-group-rows 128 ||
    { echo "FAIL: pista parquet copy time.parquet failed" >&2; exit 1; }
"$PISTA" parquet copy "$DATA/int96.parquet" "$I" ||
    { echo "FAIL: pista parquet copy int96.parquet failed" >&2; exit 1; }

# ------------------------------------------------------------ types and annotations
expect "types" "column_name|column_type
id|BIGINT
ts|TIMESTAMP
ts_ms|TIMESTAMP
ts_ns|TIMESTAMP_NS
tstz|TIMESTAMP WITH TIME ZONE
t|TIME
iv|INTERVAL
ms_dict|TIMESTAMP
ns_dict|TIMESTAMP_NS
tz_dict|TIMESTAMP WITH TIME ZONE
t_dict|TIME
iv_dict|INTERVAL" "select column_name, column_type from (describe select * from '$T')"
expect "annotations" "name|type|type_length|converted_type|logical_type
ts|INT64||NULL|TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>))
ts_ns|INT64||NULL|TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=<null>, NANOS=NanoSeconds()))
tstz|INT64||TIMESTAMP_MICROS|TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>))
t|INT64||NULL|TimeType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>))
iv|FIXED_LEN_BYTE_ARRAY|12|INTERVAL|NULL" \
    "select name, type, type_length, coalesce(converted_type, 'NULL') as converted_type,
            coalesce(logical_type, 'NULL') as logical_type
     from parquet_schema('$T') where name in ('ts', 'ts_ns', 'tstz', 't', 'iv')"
expect "INT96 as TIMESTAMP_NS" "column_name|column_type
i96|TIMESTAMP_NS
i96_dict|TIMESTAMP_NS" "select column_name, column_type from (describe select i96, i96_dict from '$I')"

# ------------------------------------------------------------ values
us() { echo "epoch_us($1) as $1"; }
ivf() { echo "datepart('year', $1) * 12 + datepart('month', $1) as $1_months, datepart('day', $1) as $1_days,
    datepart('hour', $1) * 3600000000 + datepart('minute', $1) * 60000000 + datepart('microsecond', $1) as $1_micros"; }
same "every value" "$DATA/time.expect.txt" "select id, $(us ts), $(us ts_ms), epoch_ns(ts_ns) as ts_ns, $(us tstz),
    $(us t), $(ivf iv), $(us ms_dict), epoch_ns(ns_dict) as ns_dict, $(us tz_dict), $(us t_dict), $(ivf iv_dict)
  from '$T' order by id"
# INT96 written as TIMESTAMP(NANOS): the nanoseconds its bytes were made from.
expect "INT96 values" "mismatches|nulls
0|92" "select count(*) filter (where epoch_ns(i96) <> want_ns or epoch_ns(i96_dict) <> want_dict_ns) as mismatches,
    count(*) filter (where i96 is null) + count(*) filter (where i96_dict is null) as nulls from '$I'"

# ------------------------------------------------------------ statistics
# Each row group's statistics (128 rows each: ids 128k..) are its own min and max.
for c in ts ts_ms ts_ns tstz t ms_dict ns_dict tz_dict t_dict; do
    expect "statistics of $c" "bad
0" "select count(*) as bad from parquet_metadata('$T') m
     join (select id // 128 as rg, min($c)::varchar as lo, max($c)::varchar as hi from '$T' group by 1) a
       on a.rg = m.row_group_id
     where m.path_in_schema = '$c' and (m.stats_min_value is distinct from a.lo or m.stats_max_value is distinct from a.hi)"
done
expect "no INTERVAL statistics" "n
0" "select count(*) as n from parquet_metadata('$T') where path_in_schema like 'iv%' and
    (stats_min_value is not null or stats_max_value is not null)"
# Counts under predicates DuckDB prunes with: as on DuckDB's own file.
for w in "ts > timestamp '1970-01-05 00:00:00'" "ts_ms < timestamp '1950-09-01'" \
         "ts_ns >= timestamp_ns '1970-01-01 00:01:00.5'" "tstz <= timestamptz '1969-12-15 00:00:00+00'" \
         "t between time '06:00:00' and time '07:00:00'" "iv_dict = interval '1 month 2 days 1.5 seconds'"; do
    node "$ORACLE" -c "select count(*) as n from '$DATA/time.parquet' where $w" > "$tmp/want_n"
    same "count where $w" "$tmp/want_n" "select count(*) as n from '$T' where $w"
done

# ------------------------------------------------------------ our reader's text
for f in "$T" "$DATA/time.parquet" "$DATA/prune.parquet" "$I"; do
    sql="select row_group_id, column_id, path_in_schema, type, num_values, compression, encodings,
                total_compressed_size, total_uncompressed_size, dictionary_page_offset,
                data_page_offset, stats_null_count, stats_min, stats_max, stats_min_value, stats_max_value
         from parquet_metadata('$f') order by row_group_id, column_id"
    "$PISTA" parquet meta --csv "$f" | cut -d'|' -f1-16 > "$tmp/ours" ||
        { echo "FAIL: pista parquet meta $f failed" >&2; fails=$((fails + 1)); continue; }
    same "parquet meta of $(basename "$f") ($([ "$f" = "$T" ] || [ "$f" = "$I" ] && echo ours || echo DuckDB\'s))" \
        "$tmp/ours" "$sql"
done

[ "$checks" -ge 25 ] || { echo "FAIL: only $checks checks ran" >&2; exit 1; }
if [ "$fails" -ne 0 ]; then echo "$fails of $checks checks failed" >&2; exit 1; fi
echo "all $checks checks passed"

#!/bin/sh
# time_fixtures.sh - makes the Parquet fixtures of the time types in
# tests/data/parquet/time/ (committed; unit.test_scan_time reads them). Not
# run by the tests: run it by hand after changing it, from the repository
# root, with pq_patch built:
#
#   sh tests/tools/time_fixtures.sh build/dev/tests/pq_patch
#
# Each FILE.parquet comes with FILE.expect.txt: what DuckDB reads from that
# file, as integers (epoch_us, epoch_ns, the INTERVAL fields; "|" between, empty for
# NULL), which the unit test compares with the raw decoded values.
#   time.parquet     TIMESTAMP (MICROS, MILLIS via TIMESTAMP_MS, NANOS via
#                    TIMESTAMP_NS), TIMESTAMPTZ, TIME, INTERVAL; NULLs,
#                    values before 1970, PLAIN and dictionary columns
#   int96.parquet    INT96 columns (PLAIN and dictionary) made from DuckDB
#                    INTERVAL columns of the same 12 bytes (pq_patch int96):
#                    months = the low 32 bits of the nanoseconds of the day,
#                    days the high ones, milliseconds the Julian day; the
#                    expected nanoseconds are computed from the same
#                    generator in integers (want_ns), independent of INT96;
#                    int96_range.parquet has one past the int64 nanoseconds
#   legacy.parquet   TIMESTAMP_MILLIS/_MICROS ConvertedType without a
#                    LogicalType (pq_patch nological)
#   prune.parquet    2 row groups of 2048 rows, a TIMESTAMP_MS column whose
#                    statistics split them (dictionary encoded: small)
#   time_ms.parquet  TIME(MILLIS) in an INT32 (pq_patch timemillis)
#   overflow.parquet an INT64 TIMESTAMP(MILLIS) past the int64 microseconds
#                    (pq_patch tsmillis)
set -eu
PQ_PATCH="${1:?usage: time_fixtures.sh PQ_PATCH}"
ORACLE="node tests/oracle/oracle.mjs"
OUT=tests/data/parquet/time
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"

$ORACLE -c "copy (select i as id,
    case when i % 7 = 3 then null else timestamp '1969-12-31 23:59:59.999999' + to_microseconds(i * 3600000123) end as ts,
    case when i % 5 = 1 then null else (timestamp '1950-06-15 08:30:00.123' + to_milliseconds(i * 86400123))::timestamp_ms end as ts_ms,
    case when i % 6 = 2 then null else make_timestamp_ns(-60123456789 + i * 1000001007) end as ts_ns,
    case when i % 4 = 0 then null else timestamptz '1970-01-01 00:00:10.5+00' - to_microseconds(i * 7000000001) end as tstz,
    case when i % 9 = 8 then null else time '00:00:00' + to_microseconds(i * 1234567891 % 86400000000) end as t,
    case when i % 8 = 7 then null else to_months(i % 13) + to_days(i % 40) + to_milliseconds(i * 123457) end as iv,
    case when i % 10 = 9 then null else (timestamp '1969-12-31 22:00:00.25' + to_hours(i % 5))::timestamp_ms end as ms_dict,
    case when i % 10 = 8 then null else make_timestamp_ns(-2208988800000000000 + 1 + (i % 4) * 3600000000000) end as ns_dict,
    case when i % 10 = 7 then null else timestamptz '1960-02-29 12:00:00+00' + to_minutes(i % 3) end as tz_dict,
    case when i % 10 = 6 then null else time '23:59:59.999999' - to_seconds(i % 6) end as t_dict,
    case when i % 10 = 5 then null else to_months(i % 3) + to_days(2) + to_milliseconds(1500) end as iv_dict
  from range(300) t(i)) to '$OUT/time.parquet' (compression zstd)"
us() { echo "epoch_us($1) as $1"; }
ivf() { echo "datepart('year', $1) * 12 + datepart('month', $1) as $1_months, datepart('day', $1) as $1_days,
    datepart('hour', $1) * 3600000000 + datepart('minute', $1) * 60000000 + datepart('microsecond', $1) as $1_micros"; }
$ORACLE -c "select id, $(us ts), $(us ts_ms), epoch_ns(ts_ns) as ts_ns, $(us tstz), $(us t), $(ivf iv),
    $(us ms_dict), epoch_ns(ns_dict) as ns_dict, $(us tz_dict), $(us t_dict), $(ivf iv_dict)
  from '$OUT/time.parquet' order by id" > "$OUT/time.expect.txt"

# INT96: nanoseconds of the day n = 2^32 days + months, Julian day = millis.
$ORACLE -c "copy (select id,
    case when id % 6 = 5 then null else to_months(lo) + to_days(hi) + to_milliseconds(jd) end as i96,
    case when id % 6 = 5 then null else (jd - 2440588) * 86400000000000 + hi * 4294967296 + lo end as want_ns,
    case when id % 7 = 6 then null else to_months(dlo) + to_days(dhi) + to_milliseconds(djd) end as i96_dict,
    case when id % 7 = 6 then null else (djd - 2440588) * 86400000000000 + dhi * 4294967296 + dlo end as want_dict_ns
  from (select i as id, (i * 1000003) % 2147483648 as lo, (i * 37) % 20116 as hi, 2440588 + (i - 150) * 211 as jd,
               (i % 3) * 1000 as dlo, (i % 3) * 5000 as dhi, 2440587 + i % 3 as djd
        from range(300) t(i)))
  to '$TMP/int96_src.parquet' (compression zstd)"
"$PQ_PATCH" "$TMP/int96_src.parquet" "$TMP/int96_a.parquet" int96 1
"$PQ_PATCH" "$TMP/int96_a.parquet" "$OUT/int96.parquet" int96 3
$ORACLE -c "select id, want_ns, want_dict_ns, epoch_us(i96) as i96_us, epoch_us(i96_dict) as i96_dict_us
  from '$OUT/int96.parquet' order by id" > "$OUT/int96.expect.txt"
# An INT96 of Julian day 4000000000: past the int64 nanoseconds, refused.
# Distinct values: a PLAIN page (a dictionary's values decode on the host).
$ORACLE -c "copy (select i as id, to_months(i) + to_days(0) + to_milliseconds(case when i = 5 then 4000000000 else 2440588 + i end) as i96
  from range(300) t(i)) to '$TMP/range_src.parquet'"
"$PQ_PATCH" "$TMP/range_src.parquet" "$OUT/int96_range.parquet" int96 1

$ORACLE -c "copy (select i as id, (timestamp '1969-12-31 23:59:59.995' + to_milliseconds(i * 1000))::timestamp_ms as ms,
    timestamp '1969-12-31 23:59:59.999995' + to_microseconds(i * 1000) as us from range(10) t(i))
  to '$TMP/legacy_src.parquet'"
"$PQ_PATCH" "$TMP/legacy_src.parquet" "$TMP/legacy_a.parquet" nological 1
"$PQ_PATCH" "$TMP/legacy_a.parquet" "$OUT/legacy.parquet" nological 2
$ORACLE -c "select column_name, column_type from (describe select * from '$OUT/legacy.parquet')" > "$OUT/legacy.types.txt"
$ORACLE -c "select id, epoch_us(ms) as ms, epoch_us(us) as us from '$OUT/legacy.parquet' order by id" \
    > "$OUT/legacy.expect.txt"

# Row group 0: 2000-01-01 00:00:00.000 .. 00:00:03.000; row group 1: from 00:00:04.001 on.
$ORACLE -c "copy (select i as id, (timestamp '2000-01-01' + to_milliseconds((i // 512) * 1000 + (i // 2048)))::timestamp_ms as ts_ms
  from range(4096) t(i)) to '$OUT/prune.parquet' (row_group_size 2048, compression zstd)"

# TIME(MILLIS) in an INT32 (DuckDB writes TIME as MICROS): ms_raw keeps
# the integers; 2 row groups split by the statistics (00:00:00 .. 00:00:31.031,
# then 13:53:20 ..), few values (dictionary pages, small).
$ORACLE -c "copy (select i as id, case when i % 9 = 4 then null else ((i // 64) * 1001 + (i // 2048) * 50000000)::integer end as t_ms,
    case when i % 9 = 4 then null else ((i // 64) * 1001 + (i // 2048) * 50000000)::integer end as ms_raw
  from range(4096) t(i) order by i) to '$TMP/time_ms_src.parquet' (row_group_size 2048, compression zstd)"
"$PQ_PATCH" "$TMP/time_ms_src.parquet" "$OUT/time_ms.parquet" timemillis 1
$ORACLE -c "select distinct ms_raw, epoch_us(t_ms) as t_ms from '$OUT/time_ms.parquet' order by ms_raw" > "$OUT/time_ms.expect.txt"

$ORACLE -c "copy (select i as id, case when i = 2 then 9223372036854775 + i else i end as big from range(4) t(i))
  to '$TMP/overflow_src.parquet'"
"$PQ_PATCH" "$TMP/overflow_src.parquet" "$OUT/overflow.parquet" tsmillis 1

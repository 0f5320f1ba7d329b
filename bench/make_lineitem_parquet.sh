#!/usr/bin/env bash
# make_lineitem_parquet.sh - TPC-H lineitem at a scale factor as Parquet files
# written by DuckDB, for benchmarks (`pista bench scan`): our generator writes
# lineitem.tbl (byte-identical to dbgen), DuckDB loads it with the column
# types of shared/tpch/README.md and COPYs it once per codec with its default
# settings otherwise (122880-row row groups, v1 pages, dictionary as it
# chooses).
#
# Usage: bench/make_lineitem_parquet.sh [--sf SF] [--out DIR] [--codecs snappy,zstd]
#                                       [--keep-tbl]
# Writes DIR/lineitem-sf<SF>-<codec>.parquet (default SF 1, DIR /tmp/pista-bench,
# codecs snappy and zstd); files already there are kept. Needs node and
# @duckdb/node-api (tests/oracle/setup.sh, or DUCKDB_NODE_API_DIR pointing to
# a node_modules holding it), and the pista binary ($PISTA, else build/pista).
set -eu
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sf=1
out=/tmp/pista-bench
codecs=snappy,zstd
keep_tbl=0
while [ $# -gt 0 ]; do
    case "$1" in
        --sf) sf="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --codecs) codecs="$2"; shift 2 ;;
        --keep-tbl) keep_tbl=1; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "make_lineitem_parquet: unknown option '$1'" >&2; exit 2 ;;
    esac
done
pista="${PISTA:-$src/build/pista}"
if [ ! -x "$pista" ]; then
    echo "make_lineitem_parquet: no pista binary at $pista (set PISTA)" >&2
    exit 1
fi
command -v node >/dev/null || { echo "make_lineitem_parquet: node is not installed" >&2; exit 1; }
mkdir -p "$out"
tbl="$out/sf$sf/lineitem.tbl"

need=0
IFS=, read -r -a list <<< "$codecs"
for c in "${list[@]}"; do
    [ -s "$out/lineitem-sf$sf-$c.parquet" ] || need=1
done
[ "$need" -eq 1 ] || { echo "make_lineitem_parquet: all files exist in $out"; exit 0; }

if [ ! -s "$tbl" ]; then
    echo "make_lineitem_parquet: generating lineitem SF $sf into $out/sf$sf"
    "$pista" gen tpch --sf "$sf" --format tbl --tables lineitem --out "$out/sf$sf" >&2
fi

cols="l_orderkey: 'BIGINT', l_partkey: 'INTEGER', l_suppkey: 'INTEGER', l_linenumber: 'INTEGER',
  l_quantity: 'DECIMAL(15,2)', l_extendedprice: 'DECIMAL(15,2)', l_discount: 'DECIMAL(15,2)',
  l_tax: 'DECIMAL(15,2)', l_returnflag: 'VARCHAR', l_linestatus: 'VARCHAR', l_shipdate: 'DATE',
  l_commitdate: 'DATE', l_receiptdate: 'DATE', l_shipinstruct: 'VARCHAR', l_shipmode: 'VARCHAR',
  l_comment: 'VARCHAR', l_trailing: 'VARCHAR'"
sql="create table lineitem as select * exclude (l_trailing) from read_csv('$tbl', delim='|',
  header=false, quote='', escape='', auto_detect=false, columns={$cols});"
for c in "${list[@]}"; do
    f="$out/lineitem-sf$sf-$c.parquet"
    [ -s "$f" ] && continue
    sql="$sql copy lineitem to '$f.tmp' (format parquet, compression $c);"
done
echo "make_lineitem_parquet: DuckDB writes ${codecs//,/ } Parquet"
DUCKDB_SQL="$sql" node --input-type=module -e "
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
const dir = process.env.DUCKDB_NODE_API_DIR || path.join('$src', 'tests/oracle/node_modules');
const req = createRequire(path.join(dir, 'x.js'));
const api = await import(pathToFileURL(req.resolve('@duckdb/node-api')).href);
const db = await api.DuckDBInstance.create(':memory:');
const conn = await db.connect();
await conn.run(process.env.DUCKDB_SQL);
"
for c in "${list[@]}"; do
    f="$out/lineitem-sf$sf-$c.parquet"
    [ -f "$f.tmp" ] && mv "$f.tmp" "$f"
    ls -l "$f"
done
[ "$keep_tbl" -eq 1 ] || rm -f "$tbl"

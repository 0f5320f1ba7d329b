#!/usr/bin/env node
// difftest.mjs - differential testing of Pista's SQL front end against DuckDB.
//
// Usage: node difftest.mjs --pista PATH --data DIR [--seed S] [--count N]
//            [--verbose] [--only SEED:INDEX]... [--regressions FILE]
//            [--sql-file FILE] [--print] [--duckdb-only] [--set W.PATH=X,...]
//
// A seeded random generator of our own writes SELECT queries over the TPC-H
// schema (grammar weights in the table W below). Query i of seed S depends on
// (S, i) only, so `--only S:i` reproduces one query whatever --count was. Each
// query runs in DuckDB in-process (views named like the tables over
// read_parquet of DIR/<table>.parquet) and in Pista as
// `PATH --data DIR --answers -c SQL` (30 s timeout, or 12 times DuckDB's time
// when that is more). Both results are compared in
// the answers format (shared/tpch/answers/README.md): same header, same rows;
// as sorted multisets unless the query orders by every output column (then
// row by row); when it orders by some output columns only, those columns must
// also come out in DuckDB's sequence. DOUBLE columns (by DuckDB's type) may
// differ by 0.01, nothing else may differ. A crash, a timeout or a non-zero
// exit of Pista is a failure; so is a generated query DuckDB rejects (a
// generator bug). Ends with "N passed, M failed"; exit status 1 on any failure.
//
// --regressions FILE runs every `seed:index` listed in FILE (one per line, '#'
// starts a comment); --sql-file FILE runs every query of FILE (one per line,
// '#' comment lines and blank lines skipped), e.g. reduced regressions that
// must keep passing after the generator changes. --print only prints the
// generated queries; --duckdb-only checks that DuckDB accepts them.

// Pista's session time zone is UTC: DuckDB's TIMESTAMPTZ values in UTC too.
process.env.TZ = 'UTC';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cell } from './format.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// ------------------------------------------------------------------ weights
// Relative weights of every grammar choice. A construct Pista does not
// support yet is turned down to 0 here, with a comment saying so.
const W = {
  nTables: { 1: 4, 2: 4, 3: 3, 4: 2 },       // base FROM items per SELECT
  fromItem: { table: 12, derived: 2 },      // what a FROM item is
  withCte: 1 / 8,                            // chance of a WITH at top level
  joinStyle: { comma: 4, explicit: 4 },      // WHERE equalities or JOIN ... ON
  joinType: { inner: 3, left: 2, right: 1, full: 1 }, // for explicit joins
  joinUsing: 1 / 6,                          // self-join USING (col) when it fits
  onExtra: 1 / 4,                            // extra filter in a JOIN's ON
  onExtraLeft: 1 / 3,                        // ... on a column of the left side (else the new table)
  onNonEq: 1 / 12,                           // join on <, <=, >, <> instead of = (small inputs)
  nestedJoin: 1 / 6,                         // the joined item is a parenthesised join of two tables
  shape: { plain: 4, grouped: 6, global: 2 },
  distinct: 1 / 8,                           // SELECT DISTINCT (plain shape)
  inSubDistinct: 1 / 5,                      // SELECT DISTINCT in an IN (subquery)
  inSubNull: 1 / 5,                          // an IN (subquery) whose result holds NULLs
  fracConst: 1 / 10,                         // integer compared with a constant like 12.5
  setop: { none: 14, union: 1, unionAll: 1, intersect: 1, except: 1, intersectAll: 1 / 2, exceptAll: 1 / 2 },
  nFilters: { 0: 2, 1: 4, 2: 3, 3: 1 },
  pred: {
    cmp: 8, colcmp: 2, between: 3, inList: 3, like: 3, isNull: 1, regexp: 0,
    and: 2, or: 2, not: 1, sub: 2,
  },
  subPred: { inSub: 2, notInSub: 1, exists: 2, notExists: 1, scalarSub: 2, corrScalar: 2, corrAgg: 3 },
  existsNe: 1 / 4,                           // EXISTS with an extra <> correlation (Q21)
  // corrAgg: a correlated aggregate subquery on a key the outer item shares
  // with the inner table (outer keys without inner rows: the COUNT bug).
  corrAggFn: { countStar: 3, count: 2, countDistinct: 1, sum: 2, coalesceSum: 2, countPlus: 2, avg: 1, min: 1, max: 1 },
  corrSecondKey: 1 / 3,                      // ... also on a second shared key (lineitem, partsupp)
  corrHaving: 1 / 6,                         // ... with HAVING COUNT(*) op k
  corrAggUse: { cmpConst: 6, cmpCol: 2, exists: 1, in: 1 }, // how a WHERE uses it
  num: { col: 10, const: 1, add: 2, sub: 2, mul: 2, div: 1, cast: 1, case: 1, extract: 1 },
  str: { col: 8, substring: 2, case: 1, cast: 1, text: 3 },
  // functions that make new text (their constants ASCII, as the data)
  textFn: { upper: 2, lower: 2, concat: 3, concatWs: 1, replace: 2, lpad: 1, rpad: 1, repeat: 1, reverse: 1, regexpReplace: 0 },
  item: { num: 5, str: 3, date: 1, bool: 1, scalarSub: 1 / 2, corrAgg: 1 / 2 },
  agg: { sum: 4, count: 2, countStar: 3, countDistinct: 1, avg: 3, min: 2, max: 2, arith: 1, variance: 1, boolAgg: 1, ordered: 1, stringAgg: 0, sumDistinct: 0 },
  // percentile_cont / median of integers (DuckDB keeps a DECIMAL's type and
  // rounds), percentile_disc of anything, mode of anything but DOUBLE.
  orderedAgg: { cont: 2, disc: 2, mode: 2, median: 1 },
  aggFilter: 1 / 6,                          // agg(...) FILTER (WHERE p)
  groupKey: { col: 8, extract: 1, substring: 1, case: 1 },
  groupBy: { expr: 4, position: 2, alias: 1 },
  groupingSets: 1 / 8,                       // GROUP BY ROLLUP(keys) / CUBE(keys)
  osWithSets: 0,                             // > 0: ordered-set aggregates may stand with grouping sets
  having: 1 / 4,
  order: { none: 3, partial: 2, total: 4 },
  orderRef: { alias: 3, position: 2, expr: 2 },
  nullsOrder: { none: 2, first: 1, last: 1 }, // none: DuckDB's default, NULLS LAST also for DESC
  limit: 1 / 2,                              // LIMIT (only under a total order)
  offset: 1 / 3,
  unaliased: 1 / 4,                          // plain column left unaliased at top level
  // Window functions (top-level SELECTs): only those whose value does not
  // depend on how ties are broken (ranks, and aggregates over RANGE frames,
  // which take every peer, or over the whole partition).
  window: 1 / 4,                             // a SELECT gets 1-2 window items
  winFn: { rank: 2, denseRank: 2, percentRank: 1, cumeDist: 1, countStar: 2, count: 1, sum: 3, avg: 2, min: 2, max: 2 },
  winFrame: { default: 4, whole: 2, rangeOffset: 2 },
  winPart: { 0: 2, 1: 3, 2: 1 },             // PARTITION BY expressions
  winOrder: { 0: 1, 1: 4, 2: 1 },            // ORDER BY expressions
  // regexp, regexpReplace and stringAgg above are 0 by default: any weight
  // there changes every seed's queries (test_sql_diff's fixed seed drew
  // queries past its 30 s limit); --set pred.regexp=2 etc. turns them on.
  // Drawn from a second random stream (seed:index:ext), so the queries of
  // the first stream are as before where these do not fire:
  deepCorr: 1 / 3,                           // a correlated EXISTS / aggregate holds a nested
                                             // EXISTS / IN reading the query two levels out
  deeper: 1 / 4,                             // ... that holds one reading it three levels out
  lateral: 1 / 5,                            // a LATERAL (subquery) after the FROM items (levels 0, 1)
  lateralKind: { agg: 3, topn: 3, rows: 1 }, // COUNT(*) and SUM per outer row; ORDER BY ... LIMIT n; all rows
  lateralJoin: { comma: 2, cross: 1, left: 2, inner: 1 },
  lateralSecond: 1 / 4,                      // ... also compared with a column of another FROM item
  ts: 0,                                     // a DATE column read as a TIMESTAMP made of it (tsOf); 0 by
                                             // default so the fixed seed's queries stay; --set ts=0.5
};
// Unique keys: a total order for LATERAL ... ORDER BY ... LIMIT.
const PK = { region: ['r_regionkey'], nation: ['n_nationkey'], supplier: ['s_suppkey'], customer: ['c_custkey'],
  part: ['p_partkey'], partsupp: ['ps_partkey', 'ps_suppkey'], orders: ['o_orderkey'], lineitem: ['l_orderkey', 'l_linenumber'] };

// ------------------------------------------------------------------ schema
const NATIONS = ['ALGERIA', 'ARGENTINA', 'BRAZIL', 'CANADA', 'EGYPT', 'ETHIOPIA', 'FRANCE',
  'GERMANY', 'INDIA', 'INDONESIA', 'IRAN', 'IRAQ', 'JAPAN', 'JORDAN', 'KENYA', 'MOROCCO',
  'MOZAMBIQUE', 'PERU', 'CHINA', 'ROMANIA', 'SAUDI ARABIA', 'VIETNAM', 'RUSSIA',
  'UNITED KINGDOM', 'UNITED STATES'];
const REGIONS = ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'];
const SEGMENTS = ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'HOUSEHOLD', 'MACHINERY'];
const PRIORITIES = ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'];
const SHIPMODES = ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'];
const INSTRUCTS = ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'];
const TYPES = ['STANDARD POLISHED BRASS', 'PROMO BURNISHED COPPER', 'LARGE BRUSHED BRASS',
  'ECONOMY ANODIZED STEEL', 'MEDIUM PLATED TIN', 'SMALL BRUSHED NICKEL', 'PROMO PLATED STEEL'];
const CONTAINERS = ['SM CASE', 'SM BOX', 'MED BAG', 'MED PKG', 'LG CASE', 'LG BOX', 'JUMBO PKG',
  'WRAP CASE', 'SM PACK', 'JUMBO DRUM'];
const BRANDS = ['Brand#11', 'Brand#13', 'Brand#23', 'Brand#34', 'Brand#42', 'Brand#55'];
const MFGRS = ['Manufacturer#1', 'Manufacturer#2', 'Manufacturer#3', 'Manufacturer#4', 'Manufacturer#5'];
const COMMENT_PATS = ['%final%', '%regular%', '%special%requests%', '%express%', '%ironic%',
  '%carefully%', '%pending%', 'a%', '%s', '%furiously%', '%de_osits%', 'sly%', '%the%'];
const PHONES = ['13-761-547-5974', '25-989-741-2988', '31-101-672-2951', '17-361-978-7059'];
const PHONE_PATS = ['1_-%', '2%', '%-5__-%', '3_-%'];
const ADDR_PATS = ['%a%', '%,%', 'A%', '%x%', '%0%'];
const PNAME_PATS = ['%green%', 'forest%', '%ivory%', '%chocolate%', 'b%', '%lace', '%rose%'];
const PTYPE_PATS = ['%BRASS', 'PROMO%', '%POLISHED%', 'STANDARD%', '%ANODIZED TIN', 'ECONOMY%STEEL'];
const numbered = (prefix, lo, hi) => (r) => prefix + String(r.int(lo, hi)).padStart(9, '0');

// kinds: int (INTEGER), big (BIGINT), hug (HUGEINT, sums of integers), dec
// (DECIMAL, .s scale), dbl (DOUBLE), date, str, bool.
function col(name, k, o = {}) { return { name, k, s: o.s ?? (k === 'dec' ? 2 : 0), ...o }; }
const D = (s) => Date.parse(s + 'T00:00:00Z') / 86400000;
const TABLES = {
  region: { rows: 5, cols: [
    col('r_regionkey', 'int', { lo: 0, hi: 4, key: 'regionkey', d: 5 }),
    col('r_name', 'str', { vals: REGIONS }),
    col('r_comment', 'str', { pats: COMMENT_PATS })] },
  nation: { rows: 25, cols: [
    col('n_nationkey', 'int', { lo: 0, hi: 24, key: 'nationkey', d: 25 }),
    col('n_name', 'str', { vals: NATIONS }),
    col('n_regionkey', 'int', { lo: 0, hi: 4, key: 'regionkey', d: 5 }),
    col('n_comment', 'str', { pats: COMMENT_PATS })] },
  supplier: { rows: 100, cols: [
    col('s_suppkey', 'int', { lo: 1, hi: 100, key: 'suppkey', d: 100 }),
    col('s_name', 'str', { gen: numbered('Supplier#', 1, 100), pats: ['Supplier#00000001%', '%5', 'Supplier#0000000_5'] }),
    col('s_address', 'str', { pats: ADDR_PATS }),
    col('s_nationkey', 'int', { lo: 0, hi: 24, key: 'nationkey', d: 25 }),
    col('s_phone', 'str', { vals: PHONES, pats: PHONE_PATS }),
    col('s_acctbal', 'dec', { lo: -999.99, hi: 9999.99 }),
    col('s_comment', 'str', { pats: COMMENT_PATS })] },
  customer: { rows: 1500, cols: [
    col('c_custkey', 'int', { lo: 1, hi: 1500, key: 'custkey', d: 1500 }),
    col('c_name', 'str', { gen: numbered('Customer#', 1, 1500), pats: ['Customer#0000001%', '%7', 'Customer#00000_99'] }),
    col('c_address', 'str', { pats: ADDR_PATS }),
    col('c_nationkey', 'int', { lo: 0, hi: 24, key: 'nationkey', d: 25 }),
    col('c_phone', 'str', { vals: PHONES, pats: PHONE_PATS }),
    col('c_acctbal', 'dec', { lo: -999.99, hi: 9999.99 }),
    col('c_mktsegment', 'str', { vals: SEGMENTS }),
    col('c_comment', 'str', { pats: COMMENT_PATS })] },
  part: { rows: 2000, cols: [
    col('p_partkey', 'int', { lo: 1, hi: 2000, key: 'partkey', d: 2000 }),
    col('p_name', 'str', { pats: PNAME_PATS, vals: ['goldenrod lavender spring chocolate lace'] }),
    col('p_mfgr', 'str', { vals: MFGRS }),
    col('p_brand', 'str', { vals: BRANDS, pats: ['Brand#1%', 'Brand#_3', '%5'] }),
    col('p_type', 'str', { vals: TYPES, pats: PTYPE_PATS }),
    col('p_size', 'int', { lo: 1, hi: 50 }),
    col('p_container', 'str', { vals: CONTAINERS, pats: ['SM%', '%BOX', 'MED%', '%PACK', '__ CASE'] }),
    col('p_retailprice', 'dec', { lo: 901, hi: 1900.99 }),
    col('p_comment', 'str', { pats: COMMENT_PATS })] },
  partsupp: { rows: 8000, cols: [
    col('ps_partkey', 'int', { lo: 1, hi: 2000, key: 'partkey', d: 2000 }),
    col('ps_suppkey', 'int', { lo: 1, hi: 100, key: 'suppkey', d: 100 }),
    col('ps_availqty', 'int', { lo: 3, hi: 9998 }),
    col('ps_supplycost', 'dec', { lo: 1.05, hi: 999.99 }),
    col('ps_comment', 'str', { pats: COMMENT_PATS })] },
  orders: { rows: 15000, cols: [
    col('o_orderkey', 'big', { lo: 1, hi: 60000, key: 'orderkey', d: 15000 }),
    col('o_custkey', 'int', { lo: 1, hi: 1499, key: 'custkey', d: 1000 }),
    col('o_orderstatus', 'str', { vals: ['F', 'O', 'P'] }),
    col('o_totalprice', 'dec', { lo: 874.89, hi: 466001.28 }),
    col('o_orderdate', 'date', { lo: D('1992-01-01'), hi: D('1998-08-02') }),
    col('o_orderpriority', 'str', { vals: PRIORITIES, pats: ['1%', '%-%', '%HIGH', '_-%'] }),
    col('o_clerk', 'str', { gen: numbered('Clerk#', 1, 1000), pats: ['Clerk#0000001%', '%0'] }),
    col('o_shippriority', 'int', { lo: 0, hi: 0 }),
    col('o_comment', 'str', { pats: COMMENT_PATS })] },
  lineitem: { rows: 60175, cols: [
    col('l_orderkey', 'big', { lo: 1, hi: 60000, key: 'orderkey', d: 15000 }),
    col('l_partkey', 'int', { lo: 1, hi: 2000, key: 'partkey', d: 2000 }),
    col('l_suppkey', 'int', { lo: 1, hi: 100, key: 'suppkey', d: 100 }),
    col('l_linenumber', 'int', { lo: 1, hi: 7 }),
    col('l_quantity', 'dec', { lo: 1, hi: 50 }),
    col('l_extendedprice', 'dec', { lo: 904, hi: 94949.5 }),
    col('l_discount', 'dec', { lo: 0, hi: 0.1 }),
    col('l_tax', 'dec', { lo: 0, hi: 0.08 }),
    col('l_returnflag', 'str', { vals: ['A', 'N', 'R'] }),
    col('l_linestatus', 'str', { vals: ['F', 'O'] }),
    col('l_shipdate', 'date', { lo: D('1992-01-04'), hi: D('1998-11-29') }),
    col('l_commitdate', 'date', { lo: D('1992-02-02'), hi: D('1998-10-28') }),
    col('l_receiptdate', 'date', { lo: D('1992-01-09'), hi: D('1998-12-25') }),
    col('l_shipinstruct', 'str', { vals: INSTRUCTS }),
    col('l_shipmode', 'str', { vals: SHIPMODES }),
    col('l_comment', 'str', { pats: COMMENT_PATS })] },
};
const TABLE_NAMES = Object.keys(TABLES);
const TABLE_PICK = { region: 1, nation: 2, supplier: 2, customer: 3, part: 3, partsupp: 3, orders: 4, lineitem: 5 };
const MAX_ROWS = 300000;   // estimated join size above which a join is not added

// ------------------------------------------------------------------ PRNG
// xorshift128 seeded through FNV-1a and splitmix32 from "seed:index".
class Rng {
  constructor(text) {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    const sm = () => {
      h = (h + 0x9e3779b9) >>> 0;
      let z = h;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s = [sm(), sm(), sm(), sm() || 1];
  }
  next() {   // uniform in [0, 2^32)
    const s = this.s;
    let t = s[3];
    t ^= t << 11; t ^= t >>> 8;
    s[3] = s[2]; s[2] = s[1]; s[1] = s[0];
    t ^= s[0]; t ^= s[0] >>> 19;
    s[0] = t >>> 0;
    return s[0];
  }
  float() { return this.next() / 4294967296; }
  int(lo, hi) { return lo + Math.floor(this.float() * (hi - lo + 1)); }
  chance(p) { return this.float() < p; }
  one(a) { return a[Math.floor(this.float() * a.length)]; }
  pick(w) {   // a key of the weight table w
    const keys = Object.keys(w).filter((k) => w[k] > 0);
    let total = 0;
    for (const k of keys) total += w[k];
    let x = this.float() * total;
    for (const k of keys) { x -= w[k]; if (x < 0) return k; }
    return keys[keys.length - 1];
  }
  shuffle(a) {
    const b = a.slice();
    for (let i = b.length - 1; i > 0; i--) { const j = this.int(0, i); [b[i], b[j]] = [b[j], b[i]]; }
    return b;
  }
}

// ------------------------------------------------------------------ types and constants
const NUMERIC = new Set(['int', 'big', 'hug', 'dec', 'dbl']);
const isNum = (t) => NUMERIC.has(t.k);
const family = (k) => (k === 'int' || k === 'big' || k === 'hug' ? 'integer' : k);
const LIMIT_OF = { int: 2e9, big: 1e15, hug: 1e15, dbl: 1e15 };
function fits(t) {   // no overflow in DuckDB's INTEGER, nor in a 64-bit scaled decimal sum
  const m = Math.max(Math.abs(t.lo), Math.abs(t.hi));
  if (!Number.isFinite(m)) return false;
  if (t.k === 'dec') return t.s <= 6 && m * 10 ** t.s < 1e13;
  return m < (LIMIT_OF[t.k] ?? Infinity);
}
function dateText(days) { return new Date(days * 86400000).toISOString().slice(0, 10); }
function decText(x, s) {
  const t = x.toFixed(s);
  return t === '-0.00' ? '0.00' : t;
}
function numConst(r, t) {   // a literal inside t's range, of t's kind
  const lo = Math.max(t.lo, -1e9), hi = Math.min(t.hi, 1e9);
  if (t.k === 'dec' || t.k === 'dbl') {
    const x = lo + r.float() * (hi - lo);
    const s = Math.abs(hi - lo) < 1 ? 2 : r.int(0, 2);
    return { sql: decText(x, s), v: Number(decText(x, s)) };
  }
  const v = Math.round(lo + r.float() * (hi - lo));
  return { sql: String(v), v };
}
const INTERVAL_UNITS = ['day', 'month', 'year'];
function dateValue(text) {   // days of a literal from dateConst
  const m = /date '([\d-]+)'(?: \+ interval '(\d+)' (\w+))?/.exec(text);
  const n = Number(m[2] ?? 0);
  return D(m[1]) + (m[3] === 'day' ? n : m[3] === 'month' ? n * 30.5 : m[3] === 'year' ? n * 365.25 : 0);
}
function dateConst(r, t) {
  const v = r.int(t.lo, t.hi);
  if (r.chance(0.3)) {
    const unit = r.one(INTERVAL_UNITS);
    const n = unit === 'day' ? r.int(1, 90) : unit === 'month' ? r.int(1, 12) : r.int(1, 2);
    return `date '${dateText(v - (unit === 'day' ? n : unit === 'month' ? n * 30 : n * 365))}' + interval '${n}' ${unit}`;
  }
  return `date '${dateText(v)}'`;
}
function strConst(r, e) {
  if (e.vals && e.vals.length && r.chance(0.85)) return e.vals[Math.floor(r.float() * e.vals.length)];
  if (e.gen) return e.gen(r);
  return r.one(['a', 'f', 'm', 'Customer#000000500', 'Brand#3', 'carefully']);
}
const quote = (s) => `'${s.replace(/'/g, "''")}'`;
// regexp_replace with a few fixed patterns, each with the JavaScript
// RegExp that computes the same values (for the generator's vals): patterns
// that never match empty text, where JavaScript's rules for empty matches
// under g would differ from RE2's (DuckDB) and Pista's.
const REGEXP_REPLACES = [
  { pat: '[aeiou]', repl: '', flags: 'g', js: /[aeiou]/g, jsRepl: '' },
  { pat: '([A-Za-z]+)#0*([0-9]+)', repl: '\\2:\\1', flags: '', js: /([A-Za-z]+)#0*([0-9]+)/, jsRepl: '$2:$1' },
  { pat: '^(\\w+) (\\w+)', repl: '\\2 \\1', flags: '', js: /^(\w+) (\w+)/, jsRepl: '$2 $1' },
  { pat: '[0-9]+', repl: '#', flags: 'g', js: /[0-9]+/g, jsRepl: '#' },
  { pat: '(a|e)[a-z]', repl: '<\\0>', flags: 'gi', js: /(a|e)[a-z]/gi, jsRepl: '<$&>' },
  { pat: '[[:upper:]]{2,3}?', repl: '[\\0]', flags: '', js: /[A-Z]{2,3}?/, jsRepl: '[$&]' },
  { pat: 'ly( |$)', repl: '!\\1', flags: 'g', js: /ly( |$)/g, jsRepl: '!$1' },
];
// regexp_like's patterns (DuckDB gets a regexp_like macro over its
// regexp_matches, the search match; its ~ is a full match).
const REGEXP_LIKES = ['^[A-M]', 'ly$', 'e{2}', '(ca|de)[a-z]+', '[0-9]{3}', '#0*[1-3]', 'ar?[es]', '[[:upper:]]{4}', 'x|q'];
function likePattern(r, e) {
  if (e.pats && (!e.vals || r.chance(0.6))) return r.one(e.pats);
  const v = strConst(r, e);
  const n = Math.max(1, Math.floor(v.length / 2));
  switch (r.int(0, 3)) {
    case 0: return v.slice(0, n) + '%';
    case 1: return '%' + v.slice(n);
    case 2: { const i = r.int(0, v.length - 1); return v.slice(0, i) + '_' + v.slice(i + 1); }
    default: return '%' + v.slice(1, Math.max(2, n)) + '%';
  }
}

// ------------------------------------------------------------------ the generator
// A scope is {items, parent}: the FROM items of one SELECT (each {alias, cols,
// rows}) and the scope of the query it is nested in (for correlation). An
// expression is {sql, t} where t = {k, s, lo, hi, nul, vals, pats, gen, key}.
class Gen {
  constructor(r, r2 = null) {
    this.r = r;
    this.r2 = r2;
    this.n = 0;
    this.ctes = [];
  }
  // fn() drawing from the second stream (W.deepCorr, W.lateral...).
  ext(fn) {
    const save = this.r;
    this.r = this.r2;
    try { return fn(); } finally { this.r = save; }
  }
  extChance(p) { return !!this.r2 && this.r2.chance(p); }
  alias(p) { return `${p}${++this.n}`; }

  // ---- column references
  columns(scope, pred = () => true) {
    const out = [];
    for (const it of scope.items) for (const c of it.cols) if (pred(c)) out.push({ it, c });
    return out;
  }
  ref(scope, it, c) {
    let count = 0;
    for (let s = scope; s; s = s.parent) for (const i of s.items) for (const x of i.cols) if (x.name === c.name) count++;
    return count === 1 && this.r.chance(0.6) ? c.name : `${it.alias}.${c.name}`;
  }
  colExpr(scope, it, c) {
    return { sql: this.ref(scope, it, c), t: { ...c, nul: c.nul || it.nullable }, col: c, simple: true, hc: true };
  }
  anyCol(scope, pred) {
    const cs = this.columns(scope, pred);
    if (!cs.length) return null;
    const { it, c } = this.r.one(cs);
    const e = this.colExpr(scope, it, c);
    // A DATE column now and then becomes a TIMESTAMP made of it (W.ts, from
    // the second stream: the first stream's queries stay as they were).
    if (e.t.k === 'date' && W.ts > 0 && this.extChance(W.ts)) return this.tsOf(e);
    return e;
  }
  // A TIMESTAMP of date column e: shifted by an interval with a time part
  // (every field of the timestamp set), now and then truncated or cast to
  // TIMESTAMPTZ. Still of kind 'date' to the generator: it compares with
  // date constants, casts to text, extracts, groups, sorts and takes MIN /
  // MAX as a date does (a DATE meets a TIMESTAMP as a TIMESTAMP).
  tsOf(e) {
    const r2 = this.r2;
    const iv = r2.one(['13 hours', '1 day 2 hours 3 minutes', '-36 hours', '90 minutes 30.5 seconds',
      '7 hours 59 minutes 59.999999 seconds', '1 month', '-2 months 3 days 4 hours', '0.25 seconds']);
    let sql = `(CAST(${e.sql} AS TIMESTAMP) + INTERVAL '${iv}')`;
    const how = r2.int(0, 5);
    if (how === 0) sql = `date_trunc('${r2.one(['hour', 'minute', 'day', 'month'])}', ${sql})`;
    else if (how === 1) sql = `CAST(${sql} AS TIMESTAMPTZ)`;
    return { ...e, sql, simple: false, hc: true };
  }

  // ---- FROM
  baseItem(name) {
    const T = TABLES[name];
    return { alias: this.alias('t'), table: name, rows: T.rows, cols: T.cols.map((c) => ({ ...c })) };
  }
  derivedItem(level) {
    const alias = this.alias('d');
    const q = this.select({ level: level + 1, parent: null, derived: true });
    return { alias, sql: `(${q.sql}) AS ${alias}`, rows: q.rows, cols: q.cols };
  }
  firstItem(level) {
    if (level === 0 && this.ctes.length) {
      const cte = this.r.one(this.ctes);
      const alias = this.alias('t');
      return { alias, sql: `${cte.name} AS ${alias}`, rows: cte.rows, cols: cte.cols.map((c) => ({ ...c })) };
    }
    if (level < 2 && this.r.pick(W.fromItem) === 'derived') return this.derivedItem(level);
    return this.baseItem(this.r.pick(TABLE_PICK));
  }
  // Candidate joins of a new base table to one of the items: equal key domains.
  joinCandidates(items, rows) {
    const out = [];
    for (const it of items) for (const c of it.cols) {
      if (!c.key) continue;
      for (const name of TABLE_NAMES) for (const nc of TABLES[name].cols) {
        if (nc.key !== c.key) continue;
        const est = rows * TABLES[name].rows / Math.max(c.d, nc.d);
        if (est <= MAX_ROWS) out.push({ it, c, name, nc, est });
      }
    }
    return out;
  }
  from(scope, level, where) {
    const r = this.r;
    const want = Number(r.pick(W.nTables));
    const first = this.firstItem(level);
    scope.items.push(first);
    let rows = first.rows;
    const explicit = r.pick(W.joinStyle) === 'explicit';
    let sql = first.sql ?? `${first.table} AS ${first.alias}`;
    while (scope.items.length < want) {
      const cands = this.joinCandidates(scope.items, rows);
      if (!cands.length) break;
      const j = r.one(cands);
      const it = this.baseItem(j.name);
      const nc = it.cols.find((c) => c.name === j.nc.name);
      const cond = [];
      // USING needs the same column name on both sides: a self-join.
      const using = explicit && j.it.table === j.name && j.c.name === nc.name && r.chance(W.joinUsing * 3) &&
        this.columns(scope, (c) => c.name === nc.name).length === 1;
      scope.items.push(it);
      cond.push(`${j.it.alias}.${j.c.name} = ${it.alias}.${nc.name}`);
      // lineitem-partsupp also on the second key (Q9).
      const pair = [['l_partkey', 'ps_partkey', 'l_suppkey', 'ps_suppkey'], ['ps_partkey', 'l_partkey', 'ps_suppkey', 'l_suppkey']]
        .find((p) => p[0] === j.c.name && p[1] === nc.name);
      if (pair && r.chance(0.7)) cond.push(`${j.it.alias}.${pair[2]} = ${it.alias}.${pair[3]}`);
      // Now and then a join on a non-equality (no hash key: a residual only).
      if (!using && cond.length === 1 && rows * TABLES[j.name].rows <= 20000 && r.chance(W.onNonEq)) {
        const o = r.one(['<', '<=', '>', '<>']);
        cond[0] = cond[0].replace(' = ', ` ${o} `);
        rows = Math.max(j.est, rows * TABLES[j.name].rows);
      } else rows = j.est;
      if (!explicit) {
        sql += `, ${j.name} AS ${it.alias}`;
        where.push(...cond);
        continue;
      }
      const kind = r.pick(W.joinType);
      let right = `${j.name} AS ${it.alias}`;
      const rightItems = [it];
      if (using && cond.length === 1) {
        nullify(kind, scope.items.filter((x) => x !== it), rightItems);
        sql += ` ${joinWord(r, kind)} ${right} USING (${nc.name})`;
        continue;
      }
      if (r.chance(W.nestedJoin)) {
        // (new JOIN another ON ...): the inner join's type applies first.
        const c2 = this.joinCandidates([it], it.rows).filter((x) => x.it === it && rows * x.est / it.rows <= MAX_ROWS);
        if (c2.length) {
          const j2 = r.one(c2);
          const it2 = this.baseItem(j2.name);
          const kind2 = r.pick(W.joinType);
          nullify(kind2, [it], [it2]);
          right = `(${right} ${joinWord(r, kind2)} ${j2.name} AS ${it2.alias} ON ${it.alias}.${j2.c.name} = ${it2.alias}.${j2.nc.name})`;
          scope.items.push(it2);
          rightItems.push(it2);
          rows = rows * Math.max(1, j2.est / it.rows);
        }
      }
      if (r.chance(W.onExtra)) {
        // Columns of one item only (the new table, or one of the left
        // side's); the rest of the scope is there for naming.
        const x = r.chance(W.onExtraLeft) ? r.one(scope.items.filter((y) => !rightItems.includes(y))) : it;
        const inner = { items: [x], parent: { items: scope.items.filter((y) => y !== x), parent: scope.parent } };
        cond.push(this.pred(inner, 2, false).sql);
      }
      nullify(kind, scope.items.filter((x) => !rightItems.includes(x)), rightItems);
      sql += ` ${joinWord(r, kind)} ${right} ON ${cond.join(' AND ')}`;
    }
    if (level < 2 && this.extChance(W.lateral)) {
      const lat = this.ext(() => this.lateralItem(scope, rows, explicit));
      if (lat) {
        scope.items.push(lat.item);
        sql += lat.sql;
        rows = lat.rows;
      }
    }
    return { sql, rows };
  }
  // LATERAL (SELECT ... FROM t WHERE t.key = <an earlier item's key> ...):
  // COUNT(*) and SUM per outer row (COUNT 0 where none), a top-n per outer
  // row (a total order), or all the matching rows; comma, CROSS JOIN, JOIN
  // ... ON TRUE or LEFT JOIN ... ON TRUE.
  // Under LEFT JOIN it reads only the join's left side (PostgreSQL's rule):
  // after comma-separated items, the last one.
  lateralItem(scope, rows, explicit) {
    const r = this.r;
    const join = r.pick(W.lateralJoin);
    const last = scope.items[scope.items.length - 1];
    const onlyLast = join === 'left' && !explicit;
    const keys = this.keyCols(scope).filter(({ it }) => !it.lateral && (!onlyLast || it === last) && domainOk(scope, it));
    if (!keys.length) return null;
    const { it, c } = r.one(keys);
    const name = r.one(TABLE_NAMES.filter((n) => TABLES[n].cols.some((x) => x.key === c.key)));
    const inner = { items: [this.baseItem(name)], parent: scope };
    const ii = inner.items[0];
    const ic = ii.cols.find((x) => x.key === c.key);
    const where = [`${ii.alias}.${ic.name} = ${this.ref(inner, it, c)}`];
    if (!onlyLast && r.chance(W.lateralSecond)) {
      // a second FROM item read too
      const o = this.columns(scope, (x) => isNum(x) && !x.key).filter((x) => x.it !== it && !x.it.lateral && domainOk(scope, x.it));
      const mine = ii.cols.filter((x) => isNum(x) && !x.key);
      if (o.length && mine.length) {
        const a = r.one(o), b = r.one(mine);
        where.push(`${ii.alias}.${b.name} ${r.one(['<', '>', '<=', '>='])} ${this.ref(inner, a.it, a.c)}`);
      }
    }
    where.push(...this.subFilters(inner, 1));
    if (r.chance(W.deepCorr)) {
      // two levels out: the same outer item (D from one relation)
      const d = this.deepPred(inner, { items: [it], parent: null });
      if (d) where.push(d);
    }
    const alias = this.alias('l');
    const kind = r.pick(W.lateralKind);
    let sel, cols, out, tail = '';
    if (kind === 'agg') {
      const e = this.numCol(inner);
      const k = e.t.k === 'dec' ? 'dec' : e.t.k === 'dbl' ? 'dbl' : 'hug';
      const t = { k, s: e.t.s, lo: Math.min(0, e.t.lo * 1000), hi: Math.max(0, e.t.hi * 1000), nul: true, wide: k === 'dec' };
      if (!fits(t)) return null;
      sel = `COUNT(*) AS ${alias}_n, SUM(${e.sql}) AS ${alias}_s`;
      cols = [col(`${alias}_n`, 'big', { lo: 0, hi: 1000 }), { ...t, name: `${alias}_s` }];
      out = rows;
    } else {
      const pool = ii.cols.filter((x) => x.k !== 'dbl');
      const picked = r.shuffle([...pool]).slice(0, r.int(1, 2));
      sel = picked.map((x, i) => `${ii.alias}.${x.name} AS ${alias}_${i}`).join(', ');
      cols = picked.map((x, i) => ({ ...x, name: `${alias}_${i}` }));
      if (kind === 'topn') {
        const n = r.int(1, 3);
        const first = r.one(ii.cols.filter((x) => x.k !== 'dbl'));
        const order = [`${ii.alias}.${first.name}${r.chance(0.5) ? ' DESC' : ''}`, ...PK[name].map((x) => `${ii.alias}.${x}`)];
        tail = ` ORDER BY ${order.join(', ')} LIMIT ${n}${r.chance(0.2) ? ' OFFSET 1' : ''}`;
        out = rows * n;
      } else out = rows * TABLES[name].rows / Math.max(c.d ?? 1, ic.d ?? 1);
      if (out > MAX_ROWS) return null;
    }
    const body = `LATERAL (SELECT ${sel} FROM ${name} AS ${ii.alias} WHERE ${where.join(' AND ')}${tail}) AS ${alias}`;
    const item = { alias, cols, rows: out, lateral: true, nullable: join === 'left' };
    const sql = join === 'comma' ? `, ${body}` : join === 'cross' ? ` CROSS JOIN ${body}`
      : join === 'left' ? ` LEFT JOIN ${body} ON TRUE` : ` JOIN ${body} ON TRUE`;
    return { item, sql, rows: out };
  }
  // EXISTS / IN over a table joined to the subquery's item (inner) on a key
  // and to the query two levels out (outer) on another: a correlation two
  // levels out (and now and then one three levels out inside it).
  deepPred(inner, outer, depth = 0) {
    const r = this.r;
    const ii = inner.items[0];
    const ik = ii.cols.filter((x) => x.key);
    const ok = this.keyCols(outer).filter(({ it }) => domainOk(outer, it));
    if (!ik.length || !ok.length) return null;
    const a = r.one(ik);
    const cands = [];
    for (const name of TABLE_NAMES) {
      const na = TABLES[name].cols.find((x) => x.key === a.key);
      if (!na) continue;
      for (const { it, c } of ok) {
        const nb = TABLES[name].cols.find((x) => x.key === c.key && x !== na);
        if (nb) cands.push({ name, na, nb, it, c });
      }
    }
    if (!cands.length) return null;
    const p = r.one(cands);
    const n = { items: [this.baseItem(p.name)], parent: inner };
    const ni = n.items[0];
    // IN reads the inner item through its value only: then an equality to
    // the outer query too (a non-equality alone pairs every row of the
    // domain with every row of the table; Pista has no inequality join).
    const asIn = r.chance(0.3);
    // An inequality (a join residual over D's rows) only into a small table.
    const op = asIn || TABLES[p.name].rows > 10000 || r.chance(0.75) ? '=' : r.one(['<', '>', '<>']);
    const conds = [`${ni.alias}.${p.nb.name} ${op} ${this.ref(n, p.it, p.c)}`, ...this.subFilters(n, 1)];
    if (depth === 0 && r.chance(W.deeper)) {
      const d = this.deepPred(n, outer, 1);
      if (d) conds.push(d);
    }
    if (asIn)
      return `${ii.alias}.${a.name}${r.chance(0.3) ? ' NOT' : ''} IN (SELECT ${ni.alias}.${p.na.name} FROM ${p.name} AS ${ni.alias} WHERE ${conds.join(' AND ')})`;
    conds.unshift(`${ni.alias}.${p.na.name} = ${ii.alias}.${a.name}`);
    return `${r.chance(0.3) ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${p.name} AS ${ni.alias} WHERE ${conds.join(' AND ')})`;
  }

  // ---- expressions
  num(scope, depth = 0, want = null) {
    const r = this.r;
    // At the top (depth 0) an expression must read a column: no constant-only predicates.
    const ok = (e) => e && fits(e.t) && (!want || family(e.t.k) === want) && (depth > 0 || e.hc);
    for (let tries = 0; tries < 8; tries++) {
      const what = depth >= 2 ? (r.chance(0.85) ? 'col' : 'const') : r.pick(W.num);
      if (what === 'const' && depth === 0) continue;
      const e = this.numOf(what, scope, depth, want);
      if (ok(e)) return e;
    }
    const e = this.anyCol(scope, (c) => isNum(c) && (!want || family(c.k) === want));
    if (e) return e;
    const k = want === 'integer' || !want ? 'int' : want;
    return { sql: k === 'dbl' ? 'CAST(1.5 AS DOUBLE)' : k === 'dec' ? '1.50' : '7', t: { k, s: k === 'dec' ? 2 : 0, lo: 1, hi: 7 } };
  }
  numOf(what, scope, depth, want) {
    const r = this.r;
    switch (what) {
      case 'col': return this.anyCol(scope, (c) => isNum(c) && (!want || family(c.k) === want));
      case 'const': {
        const base = this.anyCol(scope, (c) => isNum(c) && (!want || family(c.k) === want));
        if (!base) return null;
        const c = numConst(r, base.t);
        const k = c.sql.includes('.') ? 'dec' : 'int';
        return { sql: c.sql, t: { k, s: k === 'dec' ? c.sql.split('.')[1].length : 0, lo: c.v, hi: c.v } };
      }
      case 'add': case 'sub': case 'mul': {
        const a = this.num(scope, depth + 1, want === 'dbl' ? null : want);
        let b;
        if (what === 'mul' || r.chance(0.3)) {
          b = r.chance(0.5) ? this.num(scope, depth + 1, want === 'dbl' ? null : want)
            : smallConst(r, want);
        } else b = this.num(scope, depth + 1, want === 'dbl' ? null : want);
        if (what === 'mul' && a.t.k === 'dec' && b.t.k === 'dec' && a.t.s + b.t.s > 4) return null;
        return arith(a, { add: '+', sub: '-', mul: '*' }[what], b, r);
      }
      case 'div': {
        if (want && want !== 'dbl') return null;
        const a = this.num(scope, depth + 1);
        let b = this.anyCol(scope, (c) => isNum(c) && (c.lo > 0 || c.hi < 0));
        if (!b || r.chance(0.3)) b = smallConst(r, null);
        // Integers divide as integers in Pista (PostgreSQL) and as DOUBLE in
        // DuckDB: a DOUBLE dividend makes both divide alike (integer division
        // is compared with DuckDB's // in test_sql_functions.sh).
        const num = family(a.t.k) === 'integer' && family(b.t.k) === 'integer' ? `CAST(${a.sql} AS DOUBLE)` : paren(a);
        return { sql: `${num} / ${paren(b)}`, t: { k: 'dbl', s: 0, ...divRange(a.t, b.t), nul: a.t.nul || b.t.nul }, hc: a.hc || b.hc };
      }
      case 'cast': {
        const a = this.num(scope, depth + 1);
        const to = want ? { integer: ['INTEGER', 'BIGINT'], dec: ['DECIMAL(18,2)'], dbl: ['DOUBLE'] }[want]
          : ['DOUBLE', 'BIGINT', 'DECIMAL(18,2)', 'INTEGER'];
        const ty = r.one(to);
        const k = { DOUBLE: 'dbl', BIGINT: 'big', INTEGER: 'int', 'DECIMAL(18,2)': 'dec' }[ty];
        if (k === 'dec' && a.t.k === 'dbl') return null;   // rounding of binary doubles: not exact
        if ((k === 'int' || k === 'big') && a.t.k === 'dbl') return null;
        return { sql: `CAST(${a.sql} AS ${ty})`, t: { ...a.t, k, s: k === 'dec' ? 2 : 0, wide: false }, hc: a.hc };
      }
      case 'case': {
        const p = this.pred({ items: scope.items, parent: scope.parent }, 2, false);
        const a = this.num(scope, depth + 1, want);
        const b = this.num(scope, depth + 1, want ?? family(a.t.k));
        if (family(a.t.k) !== family(b.t.k) || !sameDecimalScale(a.t, b.t)) return null;
        const noElse = r.chance(0.2);
        const k = a.t.k === 'dec' || b.t.k === 'dec' ? 'dec' : a.t.k === 'dbl' ? 'dbl' : (a.t.k === 'int' && b.t.k === 'int' ? 'int' : 'big');
        return {
          sql: `CASE WHEN ${p.sql} THEN ${a.sql}${noElse ? '' : ` ELSE ${b.sql}`} END`,
          t: { k, s: Math.max(a.t.s ?? 0, b.t.s ?? 0), lo: Math.min(a.t.lo, b.t.lo), hi: Math.max(a.t.hi, b.t.hi), nul: noElse || a.t.nul || b.t.nul, wide: a.t.wide || b.t.wide },
          hc: a.hc || b.hc,
        };
      }
      case 'extract': {
        if (want && want !== 'integer') return null;
        const d = this.anyCol(scope, (c) => c.k === 'date');
        if (!d) return null;
        const part = r.one(['YEAR', 'MONTH', 'DAY']);
        const [lo, hi] = part === 'YEAR' ? [1992, 1998] : part === 'MONTH' ? [1, 12] : [1, 31];
        return { sql: `EXTRACT(${part} FROM ${d.sql})`, t: { k: 'big', s: 0, lo, hi, nul: d.t.nul }, hc: true };
      }
    }
    return null;
  }
  str(scope, depth = 0) {
    const r = this.r;
    const what = depth >= 2 ? 'col' : r.pick(W.str);
    const base = this.anyCol(scope, (c) => c.k === 'str');
    if (what === 'cast' || !base) {
      const n = this.anyCol(scope, (c) => c.k === 'int' || c.k === 'big' || c.k === 'date');
      if (!n) return base ?? { sql: "'x'", t: { k: 'str', vals: ['x'] } };
      return { sql: `CAST(${n.sql} AS VARCHAR)`, t: { k: 'str', nul: n.t.nul, pats: n.t.k === 'date' ? ['1995%', '%-0_-%', '%1'] : ['1%', '%5', '%0%', '2_'] }, hc: true };
    }
    if (what === 'substring') {
      const a = r.int(1, 3), n = r.int(1, 6);
      const vals = base.t.vals ? [...new Set(base.t.vals.map((v) => v.substring(a - 1, a - 1 + n)))] : undefined;
      const sql = r.chance(0.5) ? `SUBSTRING(${base.sql}, ${a}, ${n})` : `SUBSTRING(${base.sql} FROM ${a} FOR ${n})`;
      return { sql, t: { k: 'str', nul: base.t.nul, vals, pats: vals ? undefined : ['%a%', 'C%', '%1', '%e%'] }, hc: true };
    }
    if (what === 'text') return this.textFn(scope, base, depth);
    if (what === 'case') {
      const p = this.pred(scope, 2, false);
      const b = this.str(scope, depth + 1);
      const c1 = strConst(r, base.t);
      // ELSE another string expression, a constant, or nothing (NULL).
      const other = r.int(0, 3);
      const vals = base.t.vals && (other !== 0 || b.t.vals) ? [...base.t.vals, ...(other === 0 ? b.t.vals : [c1])] : undefined;
      return {
        sql: `CASE WHEN ${p.sql} THEN ${base.sql}${other === 0 ? ` ELSE ${b.sql}` : other === 3 ? '' : ` ELSE ${quote(c1)}`} END`,
        t: { k: 'str', nul: base.t.nul || other === 3, vals, pats: base.t.pats ?? b.t.pats },
        hc: true,
      };
    }
    return base;
  }
  // A function that makes new text of base (upper, ||, lpad...); vals
  // (the values it can take) follow base's where that stays small.
  textFn(scope, base, depth) {
    const r = this.r;
    const fn = r.pick(W.textFn);
    const map = (f) => (base.t.vals ? [...new Set(base.t.vals.map(f))] : undefined);
    const pad = (v, n, fill, left) => (v.length >= n ? v.slice(0, n) : left ? v.padStart(n, fill) : v.padEnd(n, fill));
    const t = (vals, o = {}) => ({ k: 'str', nul: base.t.nul, vals, pats: vals ? undefined : ['%A%', '%e%', 'C%', '%1'], ...o });
    switch (fn) {
      case 'upper': return { sql: `upper(${base.sql})`, t: t(map((v) => v.toUpperCase())), hc: true };
      case 'lower': return { sql: `lower(${base.sql})`, t: t(map((v) => v.toLowerCase())), hc: true };
      case 'reverse': return { sql: `reverse(${base.sql})`, t: t(map((v) => [...v].reverse().join(''))), hc: true };
      case 'repeat': {
        const n = r.int(0, 3);
        return { sql: `repeat(${base.sql}, ${n})`, t: t(map((v) => v.repeat(n))), hc: true };
      }
      case 'replace': {
        const from = r.one(['A', 'e', 'ER', 'ly', ' ']), to = r.one(['', '#', 'xyz']);
        return { sql: `replace(${base.sql}, ${quote(from)}, ${quote(to)})`, t: t(map((v) => v.split(from).join(to))), hc: true };
      }
      case 'regexpReplace': {
        const x = r.one(REGEXP_REPLACES);
        const flags = x.flags ? `, ${quote(x.flags)}` : '';
        return { sql: `regexp_replace(${base.sql}, ${quote(x.pat)}, ${quote(x.repl)}${flags})`, t: t(map((v) => v.replace(x.js, x.jsRepl))), hc: true };
      }
      case 'lpad':
      case 'rpad': {
        const n = r.int(1, 12), fill = r.one(['*', '-+', ' ']);
        return { sql: `${fn}(${base.sql}, ${n}, ${quote(fill)})`, t: t(map((v) => pad(v, n, fill, fn === 'lpad'))), hc: true };
      }
      case 'concatWs': {
        const b = depth >= 1 ? strConst(r, base.t) : null;
        const other = b === null ? this.str(scope, depth + 1) : { sql: quote(b), t: { k: 'str' } };
        return { sql: `concat_ws('/', ${base.sql}, ${other.sql})`, t: { k: 'str', nul: false, pats: ['%/%', '%A%', 'C%'] }, hc: true };
      }
      default: {   // ||: with a constant, or another string expression
        if (depth >= 1 || r.chance(0.5)) {
          const k = r.one(['-', '!', 'x', '']);
          const front = r.chance(0.5);
          return { sql: front ? `${quote(k)} || ${paren(base)}` : `${paren(base)} || ${quote(k)}`, t: t(map((v) => (front ? k + v : v + k))), hc: true };
        }
        const b = this.str(scope, depth + 1);
        return { sql: `${paren(base)} || ${paren(b)}`, t: { k: 'str', nul: base.t.nul || b.t.nul, pats: ['%A%', '%e%', 'C%', '%1'] }, hc: true };
      }
    }
  }
  // An expression of one kind family (for UNION branches and IN lists).
  ofKind(scope, k) {
    const fam = family(k);
    if (NUMERIC.has(k)) return this.num(scope, 0, fam);
    if (k === 'str') return this.str(scope);
    if (k === 'date') return this.anyCol(scope, (c) => c.k === 'date') ?? { sql: "date '1995-06-17'", t: { k: 'date', lo: 0, hi: 0 } };
    return { ...this.pred(scope, 1, false), t: { k: 'bool' } };
  }

  // ---- predicates
  pred(scope, depth = 0, allowSub = true) {
    const r = this.r;
    for (let tries = 0; tries < 10; tries++) {
      let what = r.pick(W.pred);
      if (depth >= 2 && ['and', 'or', 'not', 'sub'].includes(what)) continue;
      if (what === 'sub' && !allowSub) continue;
      const p = this.predOf(what, scope, depth, allowSub);
      if (p) return p;
    }
    const e = this.anyCol(scope, (c) => c.k !== 'bool') ?? { sql: '1', t: {} };
    return { sql: `${e.sql} IS NOT NULL`, t: { k: 'bool' } };
  }
  // A value expression that reads a column, of a kind the scope has.
  operand(scope) {
    const r = this.r;
    const has = (k) => this.columns(scope, (c) => (k === 'num' ? isNum(c) : c.k === k)).length > 0;
    const w = { num: has('num') ? 5 : 0, str: has('str') ? 3 : 0, date: has('date') ? 2 : 0 };
    if (!w.num && !w.str && !w.date) return this.num(scope, 1);
    const k = r.pick(w);
    for (let i = 0; i < 4; i++) {
      const e = k === 'num' ? this.num(scope, 1) : k === 'str' ? this.str(scope, 1) : this.anyCol(scope, (c) => c.k === 'date');
      if (e.hc) return e;
    }
    return this.anyCol(scope, (c) => (k === 'num' ? isNum(c) : c.k === k));
  }
  constFor(e) {
    const r = this.r;
    // Now and then a fractional constant for an integer (mixed-type comparison).
    if (isNum(e.t) && family(e.t.k) === 'integer' && e.t.hi - e.t.lo >= 1 && r.chance(W.fracConst)) return `${numConst(r, e.t).sql}.5`;
    if (isNum(e.t)) return numConst(r, e.t).sql;
    if (e.t.k === 'date') return dateConst(r, e.t);
    return quote(strConst(r, e.t));
  }
  predOf(what, scope, depth, allowSub) {
    const r = this.r;
    const op = () => r.one(['=', '<>', '<', '<=', '>', '>=', '!=']);
    switch (what) {
      case 'cmp': {
        const e = this.operand(scope);
        // Equality only where values repeat: listed strings, integer columns.
        const eq = (e.t.k === 'str' && (e.t.vals || e.t.gen)) || (e.simple && family(e.t.k) === 'integer');
        const o = eq && r.chance(0.5) ? r.one(['=', '<>', '!=']) : r.one(['<', '<=', '>', '>=', '<>']);
        return { sql: `${e.sql} ${o} ${this.constFor(e)}` };
      }
      case 'colcmp': {
        const a = this.operand(scope);
        const b = a.t.k === 'str' ? this.str(scope, 1) : a.t.k === 'date' ? this.anyCol(scope, (c) => c.k === 'date') : this.num(scope, 1);
        if (!b || (a.t.k === 'date') !== (b.t.k === 'date') || (a.t.k === 'str') !== (b.t.k === 'str')) return null;
        return { sql: `${a.sql} ${op()} ${b.sql}` };
      }
      case 'between': {
        const e = this.operand(scope);
        if (e.t.k === 'str' && !e.t.vals) return null;
        let a = this.constFor(e), b = this.constFor(e);
        if (compareConst(e, a, b) > 0) [a, b] = [b, a];
        return { sql: `${e.sql}${r.chance(0.2) ? ' NOT' : ''} BETWEEN ${a} AND ${b}` };
      }
      case 'inList': {
        const e = r.chance(0.6) ? this.str(scope, 1) : this.numCol(scope);
        if (!e.hc || e.t.k === 'dbl' || (e.t.k === 'str' && !e.t.vals && !e.t.gen)) return null;
        const n = r.int(1, 5);
        const vals = [];
        for (let i = 0; i < n; i++) vals.push(e.t.k === 'str' ? quote(strConst(r, e.t)) : numConst(r, e.t).sql);
        return { sql: `${e.sql}${r.chance(0.25) ? ' NOT' : ''} IN (${vals.join(', ')})` };
      }
      case 'like': {
        const e = this.str(scope, 1);
        return { sql: `${e.sql}${r.chance(0.25) ? ' NOT' : ''} ${r.chance(0.2) ? 'ILIKE' : 'LIKE'} ${quote(likePattern(r, e.t))}` };
      }
      case 'regexp': {
        const e = this.str(scope, 1);
        const flags = r.chance(0.3) ? ", 'i'" : '';
        return { sql: `${r.chance(0.25) ? 'NOT ' : ''}regexp_like(${e.sql}, ${quote(r.one(REGEXP_LIKES))}${flags})` };
      }
      case 'isNull': {
        const nullable = this.columns(scope, () => true).filter(({ it, c }) => it.nullable || c.nul);
        const e = nullable.length && r.chance(0.8) ? this.colExpr(scope, ...Object.values(r.one(nullable))) : this.operand(scope);
        return { sql: `${e.sql} IS${r.chance(e.t.nul ? 0.5 : 0.8) ? ' NOT' : ''} NULL` };
      }
      case 'and': case 'or': {
        const a = this.pred(scope, depth + 1, allowSub), b = this.pred(scope, depth + 1, allowSub);
        return { sql: `(${a.sql} ${what.toUpperCase()} ${b.sql})` };
      }
      case 'not': return { sql: `NOT (${this.pred(scope, depth + 1, allowSub).sql})` };
      case 'sub': return this.subPred(scope);
    }
    return null;
  }

  // ---- subqueries in WHERE
  // A small SELECT over one base table (plus maybe a second joined one) whose
  // scope's parent is `outer` (for correlation).
  subFrom(outer, table) {
    const scope = { items: [this.baseItem(table)], parent: outer };
    return scope;
  }
  subFilters(scope, max = 2) {
    const out = [];
    const n = this.r.int(0, max);
    for (let i = 0; i < n; i++) out.push(this.pred(scope, 1, false).sql);
    return out;
  }
  keyCols(scope) { return this.columns(scope, (c) => c.key); }
  subPred(scope) {
    const r = this.r;
    const what = r.pick(W.subPred);
    const keys = this.keyCols(scope);
    if (what === 'inSub' || what === 'notInSub') {
      if (!keys.length) return null;
      const { it, c } = r.one(keys);
      const tables = TABLE_NAMES.filter((n) => TABLES[n].cols.some((x) => x.key === c.key));
      const inner = this.subFrom(null, r.one(tables));
      const ic = inner.items[0].cols.find((x) => x.key === c.key);
      const ie = this.colExpr(inner, inner.items[0], ic);
      const where = this.subFilters(inner);
      // NULLs in the subquery's result: x NOT IN (..., NULL) is never true.
      const withNull = r.chance(W.inSubNull);
      const item = withNull ? `CASE WHEN ${this.pred(inner, 2, false).sql} THEN ${ie.sql} END` : ie.sql;
      let sql = `SELECT ${r.chance(W.inSubDistinct) ? 'DISTINCT ' : ''}${item} FROM ${inner.items[0].table} AS ${inner.items[0].alias}`;
      if (where.length) sql += ` WHERE ${where.join(' AND ')}`;
      if (!withNull && r.chance(0.25)) sql += ` GROUP BY ${ie.sql} HAVING ${r.pick({ a: 1, b: 1 }) === 'a' ? `COUNT(*) > ${r.int(1, 8)}` : `SUM(${this.num(inner, 1).sql}) > ${r.int(1, 300)}`}`;
      return { sql: `${this.colExpr(scope, it, c).sql}${what === 'notInSub' ? ' NOT' : ''} IN (${sql})` };
    }
    if (what === 'exists' || what === 'notExists') {
      if (!keys.length) return null;
      const { it, c } = r.one(keys);
      const tables = TABLE_NAMES.filter((n) => TABLES[n].cols.some((x) => x.key === c.key));
      const inner = this.subFrom(scope, r.one(tables));
      const ii = inner.items[0];
      const ic = ii.cols.find((x) => x.key === c.key);
      const where = [`${ii.alias}.${ic.name} = ${this.ref(inner, it, c)}`];
      // Q21: a second correlation with <> on another key of the same table.
      if (ii.table === it.table && r.chance(W.existsNe)) {
        const other = ii.cols.find((x) => x.key && x.name !== ic.name);
        if (other) where.push(`${ii.alias}.${other.name} <> ${it.alias}.${other.name}`);
      }
      where.push(...this.subFilters(inner));
      if (this.extChance(W.deepCorr)) {
        const d = this.ext(() => this.deepPred(inner, scope));
        if (d) where.push(d);
      }
      const sel = r.one(['*', '1', `${ii.alias}.${ic.name}`]);
      return { sql: `${what === 'notExists' ? 'NOT ' : ''}EXISTS (SELECT ${sel} FROM ${ii.table} AS ${ii.alias} WHERE ${where.join(' AND ')})` };
    }
    if (what === 'corrAgg') {
      const a = this.corrAgg(scope);
      if (!a) return null;
      switch (r.pick(W.corrAggUse)) {
        // An aggregate without GROUP BY always gives one row (without HAVING).
        case 'exists': if (!a.having) return { sql: `${r.chance(0.5) ? 'NOT ' : ''}EXISTS ${a.sql}` }; break;
        case 'in': if (!a.having && a.t.k === 'big') return { sql: `${r.int(0, 3)}${r.chance(0.3) ? ' NOT' : ''} IN ${a.sql}` }; break;
        case 'cmpCol': {
          const o = this.anyCol(scope, (c) => isNum(c) && family(c.k) === family(a.t.k));
          if (o) return { sql: `${o.sql} ${r.one(['=', '<', '>', '<=', '>=', '<>'])} ${a.sql}` };
          break;
        }
      }
      const k = numConst(r, { ...a.t, lo: Math.max(a.t.lo, -5), hi: Math.min(a.t.hi, a.t.k === 'big' ? 6 : a.t.hi) });
      return { sql: `${a.sql} ${r.one(['=', '<', '>', '<=', '>=', '<>'])} ${k.sql}` };
    }
    // scalar subqueries: an aggregate of a numeric column of the same table
    // as an outer item, compared with that column (Q2, Q17, Q22).
    const cands = this.columns(scope, (c) => isNum(c) && !c.key).filter(({ it }) => it.table);
    if (!cands.length) return null;
    const { it, c } = r.one(cands);
    const inner = this.subFrom(what === 'corrScalar' ? scope : null, it.table);
    const ii = inner.items[0];
    const where = [];
    if (what === 'corrScalar') {
      const k = ii.cols.filter((x) => x.key);
      if (!k.length) return null;
      const kc = r.one(k);
      where.push(`${ii.alias}.${kc.name} = ${this.ref(inner, it, it.cols.find((x) => x.name === kc.name))}`);
    }
    where.push(...this.subFilters(inner, 1));
    const agg = r.one(['MIN', 'MAX', 'AVG', 'AVG']);
    const inCol = `${ii.alias}.${c.name}`;
    const factor = agg === 'AVG' && r.chance(0.5) ? `${r.one(['0.2', '0.5', '1.1', '2'])} * ` : '';
    const sub = `(SELECT ${factor}${agg}(${inCol}) FROM ${ii.table} AS ${ii.alias}${where.length ? ` WHERE ${where.join(' AND ')}` : ''})`;
    const o = agg === 'AVG' ? r.one(['<', '>', '<=', '>=']) : r.one(['=', '<', '>', '<=', '>=', '<>']);
    return { sql: `${this.colExpr(scope, it, c).sql} ${o} ${sub}` };
  }

  // ---- aggregates
  // A numeric expression that reads a column.
  numCol(scope) {
    for (let i = 0; i < 4; i++) {
      const e = this.num(scope, 1);
      if (e.hc) return e;
    }
    return this.anyCol(scope, isNum) ?? this.num(scope, 0);
  }
  agg(scope) {
    const a = this.aggPlain(scope);
    // FILTER (WHERE p) on an aggregate call (not on arithmetic over one).
    if (a && /^[A-Z_]+\(.*\)$/.test(a.sql) && !a.sql.includes(') / ') && !a.sql.includes('FILTER') &&
        this.r.chance(W.aggFilter)) {
      const p = this.pred(scope, 1, false);
      // (a FILTER makes the DISTINCT value another one: CASE WHEN p THEN x END)
      const f = (x) => x && `${x} FILTER ${p.sql}`;
      return { ...a, sql: `${a.sql} FILTER (WHERE ${p.sql})`, t: { ...a.t, nul: a.t.k !== 'big' || a.t.nul }, dx: f(a.dx), cdx: f(a.cdx) };
    }
    return a;
  }
  aggPlain(scope) {
    const r = this.r;
    const what = r.pick(W.agg);
    const rows = Math.max(1, scope.aggRows ?? scope.rows ?? 1000);
    switch (what) {
      case 'variance': {
        const e = this.numCol(scope);
        const fn = r.one(['STDDEV_SAMP', 'STDDEV_POP', 'VAR_SAMP', 'VAR_POP']);
        const span = Math.max(Math.abs(e.t.lo ?? 0), Math.abs(e.t.hi ?? 0));
        return { sql: `${fn}(${e.sql})`, t: { k: 'dbl', lo: 0, hi: fn.startsWith('VAR') ? span * span : span, nul: true } };
      }
      case 'ordered': {
        const how = r.pick(W.orderedAgg);
        // Not 0 with DESC: DuckDB 1.5 then gives the smallest value (PostgreSQL the first in the order).
        const dir = r.chance(0.3) ? ' DESC' : '';
        const frac = r.one(dir ? ['0.1', '0.25', '0.5', '0.6', '0.75', '0.9', '1'] : ['0', '0.1', '0.25', '0.5', '0.6', '0.75', '0.9', '1']);
        if (how === 'cont' || how === 'median') {
          const e = this.anyCol(scope, (c) => c.k === 'int' || c.k === 'big');
          if (!e) return { sql: 'COUNT(*)', t: { k: 'big', lo: 0, hi: rows } };
          const sql = how === 'median' ? `MEDIAN(${e.sql})` : `PERCENTILE_CONT(${frac}) WITHIN GROUP (ORDER BY ${e.sql}${dir})`;
          return { sql, t: { k: 'dbl', lo: e.t.lo, hi: e.t.hi, nul: true }, os: true };
        }
        const e = this.operand(scope);
        if (how === 'mode' && e.t.k === 'dbl') return { sql: `MIN(${e.sql})`, t: { ...e.t, nul: true } };
        const sql = how === 'mode' ? `MODE() WITHIN GROUP (ORDER BY ${e.sql}${dir})`
          : `PERCENTILE_DISC(${frac}) WITHIN GROUP (ORDER BY ${e.sql}${dir})`;
        return { sql, t: { ...e.t, nul: true }, os: true };
      }
      case 'stringAgg': {
        // Ordered by the value itself: equal values join alike whatever their
        // order, so the result is one string (DISTINCT too).
        const e = this.str(scope, 1);
        // (DuckDB refuses ORDER BY a literal)
        if (e.sql.startsWith("'")) return { sql: 'COUNT(*)', t: { k: 'big', lo: 0, hi: rows } };
        const sep = r.one(["','", "' ; '", "''"]);
        const dir = r.chance(0.3) ? ' DESC' : '';
        const dist = r.chance(0.25) ? 'DISTINCT ' : '';
        return { sql: `STRING_AGG(${dist}${e.sql}, ${sep} ORDER BY ${e.sql}${dir})`, t: { k: 'str', nul: true, pats: ['%a%', '%,%', 'A%'] }, os: true };
      }
      case 'boolAgg': {
        const p = this.pred(scope, 1, false);
        return { sql: `${r.one(['BOOL_AND', 'BOOL_OR'])}(${p.sql})`, t: { k: 'bool', nul: true } };
      }
      case 'sumDistinct': {
        // SUM / AVG (DISTINCT x): dx names x (one x per query: see the grouped SELECT).
        const e = this.numCol(scope);
        if (r.chance(0.5)) return { sql: `AVG(DISTINCT ${e.sql})`, t: { k: 'dbl', lo: e.t.lo, hi: e.t.hi, nul: true }, dx: e.sql };
        const k = e.t.k === 'dec' ? 'dec' : e.t.k === 'dbl' ? 'dbl' : 'hug';
        return { sql: `SUM(DISTINCT ${e.sql})`, t: { k, s: e.t.s, lo: Math.min(0, e.t.lo * rows), hi: Math.max(0, e.t.hi * rows), nul: true, wide: k === 'dec' }, dx: e.sql };
      }
      case 'countStar': return { sql: 'COUNT(*)', t: { k: 'big', lo: 0, hi: rows } };
      case 'count': return { sql: `COUNT(${this.operand(scope).sql})`, t: { k: 'big', lo: 0, hi: rows } };
      case 'countDistinct': {
        const x = this.operand(scope).sql;
        return { sql: `COUNT(DISTINCT ${x})`, t: { k: 'big', lo: 0, hi: rows }, cdx: x };
      }
      case 'sum': {
        const e = this.numCol(scope);
        const k = e.t.k === 'dec' ? 'dec' : e.t.k === 'dbl' ? 'dbl' : 'hug';
        // A decimal sum is DECIMAL(38,s): "wide" (see unifyDecimal).
        return { sql: `SUM(${e.sql})`, t: { k, s: e.t.s, lo: Math.min(0, e.t.lo * rows), hi: Math.max(0, e.t.hi * rows), nul: true, wide: k === 'dec' } };
      }
      case 'avg': {
        const e = this.numCol(scope);
        return { sql: `AVG(${e.sql})`, t: { k: 'dbl', lo: e.t.lo, hi: e.t.hi, nul: true } };
      }
      case 'min': case 'max': {
        const e = this.operand(scope);
        return { sql: `${what.toUpperCase()}(${e.sql})`, t: { ...e.t, nul: true } };
      }
      case 'arith': {
        const a = this.agg(scope);
        if (!isNum(a.t) || a.t.k === 'dbl') return a;
        if (r.chance(0.5)) {
          const s = this.num(scope, 1);
          const sum = family(s.t.k) === 'integer' ? `CAST(SUM(${s.sql}) AS DOUBLE)` : `SUM(${s.sql})`;   // see 'div'
          return { sql: `${sum} / COUNT(*)`, t: { k: 'dbl', lo: s.t.lo, hi: s.t.hi, nul: true }, needsRows: true };
        }
        const c = smallConst(r, null);
        const e = arith(a, r.one(['+', '-', '*']), c, r);
        return e && fits(e.t) ? (a.dx ? { ...e, dx: a.dx } : e) : a;
      }
    }
    return null;
  }

  // ---- window functions
  // A window function call. g: in a grouped SELECT, {keys, aggs}: its
  // operands are group keys and aggregates (windows run after GROUP BY).
  winItem(scope, g) {
    const r = this.r;
    const rows = Math.max(1, g ? 30 : (scope.rows ?? 1000));
    const pickOp = (numeric) => {
      if (g) {
        const pool = [...g.keys, ...g.aggs].filter((e) => !numeric || isNum(e.t));
        return pool.length ? r.one(pool) : null;
      }
      return numeric ? this.numCol(scope) : this.operand(scope);
    };
    const part = [];
    for (let i = Number(r.pick(W.winPart)); i > 0; i--) {
      const k = g ? (g.keys.length ? r.one(g.keys) : null) : this.groupKey(scope);
      if (k && !part.some((x) => x.sql === k.sql)) part.push(k);
    }
    // No DOUBLE order keys: peers are equal values, and a last-bit
    // difference between the engines would change them.
    const order = [];
    for (let i = Number(r.pick(W.winOrder)); i > 0; i--) {
      const k = pickOp(false);
      if (k && k.t.k !== 'dbl' && !order.some((x) => x.sql === k.sql)) order.push(k);
    }
    const fn = r.pick(W.winFn);
    let call, t;
    switch (fn) {
      case 'rank': case 'denseRank':
        call = fn === 'rank' ? 'RANK()' : 'DENSE_RANK()';
        t = { k: 'big', lo: 1, hi: rows };
        break;
      case 'percentRank': case 'cumeDist':
        call = fn === 'percentRank' ? 'PERCENT_RANK()' : 'CUME_DIST()';
        t = { k: 'dbl', lo: 0, hi: 1 };
        break;
      case 'countStar': call = 'COUNT(*)'; t = { k: 'big', lo: 0, hi: rows }; break;
      case 'count': call = `COUNT(${(pickOp(false) ?? { sql: '1' }).sql})`; t = { k: 'big', lo: 0, hi: rows }; break;
      case 'sum': case 'avg': {
        const e = pickOp(true);
        if (!e) return null;
        if (fn === 'avg') {
          call = `AVG(${e.sql})`;
          t = { k: 'dbl', lo: e.t.lo, hi: e.t.hi, nul: true };
        } else {
          const k = e.t.k === 'dec' ? 'dec' : e.t.k === 'dbl' ? 'dbl' : 'hug';
          t = { k, s: e.t.s, lo: Math.min(0, (e.t.lo ?? 0) * rows), hi: Math.max(0, (e.t.hi ?? 0) * rows), nul: true, wide: k === 'dec' };
          if (!fits(t)) return null;
          call = `SUM(${e.sql})`;
        }
        break;
      }
      default: {
        const e = pickOp(false);
        if (!e) return null;
        call = `${fn.toUpperCase()}(${e.sql})`;
        t = { ...e.t, nul: true };
      }
    }
    const ranking = fn === 'rank' || fn === 'denseRank' || fn === 'percentRank' || fn === 'cumeDist';
    const terms = order.map((o) => `${o.sql}${r.chance(0.4) ? ' DESC' : ''}${r.chance(0.3) ? r.one([' NULLS FIRST', ' NULLS LAST']) : ''}`);
    let frame = '';
    if (!ranking) {
      const f = r.pick(W.winFrame);
      const key = order.length === 1 && (order[0].t.k === 'int' || order[0].t.k === 'big' || order[0].t.k === 'dec') ? order[0] : null;
      if (f === 'whole') frame = r.one([' ROWS', ' RANGE']) + ' BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING';
      else if (f === 'rangeOffset' && key) {
        const span = Math.max(1, Math.round(((key.t.hi ?? 100) - (key.t.lo ?? 0)) / 20));
        const b = () => r.one([`${r.int(0, span)} PRECEDING`, 'CURRENT ROW', `${r.int(0, span)} FOLLOWING`, 'UNBOUNDED PRECEDING', 'UNBOUNDED FOLLOWING']);
        let a = b(), z = b();
        const rankOf = (x) => (x.startsWith('UNBOUNDED P') ? 0 : x.endsWith('PRECEDING') ? 1 : x === 'CURRENT ROW' ? 2 : x.startsWith('UNBOUNDED F') ? 4 : 3);
        if (rankOf(a) > rankOf(z)) [a, z] = [z, a];
        if (a.startsWith('UNBOUNDED F')) a = 'CURRENT ROW';
        if (z.startsWith('UNBOUNDED P')) z = 'CURRENT ROW';
        frame = ` RANGE BETWEEN ${a} AND ${z}`;
      }
    }
    const parts = [];
    if (part.length) parts.push(`PARTITION BY ${part.map((p) => p.sql).join(', ')}`);
    if (terms.length) parts.push(`ORDER BY ${terms.join(', ')}`);
    return { sql: `${call} OVER (${parts.join(' ')}${frame})`, t, window: true };
  }

  // ---- SELECT
  // opts: level (nesting depth: 0 top), parent (scope for correlation),
  // derived (a FROM subquery or CTE: outputs named by level), kinds (UNION
  // branch: output kind families to match), noOrder.
  select(opts) {
    const r = this.r;
    const level = opts.level ?? 0;
    const scope = { items: [], parent: opts.parent ?? null };
    const where = [];
    const from = this.from(scope, level, where);
    scope.rows = from.rows;
    const nf = Number(r.pick(W.nFilters));
    for (let i = 0; i < nf; i++) where.push(this.pred(scope, 0, level < 2).sql);
    const prefix = ['c', 'k', 'm', 'p', 'q', 'v'][Math.min(level, 5)];
    let shape = opts.kinds ? 'plain' : r.pick(W.shape);
    const items = [];   // {sql, t, name, groupKey}
    let distinct = false, groupBy = '', having = '';
    const cols = [];
    const addItem = (e, extra = {}) => {
      const i = items.length;
      let name = `${prefix}${i}`;
      let unaliased = false;
      if (!opts.derived && level === 0 && e.simple && r.chance(W.unaliased) && !items.some((x) => x.name === e.col.name)) {
        name = e.col.name;
        unaliased = true;
      }
      items.push({ ...e, name, unaliased, ...extra });
    };
    if (shape === 'plain') {
      const n = opts.kinds ? opts.kinds.length : r.int(1, 5);
      for (let i = 0; i < n; i++) {
        if (opts.kinds) { addItem(unifyDecimal(opts.kinds[i], this.ofKind(scope, opts.kinds[i].k))); continue; }
        const what = r.pick(W.item);
        if (what === 'scalarSub' && level === 0) {
          const s = this.subPredScalarItem(scope);
          if (s) { addItem(s); continue; }
        }
        if (what === 'corrAgg' && level === 0) {
          const s = this.corrAgg(scope);
          if (s) { addItem(s); continue; }
        }
        addItem(what === 'num' || what === 'scalarSub' || what === 'corrAgg' ? this.num(scope) : what === 'str' ? this.str(scope)
          : what === 'date' ? (this.anyCol(scope, (c) => c.k === 'date') ?? this.num(scope))
            : { ...this.pred(scope, 1, false), t: { k: 'bool' } });
      }
      if (level === 0 && !opts.derived && !opts.kinds && r.chance(W.window))
        for (let i = r.int(1, 2); i > 0; i--) {
          const w = this.winItem(scope, null);
          if (w) addItem(w);
        }
      distinct = r.chance(W.distinct);
    } else {
      const nk = shape === 'global' ? 0 : r.int(1, 3);
      const keys = [];
      for (let i = 0; i < nk; i++) {
        const k = this.groupKey(scope);
        if (k && !keys.some((x) => x.sql === k.sql)) keys.push(k);
      }
      if (!keys.length) shape = 'global';
      scope.aggRows = shape === 'global' ? scope.rows : Math.min(scope.rows, 30);
      const na = r.int(1, 3);
      const aggs = [];
      for (let i = 0; i < na; i++) aggs.push(this.agg(scope));
      // SUM / AVG (DISTINCT x) of one x only, and no COUNT(DISTINCT y) of another y
      // beside it (Pista refuses both).
      const dx = aggs.find((a) => a.dx)?.dx;
      for (let i = 0; dx && i < aggs.length; i++)
        if ((aggs[i].dx && aggs[i].dx !== dx) || (aggs[i].cdx && aggs[i].cdx !== dx)) aggs[i] = { sql: 'COUNT(*)', t: { k: 'big', lo: 0, hi: Math.max(1, scope.aggRows ?? 1000) } };
      const sel = r.shuffle([...keys.map((k) => ({ ...k, groupKey: true })), ...aggs]);
      // Keys may be left out of the SELECT list when grouped by expression.
      const byPos = keys.length && r.pick(W.groupBy);
      // ROLLUP / CUBE: the keys by expression, NULL in the rows of the sets without them.
      // (Not with the same key twice under two names: DuckDB then NULLs it where PostgreSQL does not.)
      const bare = (x) => x.sql.replace(/\b[a-z]\w*\./g, "");
      const twice = keys.some((k, i) => keys.findIndex((x) => bare(x) === bare(k)) !== i);
      const sets = keys.length && !twice && (W.osWithSets > 0 || !aggs.some((a) => a.os)) && !aggs.some((a) => a.dx) &&
        r.chance(W.groupingSets) ? r.one(['ROLLUP', 'CUBE']) : null;
      if (sets) for (let i = 0; i < sel.length; i++) if (sel[i].groupKey) sel[i] = { ...sel[i], t: { ...sel[i].t, nul: true } };
      for (const e of sel) {
        if (e.groupKey && byPos === 'expr' && r.chance(0.15) && sel.length > 1) continue;
        addItem(e);
      }
      if (keys.length) {
        const parts = keys.map((k) => {
          const i = items.findIndex((x) => x.sql === k.sql);
          if (i < 0 || byPos === 'expr') return k.sql;
          if (byPos === 'position') return String(i + 1);
          return items[i].unaliased ? k.sql : items[i].name;
        });
        groupBy = sets ? ` GROUP BY ${sets}(${keys.map((k) => k.sql).join(', ')})` : ` GROUP BY ${parts.join(', ')}`;
      }
      if (r.chance(W.having)) having = ` HAVING ${this.havingPred(scope)}`;
      if (level === 0 && !opts.derived && r.chance(W.window)) {
        const w = this.winItem(scope, { keys, aggs });
        if (w) addItem(w);
      }
    }
    for (const it of items) cols.push({ name: it.name, k: it.t.k, s: it.t.s ?? 0, wide: it.t.wide, lo: it.t.lo, hi: it.t.hi, vals: it.t.vals, pats: it.t.pats, gen: it.t.gen, nul: it.t.nul, key: it.simple ? it.col.key : undefined, d: it.simple ? it.col.d : undefined });
    const list = items.map((it) => (it.unaliased ? it.sql : `${it.sql} AS ${it.name}`)).join(', ');
    let sql = `SELECT ${distinct ? 'DISTINCT ' : ''}${list} FROM ${from.sql}`;
    if (where.length) sql += ` WHERE ${where.join(' AND ')}`;
    sql += groupBy + having;
    let rows = shape === 'global' ? 1 : shape === 'grouped' ? Math.min(from.rows, 2000) : from.rows;
    const order = { total: false, keys: [] };
    // ORDER BY: at top level, or with LIMIT in a derived table (a top-N).
    const mayOrder = !opts.noOrder && (level === 0 || (opts.derived && r.chance(0.15)));
    if (mayOrder) {
      const mode = level === 0 ? r.pick(W.order) : 'total';
      if (mode !== 'none') {
        const idx = r.shuffle(items.map((_, i) => i));
        const keys = mode === 'total' ? idx : idx.slice(0, r.int(1, Math.max(1, idx.length - 1)));
        sql += ' ORDER BY ' + keys.map((i) => this.orderTerm(items[i], i, distinct || level > 0)).join(', ');
        order.keys = keys;
        order.total = mode === 'total';
        // No LIMIT over DOUBLE values: near-ties could cut differently.
        if (order.total && (level > 0 || r.chance(W.limit)) && !items.some((it) => it.t.k === 'dbl')) {
          const n = r.int(1, 30);
          sql += ` LIMIT ${n}`;
          rows = Math.min(rows, n);
          if (r.chance(W.offset)) sql += ` OFFSET ${r.int(0, 20)}`;
        }
      }
    }
    return { sql, cols, rows, order, items };
  }
  // HAVING: an aggregate compared with a constant it can plausibly reach.
  havingPred(scope) {
    const r = this.r;
    const o = r.one(['>', '<', '>=', '<=']);
    switch (r.int(0, 2)) {
      case 0: return `COUNT(*) ${o} ${r.int(1, 10)}`;
      case 1: {
        const e = this.numCol(scope);
        return `${r.one(['AVG', 'MIN', 'MAX'])}(${e.sql}) ${o} ${numConst(r, e.t).sql}`;
      }
      default: {
        const e = this.numCol(scope);
        const hi = Math.max(1, e.t.hi * Math.min(scope.aggRows ?? 10, 10));
        return `SUM(${e.sql}) ${o} ${numConst(r, { k: e.t.k === 'dec' ? 'dec' : 'int', lo: 0, hi }).sql}`;
      }
    }
  }
  orderTerm(item, i, noExpr) {
    const r = this.r;
    let ref = r.pick(W.orderRef);
    // A bare integer literal would be read as a position.
    if (ref === 'expr' && (noExpr || item.t.k === 'bool' || /^('[^']*'|[-\d.]+)$/.test(item.sql))) ref = 'alias';
    const t = ref === 'position' ? String(i + 1) : ref === 'alias' ? item.name : item.sql;
    const dir = r.one(['', ' ASC', ' DESC']);
    const nulls = { none: '', first: ' NULLS FIRST', last: ' NULLS LAST' }[r.pick(W.nullsOrder)];
    return t + dir + nulls;
  }
  groupKey(scope) {
    const r = this.r;
    const what = r.pick(W.groupKey);
    if (what === 'extract') return this.numOf('extract', scope, 1, null);
    if (what === 'substring') {
      const s = this.anyCol(scope, (c) => c.k === 'str' && c.vals);
      if (!s) return null;
      const n = r.int(1, 4);
      return { sql: `SUBSTRING(${s.sql}, 1, ${n})`, t: { k: 'str', vals: [...new Set(s.t.vals.map((v) => v.slice(0, n)))] } };
    }
    if (what === 'case') {
      const p = this.pred(scope, 2, false);
      return { sql: `CASE WHEN ${p.sql} THEN 'yes' ELSE 'no' END`, t: { k: 'str', vals: ['yes', 'no'] } };
    }
    return this.anyCol(scope, (c) => c.k !== 'dbl' && (c.key || c.vals || c.k === 'date' || c.k === 'int' || c.k === 'dec' || r.chance(0.2)));
  }
  // An uncorrelated scalar subquery as a SELECT item.
  // A correlated aggregate subquery (no GROUP BY) over a table that shares
  // a key with an outer item: outer keys without inner rows (customers
  // without orders, rows the inner filters drop) must get COUNT's 0 and
  // NULL from the other aggregates, as in PostgreSQL and DuckDB.
  corrAgg(scope) {
    const r = this.r;
    const keys = this.keyCols(scope);
    if (!keys.length) return null;
    const { it, c } = r.one(keys);
    const tables = TABLE_NAMES.filter((n) => TABLES[n].cols.some((x) => x.key === c.key));
    const inner = this.subFrom(scope, r.one(tables));
    const ii = inner.items[0];
    const ic = ii.cols.find((x) => x.key === c.key);
    const where = [`${ii.alias}.${ic.name} = ${this.ref(inner, it, c)}`];
    if (r.chance(W.corrSecondKey)) {
      const more = it.cols.filter((x) => x.key && x.key !== c.key && ii.cols.some((y) => y.key === x.key));
      if (more.length) {
        const c2 = r.one(more);
        where.push(`${ii.alias}.${ii.cols.find((y) => y.key === c2.key).name} = ${this.ref(inner, it, c2)}`);
      }
    }
    where.push(...this.subFilters(inner, 2));
    if (this.extChance(W.deepCorr)) {
      const d = this.ext(() => this.deepPred(inner, scope));
      if (d) where.push(d);
    }
    const rows = 1000;
    let agg, t;
    const numArg = () => this.numCol(inner);
    switch (r.pick(W.corrAggFn)) {
      case 'countStar': agg = 'COUNT(*)'; t = { k: 'big', lo: 0, hi: rows }; break;
      case 'count': agg = `COUNT(${this.operand(inner).sql})`; t = { k: 'big', lo: 0, hi: rows }; break;
      case 'countDistinct': agg = `COUNT(DISTINCT ${this.operand(inner).sql})`; t = { k: 'big', lo: 0, hi: rows }; break;
      case 'countPlus': {
        const k = r.int(1, 5);
        agg = `COUNT(*) ${r.one(['+', '-', '*'])} ${k}`;
        t = { k: 'big', lo: -5, hi: rows * 5 };
        break;
      }
      case 'sum': case 'coalesceSum': {
        const e = numArg();
        const k = e.t.k === 'dec' ? 'dec' : e.t.k === 'dbl' ? 'dbl' : 'hug';
        const coalesce = r.chance(0.5);
        agg = coalesce ? `COALESCE(SUM(${e.sql}), 0)` : `SUM(${e.sql})`;
        t = { k, s: e.t.s, lo: Math.min(0, e.t.lo * rows), hi: Math.max(0, e.t.hi * rows), nul: !coalesce, wide: k === 'dec' };
        break;
      }
      case 'avg': { const e = numArg(); agg = `AVG(${e.sql})`; t = { k: 'dbl', lo: e.t.lo, hi: e.t.hi, nul: true }; break; }
      default: { // min, max
        const e = numArg();
        agg = `${r.one(['MIN', 'MAX'])}(${e.sql})`;
        t = { ...e.t, nul: true };
      }
    }
    if (!fits(t)) return null;
    const having = r.chance(W.corrHaving) ? ` HAVING COUNT(*) ${r.one(['<', '>', '>=', '<=', '='])} ${r.int(0, 4)}` : '';
    if (having) t = { ...t, nul: true };
    return { sql: `(SELECT ${agg} FROM ${ii.table} AS ${ii.alias} WHERE ${where.join(' AND ')}${having})`, t, having: !!having };
  }

  subPredScalarItem(scope) {
    const r = this.r;
    const inner = this.subFrom(null, r.pick(TABLE_PICK));
    const a = this.agg(inner);
    if (a.needsRows) return null;
    const where = this.subFilters(inner, 1);
    const ii = inner.items[0];
    return { sql: `(SELECT ${a.sql} FROM ${ii.table} AS ${ii.alias}${where.length ? ` WHERE ${where.join(' AND ')}` : ''})`, t: a.t };
  }

  // ---- the whole query
  query() {
    const r = this.r;
    let sql = '';
    if (r.chance(W.withCte)) {
      const n = r.int(1, 2);
      const defs = [];
      for (let i = 0; i < n; i++) {
        const name = `w${i + 1}`;
        const q = this.select({ level: 1, derived: true, noOrder: true });
        this.ctes.push({ name, cols: q.cols, rows: q.rows });
        defs.push(`${name} AS (${q.sql})`);
      }
      sql = `WITH ${defs.join(', ')} `;
    }
    const op = r.pick(W.setop);
    if (op === 'none') {
      const q = this.select({ level: 0 });
      return { sql: sql + q.sql, order: q.order, ncols: q.cols.length };
    }
    const a = this.select({ level: 0, noOrder: true });
    const b = this.select({ level: 0, noOrder: true, kinds: a.cols });
    // UNION's duplicate removal compares DOUBLEs exactly, and a DOUBLE sum or
    // average may differ in its last bits with the order rows were added in
    // (threads), in either engine: with a DOUBLE column it is UNION ALL.
    // INTERSECT and EXCEPT compare rows the same way (they are distinct too).
    const exact = !a.cols.some((c) => c.k === 'dbl');
    const word = !exact || op === 'unionAll' ? 'UNION ALL'
      : op === 'union' ? 'UNION' : op === 'intersect' ? 'INTERSECT' : op === 'except' ? 'EXCEPT'
        : op === 'intersectAll' ? 'INTERSECT ALL' : 'EXCEPT ALL';
    sql += `${a.sql} ${word} ${b.sql}`;
    const order = { total: false, keys: [] };
    if (r.chance(0.5)) {
      const idx = r.shuffle(a.cols.map((_, i) => i));
      order.keys = idx;
      order.total = true;
      sql += ' ORDER BY ' + idx.map((i) => this.orderTerm({ ...a.items[i], t: { k: 'bool' } }, i, true)).join(', ');
      if (r.chance(W.limit) && !a.cols.some((c) => c.k === 'dbl') && !b.cols.some((c) => c.k === 'dbl')) sql += ` LIMIT ${r.int(1, 30)}`;
    }
    return { sql, order, ncols: a.cols.length };
  }
}

// The join keyword of kind (inner, left, right, full), with or without
// INNER/OUTER.
function joinWord(r, kind) {
  if (kind === 'inner') return r.chance(0.5) ? 'JOIN' : 'INNER JOIN';
  return `${kind.toUpperCase()}${r.chance(0.5) ? ' OUTER' : ''} JOIN`;
}
// Mark the items an outer join may pad with NULLs.
// A domain (the distinct outer values a LATERAL or a correlation two levels
// out reads) comes from the smallest part of the FROM holding the columns,
// below inner joins and outer joins' preserved sides only; Pista refuses one
// whose part holds a LIMIT (read twice, its rows could differ): where the
// FROM has a derived table or WITH query, only columns of tables on no
// nullable side.
function domainOk(scope, it) { return !scope.items.some((x) => x.sql) || (!!it.table && !it.nullable); }
function nullify(kind, leftItems, rightItems) {
  if (kind === 'left' || kind === 'full') for (const x of rightItems) x.nullable = true;
  if (kind === 'right' || kind === 'full') for (const x of leftItems) x.nullable = true;
}
function paren(e) { return /^[\w.#()']+$/.test(e.sql) ? e.sql : `(${e.sql})`; }
function smallConst(r, want) {
  if (want === 'integer' || (want !== 'dec' && r.chance(0.6))) {
    const v = r.int(1, 12);
    return { sql: String(v), t: { k: 'int', s: 0, lo: v, hi: v } };
  }
  const v = r.one(['0.5', '1.5', '0.25', '2.00', '0.1', '1.05']);
  return { sql: v, t: { k: 'dec', s: v.split('.')[1].length, lo: Number(v), hi: Number(v) } };
}
function arith(a, o, b, r) {
  const kinds = [a.t.k, b.t.k];
  if (kinds.some((k) => !NUMERIC.has(k))) return null;
  const k = kinds.includes('dbl') ? 'dbl' : kinds.includes('dec') ? 'dec'
    : kinds.includes('hug') ? 'hug' : kinds.includes('big') ? 'big' : 'int';
  const sa = a.t.k === 'dec' ? a.t.s : 0, sb = b.t.k === 'dec' ? b.t.s : 0;
  const s = o === '*' ? sa + sb : Math.max(sa, sb);
  let lo, hi;
  if (o === '+') { lo = a.t.lo + b.t.lo; hi = a.t.hi + b.t.hi; }
  else if (o === '-') { lo = a.t.lo - b.t.hi; hi = a.t.hi - b.t.lo; }
  else {
    const p = [a.t.lo * b.t.lo, a.t.lo * b.t.hi, a.t.hi * b.t.lo, a.t.hi * b.t.hi];
    lo = Math.min(...p); hi = Math.max(...p);
  }
  const e = { sql: `${paren(a)} ${o} ${paren(b)}`, t: { k, s, lo, hi, nul: a.t.nul || b.t.nul, wide: k === 'dec' && [a.t, b.t].some((t) => t.wide || t.k === 'hug') }, hc: a.hc || b.hc };
  return fits(e.t) ? e : null;
}
// DuckDB unifies DECIMAL(38,s1) with DECIMAL(p,s2), s2 > s1, as
// DECIMAL(38,s1): the values of the second are rounded (a UNION, a CASE).
// Pista keeps s2. Both are defensible, so the generator avoids the case:
// CASE branches must agree, UNION branches get a CAST to the first's scale.
function sameDecimalScale(a, b) {
  return !(a.k === 'dec' && b.k === 'dec' && (a.wide || b.wide) && a.s !== b.s);
}
function unifyDecimal(target, e) {
  if (sameDecimalScale(target, e.t)) return e;
  return { ...e, sql: `CAST(${e.sql} AS DECIMAL(38,${target.s}))`, t: { ...e.t, s: target.s, wide: true }, simple: false };
}
function divRange(a, b) {
  const p = [a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi];
  return { lo: Math.min(...p), hi: Math.max(...p) };
}
function compareConst(e, a, b) {
  if (isNum(e.t)) return Number(a) - Number(b);
  if (e.t.k === 'date') return dateValue(a) - dateValue(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function generate(seed, index) {
  const g = new Gen(new Rng(`${seed}:${index}`), new Rng(`${seed}:${index}:ext`));
  return g.query();
}

// ------------------------------------------------------------------ DuckDB side
async function openDuck(dir) {
  const req = createRequire(path.join(here, 'difftest.mjs'));
  const api = await import(pathToFileURL(req.resolve('@duckdb/node-api')).href);
  const instance = await api.DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  // Pista's session time zone is UTC: TIMESTAMPTZ values print with +00.
  await conn.run("SET TimeZone = 'UTC'");
  for (const t of TABLE_NAMES) {
    const file = path.join(dir, `${t}.parquet`).replace(/'/g, "''");
    await conn.run(`CREATE VIEW ${t} AS SELECT * FROM read_parquet('${file}')`);
  }
  // PostgreSQL's regexp_like, which DuckDB lacks (its flags argument must be
  // a constant, so the macro spells out the one flag the generator uses).
  await conn.run(`CREATE MACRO regexp_like(s, p) AS regexp_matches(s, p),
    (s, p, f) AS CASE WHEN f = 'i' THEN regexp_matches(s, p, 'i') ELSE regexp_matches(s, p) END`);
  return { api, conn };
}
async function runDuck(duck, sql) {
  const T = duck.api.DuckDBTypeId;
  try {
    const result = await duck.conn.run(sql);
    const types = [];
    for (let c = 0; c < result.columnCount; c++) types.push(result.columnType(c));
    const rows = [];
    for await (const chunk of result.yieldRows()) for (const row of chunk) rows.push(row.map((v, c) => cell(v, types[c], T)));
    return {
      header: result.columnNames(),
      dbl: types.map((t) => t.typeId === T.DOUBLE || t.typeId === T.FLOAT),
      rows,
    };
  } catch (e) {
    return { error: e && e.message ? e.message : String(e) };
  }
}

// ------------------------------------------------------------------ Pista side
// Pista's time limit for a query: 30 s, or SLOWDOWN times what DuckDB took
// when that is more (a generated query can be heavy for both: a correlated
// LATERAL over lineitem took DuckDB 4.4 s on SF 0.01). SLOWDOWN allows for
// the builds the suite runs: the sanitizer build and the emulated sim device.
const TIMEOUT_MS = 30000, SLOWDOWN = 12;
function pistaLimit(duckMs) {
  return Math.max(TIMEOUT_MS, Math.ceil(SLOWDOWN * duckMs));
}

function runPista(pista, dir, sql, limitMs) {
  const p = spawnSync(pista, ['--data', dir, '--answers', '-c', sql], { encoding: 'utf8', timeout: limitMs, maxBuffer: 1 << 28 });
  if (p.error && p.error.code === 'ETIMEDOUT') return { error: `timeout after ${(limitMs / 1000).toFixed(0)} s`, stderr: p.stderr };
  if (p.error) return { error: `cannot run ${pista}: ${p.error.message}` };
  if (p.signal) return { error: `killed by ${p.signal}`, stderr: p.stderr };
  if (p.status !== 0) return { error: `exit status ${p.status}`, stderr: p.stderr };
  const lines = p.stdout.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  if (!lines.length) return { error: 'no output (not even a header)', stderr: p.stderr };
  return { header: lines[0].split('|'), rows: lines.slice(1).map((l) => l.split('|')) };
}

// ------------------------------------------------------------------ comparison
function cellEq(a, b, dbl) {
  if (a === b) return true;
  if (!dbl || a === '' || b === '') return false;
  const x = Number(a), y = Number(b);
  // One unit of the printed last digit, plus the parsing noise of numbers that large.
  return Number.isFinite(x) && Number.isFinite(y) && Math.abs(x - y) <= 0.0100001 + 8 * Number.EPSILON * Math.max(Math.abs(x), Math.abs(y));
}
function rowEq(a, b, dbl) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!cellEq(a[i], b[i], dbl[i])) return false;
  return true;
}
function sortRows(rows, dbl) {
  const cmp = (x, y) => {
    for (let i = 0; i < x.length; i++) {   // exact columns first ...
      if (dbl[i]) continue;
      if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    }
    for (let i = 0; i < x.length; i++) {   // ... then doubles by value
      if (!dbl[i]) continue;
      const a = x[i] === '' ? -Infinity : Number(x[i]), b = y[i] === '' ? -Infinity : Number(y[i]);
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  };
  return rows.slice().sort(cmp);
}
// Returns null when equal, else a one-line reason.
function compare(duck, pista, order) {
  if (duck.header.join('|') !== pista.header.join('|')) return `header differs: DuckDB '${duck.header.join('|')}', Pista '${pista.header.join('|')}'`;
  for (const [i, row] of pista.rows.entries()) {
    if (row.length !== duck.header.length) return `Pista row ${i + 1} has ${row.length} fields, expected ${duck.header.length}`;
  }
  if (duck.rows.length !== pista.rows.length) return `row count differs: DuckDB ${duck.rows.length}, Pista ${pista.rows.length}`;
  const dbl = duck.dbl;
  // Rows whose DOUBLE sort keys differ in the last bits may come out in
  // either order: the sequence is checked up to the first DOUBLE key (with
  // tolerance), the rest as a multiset.
  const firstDbl = order.keys.findIndex((k) => dbl[k]);
  if (order.total && firstDbl < 0) {
    for (let i = 0; i < duck.rows.length; i++) {
      if (!rowEq(duck.rows[i], pista.rows[i], dbl)) return `row ${i + 1} differs (ordered result): DuckDB '${duck.rows[i].join('|')}', Pista '${pista.rows[i].join('|')}'`;
    }
    return null;
  }
  const keys = firstDbl < 0 ? order.keys : order.keys.slice(0, firstDbl + 1);
  if (keys.length) {
    const kd = keys.map((k) => dbl[k]);
    for (let i = 0; i < duck.rows.length; i++) {
      const a = keys.map((k) => duck.rows[i][k]), b = keys.map((k) => pista.rows[i][k]);
      if (!rowEq(a, b, kd)) return `ORDER BY keys differ at row ${i + 1}: DuckDB '${a.join('|')}', Pista '${b.join('|')}'`;
    }
  }
  const a = sortRows(duck.rows, dbl), b = sortRows(pista.rows, dbl);
  for (let i = 0; i < a.length; i++) {
    if (!rowEq(a[i], b[i], dbl)) return `rows differ (as multisets): sorted row ${i + 1} DuckDB '${a[i].join('|')}', Pista '${b[i].join('|')}'`;
  }
  return null;
}

// ------------------------------------------------------------------ driver
function usage(msg) {
  process.stderr.write(`difftest: ${msg}\nusage: node difftest.mjs --pista PATH --data DIR [--seed S] [--count N] ` +
    '[--verbose] [--only SEED:INDEX]... [--regressions FILE] [--sql-file FILE] [--print] [--duckdb-only]\n');
  process.exit(2);
}
// --set a.b=x,c=y: override weights in W (exploration; changes the queries).
function setWeights(text) {
  for (const kv of text.split(',')) {
    const [k, v] = kv.split('=');
    const pathParts = k.split('.');
    let obj = W;
    for (const p of pathParts.slice(0, -1)) obj = obj[p];
    const last = pathParts[pathParts.length - 1];
    if (!obj || !(last in obj)) usage(`--set: no weight ${k}`);
    obj[last] = Number(v);
  }
}
// The non-blank lines of a file of seeds; `#` starts a comment.
function readList(file) {
  return readFileSync(file, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
}
function head(text, n = 12) {
  const lines = text.split('\n');
  return lines.slice(0, n).join('\n') + (lines.length > n ? `\n... (${lines.length} lines)` : '');
}
const table = (res) => [res.header.join('|'), ...res.rows.map((r) => r.join('|'))].join('\n');

async function main(argv) {
  const o = { seed: 1, count: 100, only: [], verbose: false, print: false, duckOnly: false, sqlFiles: [], regs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    if (a === '--pista') o.pista = v();
    else if (a === '--data') o.data = v();
    else if (a === '--seed') o.seed = v();
    else if (a === '--count') o.count = Number(v());
    else if (a === '--only') o.only.push(v());
    else if (a === '--regressions') o.regs.push(v());
    else if (a === '--sql-file') o.sqlFiles.push(v());
    else if (a === '--set') setWeights(v());
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--print') o.print = true;
    else if (a === '--duckdb-only') o.duckOnly = true;
    else usage(`unknown option ${a}`);
  }
  // The work list: {id, sql, order}.
  const work = [];
  const addSeed = (s) => {
    const m = /^([^:]+):(\d+)$/.exec(s);
    if (!m) usage(`'${s}' is not SEED:INDEX`);
    const q = generate(m[1], Number(m[2]));
    work.push({ id: s, ...q });
  };
  for (const f of o.regs) for (const s of readList(f)) addSeed(s);
  for (const s of o.only) addSeed(s);
  for (const f of o.sqlFiles) {
    readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
      const sql = line.trim();
      if (!sql || sql.startsWith('#')) return;
      // A query in a file is compared as a multiset unless it says "-- ordered".
      work.push({ id: `${path.basename(f)} line ${i + 1}`, sql: sql.replace(/--.*$/, '').trim(), order: { total: /--\s*ordered/.test(sql), keys: [] } });
    });
  }
  if (!o.only.length && !o.regs.length && !o.sqlFiles.length) for (let i = 0; i < o.count; i++) addSeed(`${o.seed}:${i}`);
  if (o.print) {
    for (const w of work) process.stdout.write(`-- ${w.id}\n${w.sql};\n`);
    return 0;
  }
  if (!o.data) usage('--data DIR is required');
  if (!o.pista && !o.duckOnly) usage('--pista PATH is required (or --duckdb-only)');
  const duck = await openDuck(o.data);
  let passed = 0, failed = 0;
  const reasons = new Map();
  const t0 = Date.now();
  for (const w of work) {
    const tq = performance.now();
    const d = await runDuck(duck, w.sql);
    const duckMs = performance.now() - tq;
    let why = null, p = null;
    if (d.error) why = `DuckDB rejects the generated query: ${d.error.split('\n')[0]}`;
    else if (!o.duckOnly) {
      const limit = pistaLimit(duckMs);
      if (limit > TIMEOUT_MS && o.verbose) process.stdout.write(`note ${w.id}: DuckDB took ${(duckMs / 1000).toFixed(1)} s, Pista's limit is ${(limit / 1000).toFixed(0)} s\n`);
      p = runPista(o.pista, o.data, w.sql, limit);
      if (p.error) why = `Pista failed: ${p.error}${p.stderr ? `: ${p.stderr.trim().split('\n')[0]}` : ''}`;
      else why = compare(d, p, w.order);
    }
    if (!why) {
      passed++;
      if (o.verbose) process.stdout.write(`ok ${w.id} (${d.rows.length} rows)\n`);
      continue;
    }
    failed++;
    const key = why.replace(/\d+/g, 'N').slice(0, 100);
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
    process.stdout.write(`FAIL ${w.id}: ${why}\n  ${w.sql}\n`);
    if (!d.error && (o.verbose || p)) process.stdout.write(`  DuckDB:\n${head(table(d)).replace(/^/gm, '    ')}\n`);
    if (p && !p.error) process.stdout.write(`  Pista:\n${head(table(p)).replace(/^/gm, '    ')}\n`);
    if (p && p.error && p.stderr) process.stdout.write(`  Pista stderr:\n${head(p.stderr.trim(), 6).replace(/^/gm, '    ')}\n`);
  }
  if (failed && reasons.size > 1) {
    process.stdout.write('failure kinds:\n');
    for (const [k, n] of [...reasons].sort((x, y) => y[1] - x[1])) process.stdout.write(`  ${n} x ${k}\n`);
  }
  process.stdout.write(`${passed} passed, ${failed} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
    process.stderr.write(`difftest: ${e && e.stack ? e.stack : e}\n`);
    process.exit(2);
  });
}

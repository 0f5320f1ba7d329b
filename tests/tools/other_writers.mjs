#!/usr/bin/env node
// other_writers.mjs - makes the Parquet fixtures of other writers in
// tests/data/parquet/writers/ (committed; tests/sh/test_parquet_writers.sh
// reads them and compares Pista's answers with DuckDB's). Not run by the
// tests: run it by hand after changing it, with the two writers installed
// somewhere on NODE_PATH:
//
//   mkdir -p /tmp/w && cd /tmp/w && npm install hyparquet-writer@0.17.0 parquetjs-lite@0.8.7
//   NODE_PATH=/tmp/w/node_modules node tests/tools/other_writers.mjs tests/data/parquet/writers
//
// The rows are the same in every file: ROWS rows of a deterministic
// sequence (ids, signed 32- and 64-bit integers, doubles, booleans, strings
// with NULLs and multi-byte UTF-8, dates, decimals), so each file tests
// another writer's encodings of the same values.
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_PATH ?? process.cwd(), 'x.js'));
const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: node other_writers.mjs OUT_DIR\n');
  process.exit(2);
}
mkdirSync(out, { recursive: true });

const ROWS = 2500;
// A small deterministic generator (the rows must not change between runs).
let seed = 12345;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
const words = ['alpha', 'Beta', 'gämma', 'δέλτα', '漢字', '', 'x,y', 'quote"d', 'semi;colon', 'emoji 😀'];
const rows = [];
for (let i = 0; i < ROWS; i++) {
  const a = next(), b = next(), c = next();
  rows.push({
    id: i,
    i32: (a % 2000001) - 1000000,
    i64: a * 2097152 + b - 2 ** 52,   // within 2^53: parquetjs-lite writes INT64 from numbers
    dbl: i % 97 === 0 ? null : ((b % 200001) - 100000) / 64,
    flag: i % 11 === 0 ? null : c % 3 === 0,
    name: i % 13 === 0 ? null : `${words[c % words.length]}-${i % 50}`,
    day: i % 17 === 0 ? null : 7000 + (a % 12000),   // days since 1970-01-01
    amount: i % 19 === 0 ? null : (b % 20000001) - 10000000,   // DECIMAL(9,2): hundredths
  });
}
const col = (k) => rows.map((r) => r[k]);
const dateOf = (d) => (d === null ? null : new Date(d * 86400000));

// ---------------------------------------------------------------- hyparquet-writer
const hw = await import(require.resolve('hyparquet-writer'));
const hyparquet = (file, opts) => {
  const schema = [
    { name: 'root', num_children: 8 },
    { name: 'id', type: 'INT32', repetition_type: 'REQUIRED' },
    { name: 'i32', type: 'INT32', repetition_type: 'REQUIRED' },
    { name: 'i64', type: 'INT64', repetition_type: 'REQUIRED' },
    { name: 'dbl', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    { name: 'flag', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
    { name: 'name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
    { name: 'day', type: 'INT32', converted_type: 'DATE', repetition_type: 'OPTIONAL' },
    { name: 'amount', type: 'INT32', converted_type: 'DECIMAL', scale: 2, precision: 9, repetition_type: 'OPTIONAL' },
  ];
  const enc = opts.encodings ?? {};
  const columnData = [
    { name: 'id', data: col('id'), encoding: enc.id },
    { name: 'i32', data: col('i32'), encoding: enc.i32 },
    { name: 'i64', data: col('i64').map(BigInt), encoding: enc.i64 },
    { name: 'dbl', data: col('dbl'), encoding: enc.dbl },
    { name: 'flag', data: col('flag') },
    { name: 'name', data: col('name'), encoding: enc.name },
    { name: 'day', data: col('day').map(dateOf), encoding: enc.day },
    { name: 'amount', data: col('amount').map((v) => (v === null ? null : v / 100)), encoding: enc.amount },
  ].map((c) => (c.encoding ? c : { name: c.name, data: c.data }));
  const buf = hw.parquetWriteBuffer({ columnData, schema, rowGroupSize: opts.rowGroupSize ?? [1000, 100000],
                                      pageSize: opts.pageSize, codec: opts.codec, statistics: opts.statistics ?? true });
  writeFileSync(path.join(out, file), Buffer.from(buf));
};
hyparquet('hyparquet-default.parquet', {});
hyparquet('hyparquet-delta.parquet', {
  codec: 'UNCOMPRESSED', pageSize: 4096,
  encodings: { id: 'DELTA_BINARY_PACKED', i32: 'DELTA_BINARY_PACKED', i64: 'DELTA_BINARY_PACKED', day: 'DELTA_BINARY_PACKED', name: 'DELTA_LENGTH_BYTE_ARRAY' },
});
hyparquet('hyparquet-split.parquet', {
  rowGroupSize: 700, statistics: false,
  encodings: { dbl: 'BYTE_STREAM_SPLIT', i32: 'BYTE_STREAM_SPLIT', i64: 'BYTE_STREAM_SPLIT', name: 'DELTA_BYTE_ARRAY' },
});

// ---------------------------------------------------------------- parquetjs-lite
// (no DECIMAL type: its files have the other seven columns)
const pj = require('parquetjs-lite');
const parquetjs = async (file, opts) => {
  const schema = new pj.ParquetSchema({
    id: { type: 'INT32', compression: opts.codec },
    i32: { type: 'INT32', compression: opts.codec },
    i64: { type: 'INT64', compression: opts.codec },
    dbl: { type: 'DOUBLE', optional: true, compression: opts.codec },
    flag: { type: 'BOOLEAN', optional: true, compression: opts.codec },
    name: { type: 'UTF8', optional: true, compression: opts.codec },
    day: { type: 'DATE', optional: true, compression: opts.codec },
  });
  const w = await pj.ParquetWriter.openFile(schema, path.join(out, file), { useDataPageV2: opts.v2 });
  w.setRowGroupSize(opts.rowGroupSize ?? 4096);
  for (const r of rows) {
    const o = { id: r.id, i32: r.i32, i64: r.i64 };
    if (r.dbl !== null) o.dbl = r.dbl;
    if (r.flag !== null) o.flag = r.flag;
    if (r.name !== null) o.name = r.name;
    if (r.day !== null) o.day = dateOf(r.day);
    await w.appendRow(o);
  }
  await w.close();
};
await parquetjs('parquetjs-v1-snappy.parquet', { codec: 'SNAPPY', v2: false, rowGroupSize: 1000 });
await parquetjs('parquetjs-v2-gzip.parquet', { codec: 'GZIP', v2: true, rowGroupSize: 900 });
await parquetjs('parquetjs-v2-plain.parquet', { codec: 'UNCOMPRESSED', v2: true });
process.stdout.write(`wrote ${out}\n`);

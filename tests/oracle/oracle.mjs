#!/usr/bin/env node
// oracle.mjs - Pista's test oracle: run SQL on DuckDB and print the result as
// '|'-separated text with a header line, in the format of
// shared/tpch/answers/README.md, so our output can be compared with `diff`.
//
// Usage:  node tests/oracle/oracle.mjs [-c SQL | FILE.sql]
// The package comes from tests/oracle/node_modules (run tests/oracle/setup.sh).
// Several statements may be given; the result of the last one that returns rows
// is printed. Exit status: 0 ok, 1 SQL error, 2 usage error or DuckDB missing.
//
// Format: header = column names joined by '|'; one line per row, '\n' after each;
// no quoting; NULL = empty field; DECIMAL with exactly 2 fractional digits
// (rounded half away from zero on the exact value); DOUBLE/FLOAT rounded to 2
// digits (JavaScript toFixed, '-0.00' printed as '0.00'); integers as plain
// digits; DATE as YYYY-MM-DD; BOOLEAN true/false; lists as [a, b]; everything
// else as DuckDB's own text form.

// Pista's session time zone is UTC: DuckDB's TIMESTAMPTZ values in UTC too.
process.env.TZ = 'UTC';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cell } from './format.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

function fail(code, msg) {
  process.stderr.write(`oracle: ${msg}\n`);
  process.exit(code);
}

async function duckdb() {
  try {
    const req = createRequire(path.join(here, 'oracle.mjs'));
    return await import(pathToFileURL(req.resolve('@duckdb/node-api')).href);
  } catch (e) {
    fail(2, `cannot load @duckdb/node-api from ${here}/node_modules ` +
      `(run tests/oracle/setup.sh): ${e.message}`);
  }
}

async function main(argv) {
  let sql = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '-c' && i + 1 < argv.length) sql = argv[++i];
    else if (argv[i].startsWith('-')) fail(2, `usage: oracle.mjs [-c SQL | FILE.sql] (bad option ${argv[i]})`);
    else sql = readFileSync(argv[i], 'utf8');
  }
  if (sql === null) fail(2, 'usage: oracle.mjs [-c SQL | FILE.sql]');

  const api = await duckdb();
  const T = api.DuckDBTypeId;
  const instance = await api.DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  // Pista's session time zone is UTC: TIMESTAMPTZ values print with +00.
  await conn.run("SET TimeZone = 'UTC'");
  const stmts = await conn.extractStatements(sql);
  let last = null;
  for (let i = 0; i < stmts.count; i++) {
    const result = await (await stmts.prepare(i)).run();
    if (result.returnType === api.ResultReturnType.QUERY_RESULT) last = result;
  }
  if (last) {
    const types = [];
    for (let c = 0; c < last.columnCount; c++) types.push(last.columnType(c));
    let out = last.columnNames().join('|') + '\n';
    for await (const rows of last.yieldRows()) {
      for (const row of rows) out += row.map((v, c) => cell(v, types[c], T)).join('|') + '\n';
    }
    process.stdout.write(out);
  }
  conn.closeSync?.();
  instance.closeSync?.();
}

main(process.argv.slice(2)).catch((e) => fail(1, e && e.message ? e.message : String(e)));

#!/usr/bin/env node
// scan_vs_duckdb.mjs - the DuckDB side of `pista bench scan`: run one SQL
// query on an in-memory DuckDB with `SET threads = N` and time it inside
// this process (startup, loading the package and connecting excluded): one
// untimed warm-up run, then the best of R runs.
//
// Usage: node bench/scan_vs_duckdb.mjs --threads N [--runs R] [--setup SQL] --sql SQL
// --setup: statements run once before the warm-up, untimed (e.g. CREATE VIEW
// lineitem AS SELECT * FROM read_parquet(...) for each table of a benchmark).
// Prints one line:  best_s=<seconds> cpu_s=<process CPU seconds of that run>
//                   runs=<R> version=<DuckDB version> rows=<result rows>
//                   result=<first row, '|'-joined>
// Exit status: 0 ok, 1 SQL error, 2 usage error, 3 @duckdb/node-api missing.
// The package is taken from $DUCKDB_NODE_API_DIR (a node_modules folder) or
// else from tests/oracle/node_modules next to this script (tests/oracle/setup.sh).

import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function fail(code, msg) {
  process.stderr.write(`scan_vs_duckdb: ${msg}\n`);
  process.exit(code);
}

async function loadDuckdb() {
  const dir = process.env.DUCKDB_NODE_API_DIR || path.join(here, '..', 'tests', 'oracle', 'node_modules');
  try {
    const req = createRequire(path.join(dir, 'bench.js'));
    return await import(pathToFileURL(req.resolve('@duckdb/node-api')).href);
  } catch (e) {
    fail(3, `cannot load @duckdb/node-api from ${dir} (run tests/oracle/setup.sh ` +
      `or set DUCKDB_NODE_API_DIR): ${e.message}`);
  }
}

async function main(argv) {
  let threads = 0, runs = 3, sql = null, setup = null;
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--threads' && v) { threads = Number(v); i++; }
    else if (argv[i] === '--runs' && v) { runs = Number(v); i++; }
    else if (argv[i] === '--sql' && v) { sql = v; i++; }
    else if (argv[i] === '--setup' && v) { setup = v; i++; }
    else fail(2, `usage: scan_vs_duckdb.mjs --threads N [--runs R] [--setup SQL] --sql SQL (bad argument ${argv[i]})`);
  }
  if (!sql || !Number.isInteger(threads) || threads < 1 || !Number.isInteger(runs) || runs < 1)
    fail(2, 'usage: scan_vs_duckdb.mjs --threads N [--runs R] --sql SQL');

  const api = await loadDuckdb();
  const db = await api.DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await db.connect();
  await conn.run(`SET threads = ${threads}`);
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  if (setup) await conn.run(setup);

  let best = Infinity, bestCpu = 0, row = null, nrows = 0;
  for (let r = 0; r <= runs; r++) {          // r == 0: warm-up, not timed
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const reader = await conn.runAndReadAll(sql);
    const secs = Number(process.hrtime.bigint() - t0) * 1e-9;
    const cpu = process.cpuUsage(c0);
    const rows = reader.getRows();
    row = rows[0] || [];
    nrows = rows.length;
    if (r > 0 && secs < best) {
      best = secs;
      bestCpu = (cpu.user + cpu.system) * 1e-6;
    }
  }
  const text = row.map((v) => (v === null ? '' : String(v))).join('|');
  process.stdout.write(`best_s=${best.toFixed(6)} cpu_s=${bestCpu.toFixed(6)} runs=${runs} ` +
    `version=${version} rows=${nrows} result=${text}\n`);
  conn.closeSync?.();
  db.closeSync?.();
}

main(process.argv.slice(2)).catch((e) => fail(1, e && e.message ? e.message : String(e)));

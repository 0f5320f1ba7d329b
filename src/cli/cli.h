/*
 * cli.h - the `pista` program's commands. Each command lives in its own
 * cmd_<name>.c, takes the arguments after its name, prints its own output and
 * returns the process exit status (0 ok, 1 failure, 2 usage error).
 */
#ifndef PISTA_CLI_H
#define PISTA_CLI_H

#include "core/core.h"
#include "exec/exec.h"

#include <stdio.h>

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

int cli_cmd_bench(int argc, char **argv);     /* cmd_bench.c */
int cli_cmd_devices(int argc, char **argv);   /* cmd_devices.c */
int cli_bench_io(int argc, char **argv);      /* cmd_bench_io.c: `bench io` */
int cli_bench_net(int argc, char **argv);
int cli_bench_join(int argc, char **argv);
int cli_bench_scan(int argc, char **argv);    /* cmd_bench_scan.c: `bench scan` */
int cli_cmd_gen(int argc, char **argv);       /* cmd_gen.c */
int cli_cmd_tpch(int argc, char **argv);      /* cmd_tpch.c */
int cli_cmd_parquet(int argc, char **argv);   /* cmd_parquet.c */
int cli_parquet_cat(int argc, char **argv);   /* cmd_parquet_cat.c: `parquet cat` */
int cli_parquet_write_test(int argc, char **argv); /* cmd_parquet_write.c: `parquet write-test` */
int cli_parquet_copy(int argc, char **argv);       /* cmd_parquet_write.c: `parquet copy` */
int cli_cmd_shell(int argc, char **argv);     /* cmd_shell.c: `pista [options]`, the SQL shell */

/* DuckDB timing for the benchmarks (duckdb.c): the best of `runs` runs of
 * sql with `threads` threads, timed inside node after a warm-up. 0 ok; -1
 * with why[] set when node, the package or the script is missing or the
 * query failed. rows is the first field of the first result row, n_rows the
 * number of result rows (-1 if the script did not say). With setup (may be
 * NULL), those statements run once before the warm-up, untimed. */
typedef struct cli_duckdb_result {
    double seconds, cpu_seconds;
    int64_t rows;
    int64_t n_rows;
    char version[32];
    char first_row[512];
} cli_duckdb_result;
bool cli_duckdb_available(void);
int cli_duckdb_time(const char *sql, int threads, int runs, cli_duckdb_result *r, char *why, size_t why_cap);
int cli_duckdb_time_setup(const char *setup, const char *sql, int threads, int runs, cli_duckdb_result *r,
                          char *why, size_t why_cap);
int cli_bench_engine(int argc, char **argv);  /* cmd_bench_engine.c: `bench engine` */
int cli_bench_tpch(int argc, char **argv);    /* cmd_bench_tpch.c: `bench tpch` */
int cli_bench_kernels(int argc, char **argv); /* cmd_bench_kernels.c: `bench kernels` */

/* Result printing (print.c). TABLE: aligned columns with full values, NULL
 * shown as NULL, a row count line; CSV: RFC 4180 with a header line, every
 * value in full, NULL an empty field and the empty string "" (sep between
 * fields, 0: ','); ANSWERS: exactly the TPC-H answers format
 * (ex_result_write_csv; sep 0: '|'); JSON: one object per row. Returns 0,
 * or -1 when writing failed or memory ran out. */
typedef enum cli_print_mode {
    CLI_PRINT_TABLE, CLI_PRINT_CSV, CLI_PRINT_JSON, CLI_PRINT_ANSWERS, CLI_PRINT_MARKDOWN
} cli_print_mode;
typedef struct cli_print_opts {
    cli_print_mode mode;
    char sep;            /* CSV and answers: between fields; 0 the mode's */
    int max_width;       /* table: fit this many terminal columns; 0 no limit */
    int64_t max_rows;    /* table and markdown: at most this many rows (first and last halves); 0 all */
} cli_print_opts;
int cli_print_result(const ex_result *r, const cli_print_opts *o, FILE *f);
const char *cli_print_mode_name(cli_print_mode mode);
/* "table", "csv", "json", "answers", "markdown" -> *out; -1 for anything else. */
int cli_print_mode_parse(const char *text, cli_print_mode *out);

/* Print "pista: <message>" for err to stderr; returns 1. */
int cli_fail(const pa_err *err);
/* Print a usage error to stderr; returns 2. */
int cli_usage(const char *fmt, ...) PA_PRINTF(1, 2);

/* Shared option parsing: if argv[*i] is one of the global options
 * (--device X, --memory-limit X, --threads N), consume it (and its value),
 * advance *i and return 1; return 0 if not an option of ours, -1 (with a
 * message printed) on a bad value. */
typedef struct cli_global {
    const char *device;      /* --device / PISTA_DEVICE, default "auto" */
    uint64_t memory_limit;   /* --memory-limit / PISTA_MEMORY_LIMIT, 0 = default */
    int threads;             /* --threads, 0 = all cores */
    const char *page_decode; /* --page-decode / PISTA_PAGE_DECODE: auto, host, device */
} cli_global;
void cli_global_defaults(cli_global *g);
int cli_global_option(cli_global *g, int argc, char **argv, int *i);

#endif

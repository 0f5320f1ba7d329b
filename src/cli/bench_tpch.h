/*
 * bench_tpch.h - shared between the two files of `pista bench tpch`:
 * cmd_bench_tpch.c (options, the runs, the table on stdout) and
 * cmd_bench_tpch_out.c (page-cache eviction, tpch.csv, tpch.png).
 */
#ifndef PISTA_CLI_BENCH_TPCH_H
#define PISTA_CLI_BENCH_TPCH_H

#include "core/core.h"

/* One query's measurements. Times are seconds of sql_execute (plan + run),
 * negative when not measured (an error, or no DuckDB). */
typedef struct bt_query {
    int q;                    /* 1..22 */
    bool ok;                  /* ran without error */
    int64_t rows;             /* result rows */
    double cold_s, warm_s;
    double plan_s;            /* parse + bind + optimise + lower, of the best warm run */
    int64_t bytes_read;       /* storage bytes of the best warm run (ex_result counters) */
    double duck_s;            /* DuckDB's best warm time, < 0 when not run */
    int64_t duck_rows;        /* DuckDB's result rows, -1 when unknown */
    char check[48];           /* "ok", "DIFFERENT (line N)", "no answer file", "" unchecked */
    char error[256];          /* the error message when !ok */
} bt_query;

/* Drop every regular file under dir (and its table folders) from the OS page
 * cache: fdatasync, then posix_fadvise(POSIX_FADV_DONTNEED). *files and
 * *bytes count what was found; *resident is how many of those bytes the page
 * cache still holds afterwards (mincore), -1 if that could not be measured.
 * Returns 0, or -1 with errno's message in why when dir cannot be read. */
int bt_evict_dir(const char *dir, int64_t *files, int64_t *bytes, int64_t *resident, char *why, size_t why_cap);

/* The whole of a file as a NUL-terminated string (pa_free it); NULL when it
 * cannot be read or memory runs out. */
char *bt_read_file(const char *path);

/* Compare result text csv with dir/qNN.csv byte for byte; out gets "ok",
 * "DIFFERENT (line N)" (N: the first line that differs, 1 = header) or "no
 * answer file". True when equal. */
bool bt_check_answer(const char *dir, int q, const char *csv, char *out, size_t cap);

/* DuckDB statements creating one view per TPC-H table over
 * read_parquet(DIR/<t>.parquet), or DIR/<t>/ *.parquet for a folder of parts,
 * into out (truncated at cap). */
void bt_duckdb_views(const char *data, char *out, size_t cap);

/* mkdir -p. 0 or -1 (errno set). */
int bt_mkdirs(const char *path);

/* out_dir/tpch.csv: a header and one row per query. 0, or -1 with why. */
int bt_write_csv(const char *out_dir, const bt_query *qs, int n, char *why, size_t why_cap);

/* out_dir/tpch.png: warm time per query, pista next to DuckDB (when
 * measured), through gnuplot. 0 written; 1 gnuplot is not installed; -1
 * gnuplot failed (why set). */
int bt_plot(const char *out_dir, const bt_query *qs, int n, const char *title, char *why, size_t why_cap);

#endif

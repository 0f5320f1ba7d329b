/*
 * cmd_parquet_write.c - `pista parquet write-test DIR` (hidden, for tests):
 * writes Parquet files with the writer (every type, NULLs none/some/all,
 * every codec, data page v1/v2, small pages and row groups, dictionary
 * fallback, 0 rows) and, next to each, SQL for DuckDB plus the answer we
 * expect, computed here from the generator rather than from the file:
 *   <case>.data.sql / .data.expected      every value (answer format, and
 *                                         exact: %.17g doubles, full-scale decimals)
 *   <case>.meta.sql / .meta.expected      parquet_metadata(): rows, codec, encodings
 *   <case>.stats.sql / .stats.expected    chunk statistics vs DuckDB's own min/max
 *   <case>.filter.sql / .filter.expected  counts under predicates DuckDB prunes with
 *   <case>.schema.sql / .schema.expected  parquet_schema()
 * DIR/cases lists the case names. tests/sh/test_parquet_write_oracle.sh runs it.
 */
#include "cli/cli.h"
#include "storage/storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_ID, C_BOOL, C_INT, C_BIGINT, C_DOUBLE, C_DEC15, C_DEC9, C_DATE, C_STR, N_COLS };
static const char *names[N_COLS] = {"id", "b", "i", "l", "d", "m", "m9", "dt", "s"};
/* Whether a column's values repeat enough for a dictionary (see gen_*). */
static const bool low_card[N_COLS] = {false, false, true, false, false, true, false, true, true};

static pa_type col_type(int k)
{
    static const pa_type t[N_COLS] = {
        {PA_TYPE_BIGINT, 0, 0}, {PA_TYPE_BOOLEAN, 0, 0}, {PA_TYPE_INTEGER, 0, 0},
        {PA_TYPE_BIGINT, 0, 0}, {PA_TYPE_DOUBLE, 0, 0}, {PA_TYPE_DECIMAL, 15, 2},
        {PA_TYPE_DECIMAL, 9, 3}, {PA_TYPE_DATE, 0, 0}, {PA_TYPE_VARCHAR, 0, 0}};
    return t[k];
}

typedef struct wcase {
    const char *name;
    int32_t codec;
    int page_version;
    int null_mode;             /* 0 none (REQUIRED columns), 1 some, 2 all */
    int64_t rows, rg_rows;
    uint64_t page_bytes, dict_bytes;
    bool fallback;             /* strings: repeating, then all distinct */
    bool defaults;             /* pq_writer_options_init only */
    bool no_dict;              /* one-value pages: a dictionary never pays off */
    bool crc;                  /* page CRCs */
} wcase;

static const wcase cases[] = {
    {"required_snappy_v1", PQ_CODEC_SNAPPY, 1, 0, 5000, 2000, 1 << 20, 1 << 20, false, false, false, false},
    {"some_null_zstd_v1", PQ_CODEC_ZSTD, 1, 1, 5000, 2000, 1 << 20, 1 << 20, false, false, false, false},
    {"all_null_gzip_v2", PQ_CODEC_GZIP, 2, 2, 3000, 2000, 1 << 20, 1 << 20, false, false, false, false},
    {"some_null_lz4raw_v2", PQ_CODEC_LZ4_RAW, 2, 1, 5000, 2000, 1 << 20, 1 << 20, false, false, false, false},
    {"some_null_plain_small", PQ_CODEC_UNCOMPRESSED, 1, 1, 5600, 700, 100, 1 << 20, false, false, false, false},
    {"required_snappy_v2_small", PQ_CODEC_SNAPPY, 2, 0, 3000, 1000, 300, 1 << 20, false, false, false, false},
    {"one_value_pages_zstd_v2", PQ_CODEC_ZSTD, 2, 1, 300, 128, 1, 1 << 20, false, false, true, false},
    {"some_null_brotli_v2", PQ_CODEC_BROTLI, 2, 1, 5000, 2000, 1 << 20, 1 << 20, false, false, false, false},
    {"required_brotli_v1_small", PQ_CODEC_BROTLI, 1, 0, 3000, 1000, 300, 1 << 20, false, false, false, false},
    {"crc_snappy_v2_small", PQ_CODEC_SNAPPY, 2, 1, 3000, 1000, 300, 1 << 20, false, false, false, true},
    {"crc_plain_v1", PQ_CODEC_UNCOMPRESSED, 1, 1, 3000, 3000, 1 << 20, 1 << 20, false, false, false, true},
    {"fallback_zstd_v1", PQ_CODEC_ZSTD, 1, 1, 8000, 8000, 4096, 2048, true, false, false, false},
    {"defaults", 0, 1, 1, 5000, 1 << 20, 1 << 20, 1 << 20, false, true, false, false},
    {"empty", PQ_CODEC_SNAPPY, 1, 1, 0, 2000, 1 << 20, 1 << 20, false, false, false, false},
};

/* ------------------------------------------------------------ generator */

static bool gen_null(const wcase *c, int k, int64_t i)
{
    if (k == C_ID)
        return false;
    return c->null_mode == 2 || (c->null_mode == 1 && (i + k) % 5 == 1);
}

static int64_t gen_int(int k, int64_t i)
{
    switch (k) {
    case C_ID: return i;
    case C_BOOL: return i % 3 == 0;
    case C_INT: return i == 3 ? INT32_MIN : i == 4 ? INT32_MAX : (i * 37) % 100 - 50;
    case C_BIGINT: return i == 5 ? INT64_MIN : i == 6 ? INT64_MAX : i * 1000003 - 500000000000;
    case C_DEC15: return i == 9 ? 999999999999999 : i == 10 ? -999999999999999 : (i % 50) * 1234567 - 30000000;
    case C_DEC9: return i == 11 ? 999999999 : (i * 7919) % 1999999999 - 999999999;
    case C_DATE: return i == 12 ? pa_date_from_ymd(1, 1, 1) : i == 13 ? pa_date_from_ymd(9999, 12, 31)
                                                             : 18000 + i % 100;
    default: return 0;
    }
}

static double gen_double(int64_t i)
{
    switch (i) {
    case 7: return 1e300;
    case 8: return -1e300;
    case 14: return 5e-324;
    case 15: return 0.125;
    default: break;
    }
    if (i % 101 == 0)
        return -0.0;
    if (i % 101 == 50)
        return 0.0;
    return ((double)i - 1000) * 0.37;
}

/* String of row i (no '|' or newline: the oracle's format has no quoting). */
static size_t gen_str(const wcase *c, int64_t i, char *buf)
{
    if (c->fallback)   /* 30 repeating values, then all distinct */
        return (size_t)(i < c->rows / 3 ? sprintf(buf, "key-%lld", (long long)(i % 30))
                                         : sprintf(buf, "unique-%08lld-x", (long long)i));
    if (i % 7 == 0)
        return 0;
    if (i % 50 == 1) {
        for (int k = 0; k < 200; k++)
            buf[k] = (char)('a' + (i % 3 + k) % 26);
        return 200;
    }
    if (i % 13 == 2)
        return (size_t)sprintf(buf, "\xe6\x97\xa5\xe6\x9c\xac-%lld", (long long)(i % 31));
    return (size_t)sprintf(buf, "v%lld", (long long)(i % 97));
}

typedef struct batch {
    pa_column cols[N_COLS];
} batch;

static void batch_free(batch *b)
{
    for (int k = 0; k < N_COLS; k++) {
        free(b->cols[k].data);
        free(b->cols[k].offsets);
        free(b->cols[k].validity);
    }
}

static int batch_make(const wcase *c, batch *b, int64_t first, int64_t n)
{
    memset(b, 0, sizeof *b);
    for (int k = 0; k < N_COLS; k++) {
        pa_column *col = &b->cols[k];
        col->type = col_type(k);
        col->length = n;
        int w = pa_type_bytes(col->type);
        col->validity = calloc((size_t)n / 8 + 1, 1);
        col->offsets = k == C_STR ? calloc((size_t)n + 1, sizeof *col->offsets) : NULL;
        col->data = k == C_STR ? malloc((size_t)n * 200 + 1) : calloc((size_t)n + 1, (size_t)w);
        if (!col->validity || !col->data || (k == C_STR && !col->offsets))
            return 1;
        int32_t pos = 0;
        for (int64_t r = 0; r < n; r++) {
            int64_t i = first + r;
            if (!gen_null(c, k, i))
                col->validity[r / 8] |= (uint8_t)(1u << (r % 8));
            if (k == C_STR) {
                if (!gen_null(c, k, i))
                    pos += (int32_t)gen_str(c, i, (char *)col->data + pos);
                col->offsets[r + 1] = pos;
            } else if (k == C_DOUBLE) {
                ((double *)col->data)[r] = gen_double(i);
            } else if (w == 1) {
                ((uint8_t *)col->data)[r] = (uint8_t)gen_int(k, i);
            } else if (w == 4) {
                ((int32_t *)col->data)[r] = (int32_t)gen_int(k, i);
            } else {
                ((int64_t *)col->data)[r] = gen_int(k, i);
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------- expectations */

static FILE *open_out(const char *dir, const char *name, const char *ext)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (!f)
        perror(path);
    return f;
}

static const char *sql_type(int k, char *buf, size_t cap)
{
    return pa_type_format(col_type(k), buf, cap);
}

static void write_data(const wcase *c, const char *file, FILE *sql, FILE *exp)
{
    fprintf(sql, "select id");
    fprintf(exp, "id");
    for (int k = 1; k < N_COLS; k++) {
        fprintf(sql, ", \"%s\"", names[k]);
        fprintf(exp, "|%s", names[k]);
        if (k == C_DOUBLE) {
            fprintf(sql, ", printf('%%.17g', \"d\") as d_x");
            fprintf(exp, "|d_x");
        } else if (k == C_DEC15 || k == C_DEC9) {
            fprintf(sql, ", \"%s\"::varchar as %s_x", names[k], names[k]);
            fprintf(exp, "|%s_x", names[k]);
        }
    }
    fprintf(sql, " from read_parquet('%s') order by id;\n", file);
    fprintf(exp, "\n");
    for (int64_t first = 0; first < c->rows; first += 1000) {
        int64_t n = c->rows - first < 1000 ? c->rows - first : 1000;
        batch b;
        if (batch_make(c, &b, first, n) != 0) {
            batch_free(&b);
            return;
        }
        for (int64_t r = 0; r < n; r++) {
            char buf[512];   /* 1e300 in answer format has 301 digits */
            for (int k = 0; k < N_COLS; k++) {
                pa_format_value(&b.cols[k], r, PA_FMT_ANSWER, buf, sizeof buf);
                fprintf(exp, "%s%s", k ? "|" : "", buf);
                if (k == C_DOUBLE || k == C_DEC15 || k == C_DEC9) {
                    pa_format_value(&b.cols[k], r, PA_FMT_FULL, buf, sizeof buf);
                    fprintf(exp, "|%s", buf);
                }
            }
            fprintf(exp, "\n");
        }
        batch_free(&b);
    }
}

static int64_t n_row_groups(const wcase *c) { return (c->rows + c->rg_rows - 1) / c->rg_rows; }

static const char *codec_of(const wcase *c)
{
    pq_writer_options o;
    pq_writer_options_init(&o);
    return pq_codec_name(c->defaults ? o.codec : c->codec);
}

/* Encodings we intend: PLAIN values (or dictionary page), RLE levels for
 * OPTIONAL columns, RLE_DICTIONARY for repeating values. */
static void write_meta(const wcase *c, const char *file, FILE *sql, FILE *exp)
{
    fprintf(sql, "select row_group_id, column_id, path_in_schema, type, row_group_num_rows, num_values, "
                 "compression, encodings from parquet_metadata('%s') order by row_group_id, column_id;\n", file);
    fprintf(exp, "row_group_id|column_id|path_in_schema|type|row_group_num_rows|num_values|compression|encodings\n");
    static const char *phys[N_COLS] = {"INT64", "BOOLEAN", "INT32", "INT64", "DOUBLE", "INT64", "INT32",
                                       "INT32", "BYTE_ARRAY"};
    for (int64_t g = 0; g < n_row_groups(c); g++) {
        int64_t rows = c->rows - g * c->rg_rows < c->rg_rows ? c->rows - g * c->rg_rows : c->rg_rows;
        for (int k = 0; k < N_COLS; k++) {
            bool nullable = c->null_mode != 0 && k != C_ID;
            bool dict = c->null_mode != 2 && !c->no_dict && low_card[k];
            fprintf(exp, "%lld|%d|%s|%s|%lld|%lld|%s|PLAIN%s%s\n", (long long)g, k, names[k], phys[k],
                    (long long)rows, (long long)rows, codec_of(c), nullable ? ", RLE" : "",
                    dict ? ", RLE_DICTIONARY" : "");
        }
    }
}

static void write_stats(const wcase *c, const char *file, FILE *sql, FILE *exp)
{
    fprintf(sql, "with m as (select row_group_id as rg, path_in_schema as col, stats_min_value as mn, "
                 "stats_max_value as mx, stats_null_count as nc, min_is_exact as mne, max_is_exact as mxe "
                 "from parquet_metadata('%s')),\n"
                 "d as (select *, file_row_number // %lld as rg from read_parquet('%s', file_row_number = true))\n"
                 "select rg, col, ok from (\n", file, (long long)c->rg_rows, file);
    for (int k = 0; k < N_COLS; k++) {
        char t[32];
        sql_type(k, t, sizeof t);
        const char *n = names[k];
        fprintf(sql, "%s  select a.rg, '%s' as col, (m.nc = a.nc and ((a.mn is null and m.mn is null) or ", k ? "  union all\n" : "", n);
        if (k == C_STR)
            fprintf(sql, "(((m.mne and m.mn = a.mn) or (not m.mne and m.mn < a.mn)) and "
                         "((m.mxe and m.mx = a.mx) or (not m.mxe and m.mx > a.mx))))) as ok\n");
        else
            fprintf(sql, "(m.mne and m.mxe and cast(m.mn as %s) = a.mn and cast(m.mx as %s) = a.mx))) as ok\n", t, t);
        fprintf(sql, "  from (select rg, min(\"%s\") as mn, max(\"%s\") as mx, count(*) - count(\"%s\") as nc "
                     "from d group by rg) a join m on m.rg = a.rg and m.col = '%s'\n", n, n, n, n);
    }
    fprintf(sql, ") order by rg, col;\n");
    fprintf(exp, "rg|col|ok\n");
    const char *sorted[N_COLS];
    memcpy(sorted, names, sizeof sorted);
    for (int a = 0; a < N_COLS; a++)   /* the order of `order by col` */
        for (int b = a + 1; b < N_COLS; b++)
            if (strcmp(sorted[b], sorted[a]) < 0) {
                const char *t = sorted[a];
                sorted[a] = sorted[b];
                sorted[b] = t;
            }
    for (int64_t g = 0; g < n_row_groups(c); g++)
        for (int k = 0; k < N_COLS; k++)
            fprintf(exp, "%lld|%s|true\n", (long long)g, sorted[k]);
}

/* Counts under predicates whose row groups DuckDB skips by their statistics. */
static void write_filter(const wcase *c, const char *file, FILE *sql, FILE *exp)
{
    int64_t n_i = 0, n_l = 0, n_dt = 0, n_s = 0, n_m = 0, n_d = 0;
    int32_t dt_lim = 18000 + 90;
    for (int64_t i = 0; i < c->rows; i++) {
        char s[256];
        size_t len = gen_str(c, i, s);
        n_i += !gen_null(c, C_INT, i) && gen_int(C_INT, i) > 40;
        n_l += !gen_null(c, C_BIGINT, i) && gen_int(C_BIGINT, i) < -499000000000;
        n_dt += !gen_null(c, C_DATE, i) && gen_int(C_DATE, i) >= dt_lim;
        n_s += !gen_null(c, C_STR, i) && len == 3 && memcmp(s, "v42", 3) == 0;
        n_m += !gen_null(c, C_DEC15, i) && gen_int(C_DEC15, i) > 2000000000;
        n_d += !gen_null(c, C_DOUBLE, i) && gen_double(i) >= 1000.0;
    }
    char date[16];
    int y, mo, d;
    pa_date_to_ymd(dt_lim, &y, &mo, &d);
    snprintf(date, sizeof date, "%04d-%02d-%02d", y, mo, d);
    fprintf(sql, "select (select count(*) from read_parquet('%s') where \"i\" > 40) as i,\n"
                 "  (select count(*) from read_parquet('%s') where \"l\" < -499000000000) as l,\n"
                 "  (select count(*) from read_parquet('%s') where \"dt\" >= DATE '%s') as dt,\n"
                 "  (select count(*) from read_parquet('%s') where \"s\" = 'v42') as s,\n"
                 "  (select count(*) from read_parquet('%s') where \"m\" > 20000000.00) as m,\n"
                 "  (select count(*) from read_parquet('%s') where \"d\" >= 1000.0) as d;\n",
            file, file, file, date, file, file, file);
    fprintf(exp, "i|l|dt|s|m|d\n%lld|%lld|%lld|%lld|%lld|%lld\n", (long long)n_i, (long long)n_l,
            (long long)n_dt, (long long)n_s, (long long)n_m, (long long)n_d);
}

static void write_schema(const wcase *c, const char *file, FILE *sql, FILE *exp)
{
    fprintf(sql, "select name, type, repetition_type, converted_type, scale, precision, logical_type, "
                 "duckdb_type from parquet_schema('%s') where name <> 'schema';\n", file);
    fprintf(exp, "name|type|repetition_type|converted_type|scale|precision|logical_type|duckdb_type\n");
    /* DuckDB prints IntType's int8 bitWidth as a character: 32 is ' '. */
    static const char *rows[N_COLS] = {
        "id|INT64|%s|||||BIGINT",
        "b|BOOLEAN|%s|||||BOOLEAN",
        "i|INT32|%s|INT_32|||IntType(bitWidth= , isSigned=1)|INTEGER",
        "l|INT64|%s|||||BIGINT",
        "d|DOUBLE|%s|||||DOUBLE",
        "m|INT64|%s|DECIMAL|2|15|DecimalType(scale=2, precision=15)|DECIMAL(15,2)",
        "m9|INT32|%s|DECIMAL|3|9|DecimalType(scale=3, precision=9)|DECIMAL(9,3)",
        "dt|INT32|%s|DATE|||DateType()|DATE",
        "s|BYTE_ARRAY|%s|UTF8|||StringType()|VARCHAR"};
    for (int k = 0; k < N_COLS; k++) {
        fprintf(exp, rows[k], c->null_mode && k != C_ID ? "OPTIONAL" : "REQUIRED");
        fprintf(exp, "\n");
    }
}

/* ------------------------------------------------------------ the files */

static int write_case(const wcase *c, const char *dir)
{
    char file[1024];
    snprintf(file, sizeof file, "%s/%s.parquet", dir, c->name);
    pq_writer_options o;
    pq_writer_options_init(&o);
    if (!c->defaults) {
        o.codec = c->codec;
        o.page_crc = c->crc;
        o.data_page_version = c->page_version;
        o.row_group_rows = c->rg_rows;
        o.page_bytes = c->page_bytes;
        o.dictionary_bytes = c->dict_bytes;
    }
    pq_write_column d[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        d[k] = (pq_write_column){names[k], col_type(k), c->null_mode != 0 && k != C_ID};
    pa_err err;
    pa_err_init(&err);
    pq_writer *w = NULL;
    int rc = pq_writer_create(file, d, N_COLS, &o, &w, &err);
    /* Unaligned batches: rows cross row-group boundaries inside one call. */
    for (int64_t first = 0; rc == PA_OK && first < c->rows; first += 777) {
        int64_t n = c->rows - first < 777 ? c->rows - first : 777;
        batch b;
        if (batch_make(c, &b, first, n) != 0) {
            batch_free(&b);
            pq_writer_abort(w);
            fprintf(stderr, "pista: out of memory\n");
            return 1;
        }
        rc = pq_writer_write(w, b.cols, n, &err);
        batch_free(&b);
        if (rc != PA_OK)
            pq_writer_abort(w);
    }
    if (rc == PA_OK)
        rc = pq_writer_close(w, &err);
    if (rc != PA_OK) {
        int r = cli_fail(&err);
        pa_err_close(&err);
        return r;
    }
    pa_err_close(&err);
    static const char *kinds[] = {"data", "meta", "stats", "filter", "schema"};
    for (int k = 0; k < 5; k++) {
        char ext[32];
        snprintf(ext, sizeof ext, "%s.sql", kinds[k]);
        FILE *sql = open_out(dir, c->name, ext);
        snprintf(ext, sizeof ext, "%s.expected", kinds[k]);
        FILE *exp = open_out(dir, c->name, ext);
        if (sql && exp) {
            switch (k) {
            case 0: write_data(c, file, sql, exp); break;
            case 1: write_meta(c, file, sql, exp); break;
            case 2: write_stats(c, file, sql, exp); break;
            case 3: write_filter(c, file, sql, exp); break;
            default: write_schema(c, file, sql, exp); break;
            }
        }
        bool bad = !sql || !exp;
        if (sql && fclose(sql) != 0)
            bad = true;
        if (exp && fclose(exp) != 0)
            bad = true;
        if (bad) {
            fprintf(stderr, "pista: cannot write the expectations of %s in %s\n", c->name, dir);
            return 1;
        }
    }
    return 0;
}

int cli_parquet_write_test(int argc, char **argv)
{
    if (argc != 1)
        return cli_usage("usage: pista parquet write-test DIR");
    const char *dir = argv[0];
    char path[1024];
    snprintf(path, sizeof path, "%s/cases", dir);
    FILE *list = fopen(path, "w");
    if (!list) {
        perror(path);
        return 1;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (write_case(&cases[i], dir) != 0) {
            fclose(list);
            return 1;
        }
        fprintf(list, "%s\n", cases[i].name);
        printf("wrote %s/%s.parquet (%lld rows)\n", dir, cases[i].name, (long long)cases[i].rows);
    }
    return fclose(list) == 0 ? 0 : 1;
}

/* `pista parquet copy IN OUT [--row-group-rows N]` (hidden, for tests): the
 * rows of IN, scanned on the cpu device, written to OUT by the writer with
 * the columns' engine types: a round trip DuckDB can check (the time types'
 * in tests/sh/test_parquet_time_oracle.sh). */
int cli_parquet_copy(int argc, char **argv)
{
    if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--row-group-rows")))
        return cli_usage("usage: pista parquet copy IN OUT [--row-group-rows N]");
    pa_err err;
    pa_err_init(&err);
    dv_device *dev = NULL;
    pq_scan *scan = NULL;
    pq_writer *w = NULL;
    pq_write_column *cols = NULL;
    int rc;
    dv_options dopt = {.spec = "cpu"};
    const char *in = argv[0];
    if ((rc = dv_open(&dopt, &dev, &err)) != PA_OK)
        goto done;
    pq_scan_options so;
    pq_scan_options_init(&so);
    so.paths = &in;
    so.n_paths = 1;
    so.device = dev;
    if ((rc = pq_scan_open(&so, &scan, &err)) != PA_OK)
        goto done;
    int n = pq_scan_n_columns(scan);
    if (!(cols = calloc((size_t)(n ? n : 1), sizeof *cols))) {
        rc = pa_error(&err, PA_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        cols[i] = (pq_write_column){pq_scan_column_name(scan, i), pq_scan_column_type(scan, i), true};
    pq_writer_options wo;
    pq_writer_options_init(&wo);
    if (argc == 4)
        wo.row_group_rows = strtoll(argv[3], NULL, 10);
    if ((rc = pq_writer_create(argv[1], cols, (uint32_t)n, &wo, &w, &err)) != PA_OK)
        goto done;
    for (;;) {
        dv_chunk *c;
        if ((rc = pq_scan_next(scan, &c, &err)) != PA_OK || !c)
            break;
        rc = pq_writer_write(w, c->columns, c->length, &err);
        dv_chunk_destroy(c);
        if (rc != PA_OK)
            break;
    }
    if (rc == PA_OK) {
        rc = pq_writer_close(w, &err);
        w = NULL;
    }
done:
    if (rc != PA_OK)
        cli_fail(&err);
    if (w)
        pq_writer_abort(w);
    free(cols);
    pq_scan_close(scan);
    if (dev)
        dv_close(dev);
    io_engine_shared_shutdown();
    pq_meta_cache_clear();
    pa_err_close(&err);
    return rc == PA_OK ? 0 : 1;
}

/*
 * tpch.h - TPC-H: a data generator byte-identical to dbgen 2.17 and the 22
 * query texts. The whole public surface of src/tpch (prefix tp_).
 *
 * Generation is unit based. A *unit* is one row of the table's driving
 * generator: one row for region, nation, supplier, customer, part and orders;
 * one PART for partsupp (4 rows each) and one ORDER for lineitem (1..7 rows).
 * Every unit depends only on its index (dbgen's per-row seed boundaries), so
 * any unit range can be generated on its own, in any order, on any thread.
 *
 * Rows come out as typed column batches (tp_batch) that a Parquet writer can
 * consume; tp_batch_format_tbl turns them into dbgen's .tbl text. tp_write
 * drives both for whole tables, in parallel, into .tbl or Parquet files.
 */
#ifndef PISTA_TPCH_H
#define PISTA_TPCH_H

#include "core/core.h"
#include "storage/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ tables */

/* X(ID, name). The order is the order tp_write writes tables in. */
#define TP_TABLE_LIST(X)                                                      \
    X(REGION, "region")                                                       \
    X(NATION, "nation")                                                       \
    X(SUPPLIER, "supplier")                                                   \
    X(CUSTOMER, "customer")                                                   \
    X(PART, "part")                                                           \
    X(PARTSUPP, "partsupp")                                                   \
    X(ORDERS, "orders")                                                       \
    X(LINEITEM, "lineitem")

typedef enum tp_table {
#define TP__TBL(id, name) TP_##id,
    TP_TABLE_LIST(TP__TBL)
#undef TP__TBL
    TP_TABLE__COUNT
} tp_table;

#define TP_ALL_TABLES ((1u << TP_TABLE__COUNT) - 1u)

/* "lineitem"; NULL for a bad id. */
const char *tp_table_name(tp_table t);
/* Look a table up by its name ("lineitem"); PA_EINVAL with a message listing
 * the valid names otherwise. */
int tp_table_from_name(const char *name, tp_table *out, pa_err *err);
/* Parse a comma-separated table list ("orders,lineitem" or "all") into a bit
 * mask (1u << tp_table). PA_EINVAL with a message on an unknown name. */
int tp_table_mask_parse(const char *list, unsigned *mask, pa_err *err);

/* ----------------------------------------------------------------- columns
 *
 * Column names and engine types, as in the TPC-H schema (clause 1.4) with the
 * types of shared/tpch/README.md:
 *
 *   region    r_regionkey INTEGER, r_name VARCHAR, r_comment VARCHAR
 *   nation    n_nationkey INTEGER, n_name VARCHAR, n_regionkey INTEGER, n_comment VARCHAR
 *   supplier  s_suppkey INTEGER, s_name VARCHAR, s_address VARCHAR, s_nationkey INTEGER,
 *             s_phone VARCHAR, s_acctbal DECIMAL(15,2), s_comment VARCHAR
 *   customer  c_custkey INTEGER, c_name VARCHAR, c_address VARCHAR, c_nationkey INTEGER,
 *             c_phone VARCHAR, c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR
 *   part      p_partkey INTEGER, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR,
 *             p_type VARCHAR, p_size INTEGER, p_container VARCHAR,
 *             p_retailprice DECIMAL(15,2), p_comment VARCHAR
 *   partsupp  ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER,
 *             ps_supplycost DECIMAL(15,2), ps_comment VARCHAR
 *   orders    o_orderkey BIGINT, o_custkey INTEGER, o_orderstatus VARCHAR,
 *             o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority VARCHAR,
 *             o_clerk VARCHAR, o_shippriority INTEGER, o_comment VARCHAR
 *   lineitem  l_orderkey BIGINT, l_partkey INTEGER, l_suppkey INTEGER,
 *             l_linenumber INTEGER, l_quantity DECIMAL(15,2),
 *             l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2),
 *             l_tax DECIMAL(15,2), l_returnflag VARCHAR, l_linestatus VARCHAR,
 *             l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE,
 *             l_shipinstruct VARCHAR, l_shipmode VARCHAR, l_comment VARCHAR
 *
 * Storage in a batch: INTEGER and DATE as int32_t (DATE = days since
 * 1970-01-01), BIGINT and DECIMAL(15,2) as int64_t (DECIMAL scaled by 100:
 * 123.45 is 12345, l_quantity 17 is 1700), VARCHAR as int32_t offsets (n+1)
 * into a byte array. No column holds a NULL.
 */
#define TP_MAX_COLUMNS 16

typedef struct tp_column_info {
    const char *name;     /* "l_orderkey" */
    pa_type type;         /* engine type */
    int max_len;          /* VARCHAR: longest value dbgen can produce; else 0 */
} tp_column_info;

/* Number of columns of t (0 for a bad id); *cols points at a static array. */
int tp_table_columns(tp_table t, const tp_column_info **cols);

typedef struct tp_column {
    const tp_column_info *info;
    void *values;         /* int32_t[] or int64_t[] (see above); NULL for VARCHAR */
    int32_t *offsets;     /* VARCHAR: n_rows + 1 entries, offsets[0] = 0 */
    char *bytes;          /* VARCHAR: the concatenated values (not NUL-terminated) */
    int64_t bytes_cap_;   /* internal */
} tp_column;

/* A batch of rows of one table. The caller embeds it: tp_batch_init, then any
 * number of tp_gen_batch calls (each replaces the contents and reuses the
 * memory), then tp_batch_close. */
typedef struct tp_batch {
    tp_table table;
    int n_columns;
    int64_t n_rows;
    int64_t rows_cap_;    /* internal */
    tp_column cols[TP_MAX_COLUMNS];
} tp_batch;

void tp_batch_init(tp_batch *b, tp_table t);
void tp_batch_close(tp_batch *b);

/* Typed access (no checks beyond an assert-free bounds contract: col < n_columns,
 * row < n_rows, and the column has the matching type). */
static inline int32_t tp_batch_i32(const tp_batch *b, int col, int64_t row)
{ return ((const int32_t *)b->cols[col].values)[row]; }
static inline int64_t tp_batch_i64(const tp_batch *b, int col, int64_t row)
{ return ((const int64_t *)b->cols[col].values)[row]; }
static inline const char *tp_batch_str(const tp_batch *b, int col, int64_t row, int32_t *len)
{
    const tp_column *c = &b->cols[col];
    *len = c->offsets[row + 1] - c->offsets[row];
    return c->bytes + c->offsets[row];
}

/* ------------------------------------------------------------- generator */

typedef struct tp_gen tp_gen;

/* Create a generator for scale factor sf (> 0). Row counts follow dbgen
 * exactly: for sf < 1 the base counts are scaled by (int)(1000 * sf) / 1000
 * (so 0.0105 acts as 0.010) and at least 1 row; for sf >= 1 dbgen uses the
 * integer part (1.5 acts as 1: tp_gen_effective_sf tells). Scale factors from
 * 30000 on use dbgen's 64-bit random streams, which this generator does not
 * implement: PA_EUNSUPPORTED. Builds (or shares) the 300 MiB text pool, which
 * takes about a second of one core, on every online CPU. Free with
 * tp_gen_destroy. Thread-safe after create. */
int tp_gen_create(double sf, tp_gen **out, pa_err *err);
/* The same, building the text pool with up to `threads` threads (<= 0: the
 * online CPUs); the pool is the same whatever the number. */
int tp_gen_create_ex(double sf, int threads, tp_gen **out, pa_err *err);
void tp_gen_destroy(tp_gen *g);

/* The scale factor dbgen actually uses for sf (0.01, 1, ...). */
double tp_gen_effective_sf(const tp_gen *g);
/* Number of units of table t (see top of file): rows, except partsupp (parts)
 * and lineitem (orders). */
int64_t tp_gen_units(const tp_gen *g, tp_table t);
/* Exact row count of t; for lineitem this is an estimate (4 * orders) since the
 * true count is known only after generation. */
int64_t tp_gen_rows_estimate(const tp_gen *g, tp_table t);

/* Generate units [first, first + n) (0-based unit indices, so the first row of
 * a table is unit 0) of table t into out (whose table must be t), replacing
 * its contents. If child is not NULL and t is TP_PART or TP_ORDERS, the
 * partsupp or lineitem rows of the same units go into child (one pass for
 * both). PA_EINVAL for a range outside [0, units), PA_ENOMEM; on error the
 * batches hold no rows. */
int tp_gen_batch(const tp_gen *g, tp_table t, int64_t first, int64_t n,
                 tp_batch *out, tp_batch *child, pa_err *err);

/* ------------------------------------------------------------ .tbl format */

/* Upper bound of the .tbl bytes of rows [begin, end) of b. */
size_t tp_tbl_bound(const tp_batch *b, int64_t begin, int64_t end);
/* Write rows [begin, end) of b in dbgen's .tbl format into out (at least
 * tp_tbl_bound bytes). Returns the number of bytes written. */
size_t tp_batch_format_tbl(const tp_batch *b, int64_t begin, int64_t end, char *out);

/* -------------------------------------------------------------- writing */

typedef enum tp_format { TP_FORMAT_TBL, TP_FORMAT_PARQUET } tp_format;

/* Progress of one table, reported after every chunk written. */
typedef struct tp_progress {
    tp_table table;
    int64_t rows;                 /* written so far for this table */
    int64_t bytes;                /* .tbl: text bytes so far; Parquet: bytes of the
                                     files closed so far */
    int64_t in_bytes;             /* column bytes generated so far (see tp_write_stats) */
    int64_t units_done, units;    /* of this table's selected range */
    double seconds;               /* since this table's first chunk started */
    bool done;                    /* last report for this table */
} tp_progress;
typedef void (*tp_progress_fn)(void *user, const tp_progress *p);

typedef struct tp_write_opts {
    const char *out_dir;      /* NULL: generate and format, write nowhere (bench;
                                 .tbl only: Parquet needs a folder) */
    tp_format format;         /* TP_FORMAT_TBL or TP_FORMAT_PARQUET */
    /* Parquet writer options (codec, row group and page size, page version,
     * dictionary); NULL = tp_parquet_defaults. Only read during tp_write. */
    const pq_writer_options *parquet;
    unsigned tables;          /* mask of tables, 0 = all */
    int threads;              /* worker threads, <= 0: online CPUs */
    int parts;                /* 0 or 1: one file per table, DIR/<table>.<ext>;
                                 N > 1: DIR/<table>/<table>.<i>.<ext>, i < N
                                 (ext = tbl or parquet) */
    int part;                 /* with parts > 1: -1 = every part, else only this one */
    tp_progress_fn progress;  /* optional; called from worker threads, serialised */
    void *progress_user;
} tp_write_opts;

/* Per-table result of tp_write. */
typedef struct tp_write_stats {
    int64_t rows[TP_TABLE__COUNT];
    int64_t bytes[TP_TABLE__COUNT];    /* output: .tbl text bytes, or Parquet file bytes */
    int64_t in_bytes[TP_TABLE__COUNT]; /* generated column bytes: values of fixed-width
                                          columns plus string bytes (no offsets) */
    double seconds[TP_TABLE__COUNT];   /* first chunk start to last chunk end */
    double write_seconds[TP_TABLE__COUNT]; /* spent in its files' writers (.tbl: write(2);
                                          Parquet: encoding, compression, I/O), summed
                                          over its files; one file is written by one
                                          thread at a time, so for one file this is a
                                          lower bound of `seconds` */
    double total_seconds;              /* whole call, text pool excluded */
} tp_write_stats;

void tp_write_opts_defaults(tp_write_opts *o);

/* The Parquet options `pista gen tpch` uses unless told otherwise: the
 * writer's defaults (pq_writer_options_init: LZ4_RAW, 2^20-row row groups,
 * 1 MiB pages, version-1 data pages, dictionary where it pays, statistics and
 * page index). See README, "TPC-H data". */
void tp_parquet_defaults(pq_writer_options *o);

/* Generate the selected tables and write them. Parts split each table into
 * consecutive unit ranges (part i holds units [U*i/N, U*(i+1)/N)), so the
 * lineitem rows of part i are exactly those of the orders of part i, and the
 * concatenation of the parts is the whole table. Output is identical for any
 * thread count, byte for byte also for Parquet (a row group ends after a fixed
 * number of rows or bytes, never where a thread's range ends). Workers
 * generate ranges concurrently; every output file has its own writer, fed in
 * row order by whichever worker is free, so different files (orders and
 * lineitem, or parts) are encoded in parallel. Creates out_dir (and the
 * per-table folders) if needed and overwrites existing files; a Parquet file
 * appears under its name only when complete. stats may be NULL. PA_EIO with
 * the path on a file error, PA_EINVAL for bad options, the writer's errors. */
int tp_write(const tp_gen *g, const tp_write_opts *o, tp_write_stats *stats, pa_err *err);

/* Unit range [*first, *first + *n) of part `part` of `parts` of table t. */
void tp_part_range(const tp_gen *g, tp_table t, int parts, int part, int64_t *first, int64_t *n);

/* ---------------------------------------------------------------- bench
 *
 * Generate every table at scale factor sf with `threads` workers, one table
 * at a time (so each table's time is its own), then all tables in one run,
 * and report per table: rows, bytes, seconds. .tbl text is formatted in
 * memory and discarded; Parquet files are written into `dir` (required for
 * TP_FORMAT_PARQUET) and removed afterwards. The text pool build time is
 * reported apart. Hook: `pista bench gen` or `pista gen tpch --bench`.
 */
typedef struct tp_bench_result {
    double sf;
    int threads;
    tp_format format;
    double pool_seconds;          /* building the text pool */
    tp_write_stats stats;         /* per table, each generated alone */
    tp_write_stats all;           /* every table in one run (total_seconds: its time) */
} tp_bench_result;

/* po: Parquet options, NULL = tp_parquet_defaults. */
int tp_bench_gen(double sf, int threads, tp_format format, const char *dir,
                 const pq_writer_options *po, tp_bench_result *out, pa_err *err);

/* -------------------------------------------------------------- queries */

/* Write query n (1..22) into a new string (caller frees with pa_free).
 * seed == 0: the specification's validation parameters (the text of
 * shared/tpch/queries/qNN.sql). seed != 0: parameters drawn from the
 * substitution domains of spec clause 2.4.n.3 with a generator seeded by
 * seed (the same seed always gives the same text). sf (> 0) only sets Q11's
 * FRACTION = 0.0001 / sf when a seed is given. PA_EINVAL for a bad n. */
int tp_query_text(int n, uint64_t seed, double sf, char **out, pa_err *err);

/* ------------------------------------------------ hand-built plans (plans.c)
 *
 * Physical plans for Q1, Q3, Q6 and Q18 with the validation parameters over
 * data_dir/<table>.parquet (or data_dir/<table>/, a directory of parts):
 * the engine's end-to-end checks until SQL plans the query texts. The
 * result columns are named as in the answers. */
typedef struct ex_plan ex_plan;
typedef struct ex_op ex_op;
bool tp_plan_available(int query);
/* Build query's plan into plan; *root is its top operator. */
int tp_plan_build(int query, const char *data_dir, ex_plan *plan, ex_op **root, pa_err *err);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_TPCH_H */

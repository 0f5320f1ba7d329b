/*
 * exec.h - the execution engine: the whole public surface of src/exec.
 *
 * A caller (the SQL front end, a test, a benchmark) builds a physical plan:
 * a tree of operators made by the ex_<operator> builders below, each taking
 * its input operator(s) and returning the new one. Expressions are trees made
 * by the ex_expr_* builders, over the output columns of an operator's input
 * (by index). ex_run cuts the plan into pipelines at the breakers (hash-join
 * build, aggregate, sort), runs them on a device with worker threads and
 * bounded queues, and returns the result rows in host memory plus statistics.
 *
 * Ownership: operators and expressions belong to their ex_plan and are freed
 * with it (ex_plan_destroy). A plan runs at most once.
 */
#ifndef PISTA_EXEC_H
#define PISTA_EXEC_H

#include "core/core.h"
#include "device/device.h"
#include "storage/storage.h"
#include "net/net.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ex_plan ex_plan;
typedef struct ex_op ex_op;
typedef struct ex_result ex_result;
typedef struct ex_expr ex_expr;

/* ------------------------------------------------------------------- plans */

int ex_plan_create(ex_plan **out, pa_err *err);
void ex_plan_destroy(ex_plan *p);

/* What EXPLAIN calls op (cut to the label's size). */
void ex_op_set_label(ex_op *op, const char *label);
/* The planner's estimate of op's output rows, shown by ex_explain as
 * "~N rows" (rows < 0 or NaN clears it). */
void ex_op_set_estimate(ex_op *op, double rows);

/* Output schema of an operator. Names point into the plan. */
int ex_op_columns(const ex_op *op);
const char *ex_op_column_name(const ex_op *op, int i);
pa_type ex_op_column_type(const ex_op *op, int i);
/* Index of the output column called name, or -1. */
int ex_op_find_column(const ex_op *op, const char *name);

/* ------------------------------------------------------------- expressions
 *
 * Built bottom-up over the output columns of the operator they will be
 * given to (by index); types are derived at build time with SQL's (DuckDB's)
 * rules, written out in src/exec/expr_int.h. In short: INTEGER op INTEGER
 * -> INTEGER, with BIGINT -> BIGINT, with DECIMAL -> DECIMAL, with DOUBLE ->
 * DOUBLE; DECIMAL(p1,s1) +/- DECIMAL(p2,s2) -> DECIMAL(max(p1-s1,p2-s2) +
 * max(s1,s2) + 1, max(s1,s2)); DECIMAL(p1,s1) * DECIMAL(p2,s2) ->
 * DECIMAL(p1+p2, s1+s2), kept at 18 digits when both inputs fit 18 (then
 * checked at run time); precision is capped at 38; `/` always gives DOUBLE
 * (x / 0 is +-inf or NaN). Integer and DECIMAL overflow is PA_EOVERFLOW at
 * run time, naming the values. Constant subtrees are folded at build time.
 *
 * Errors: a builder returns NULL and sets err (PA_EINVAL for a type error,
 * PA_ENOMEM). A builder given a NULL operand returns NULL and keeps the
 * error already on err, so a whole tree can be built and checked once.
 * Expressions live in the plan's memory (freed with it).
 */
typedef enum ex_arith { EX_ADD, EX_SUB, EX_MUL, EX_DIV, EX_MOD } ex_arith;
typedef enum ex_cmp { EX_EQ, EX_NE, EX_LT, EX_LE, EX_GT, EX_GE } ex_cmp;
/* The fields of a DATE, as kn_date_field (kernels.h) lists them. */
typedef enum ex_field {
    EX_YEAR, EX_MONTH, EX_DAY, EX_QUARTER, EX_DOW, EX_ISODOW, EX_DOY, EX_WEEK, EX_ISOYEAR, EX_EPOCH, EX_DECADE,
    EX_CENTURY, EX_MILLENNIUM, EX_HOUR, EX_MINUTE, EX_SECOND, EX_MILLISECONDS, EX_MICROSECONDS
} ex_field;
typedef enum ex_unit { EX_DAYS, EX_MONTHS, EX_YEARS } ex_unit;

/* Column `index` of input's output, with its type. */
ex_expr *ex_expr_col(ex_plan *p, const ex_op *input, int index, pa_err *err);
/* Column `index` of an input whose column has type t. */
ex_expr *ex_expr_col_typed(ex_plan *p, int index, pa_type t, pa_err *err);

/* Constants. ex_expr_decimal reads exact text ("0.05", "-12", "1e3" is not
 * accepted): precision = its digits, scale = digits after the point.
 * ex_expr_date reads YYYY-MM-DD. ex_expr_null is a NULL of type t. */
ex_expr *ex_expr_bool(ex_plan *p, bool v, pa_err *err);
ex_expr *ex_expr_int(ex_plan *p, int32_t v, pa_err *err);
ex_expr *ex_expr_bigint(ex_plan *p, int64_t v, pa_err *err);
ex_expr *ex_expr_double(ex_plan *p, double v, pa_err *err);
ex_expr *ex_expr_decimal(ex_plan *p, const char *text, pa_err *err);
ex_expr *ex_expr_decimal_scaled(ex_plan *p, int64_t v, int precision, int scale, pa_err *err);
ex_expr *ex_expr_varchar(ex_plan *p, const char *s, pa_err *err);
ex_expr *ex_expr_date(ex_plan *p, const char *ymd, pa_err *err);
ex_expr *ex_expr_null(ex_plan *p, pa_type t, pa_err *err);
/* A TIMESTAMP, TIMESTAMPTZ, TIME or TIMESTAMP_NS constant of its int64
 * value (microseconds; nanoseconds for TIMESTAMP_NS). */
ex_expr *ex_expr_timestamp(ex_plan *p, pa_type t, int64_t v, pa_err *err);

/* a op b on numbers; DATE + / - INTEGER or BIGINT days -> DATE; DATE - DATE
 * -> BIGINT days. */
ex_expr *ex_expr_arith(ex_plan *p, ex_arith op, ex_expr *a, ex_expr *b, pa_err *err);
ex_expr *ex_expr_neg(ex_plan *p, ex_expr *a, pa_err *err);
/* An INTERVAL's normalised length (pa_interval_norm) as DECIMAL(38,0): the
 * key that groups, DISTINCT and COUNT(DISTINCT) use for INTERVALs, so that
 * '1 mon' and '30 days' are one value (PostgreSQL's equality). */
ex_expr *ex_expr_interval_key(ex_plan *p, ex_expr *a, pa_err *err);
/* Comparison -> BOOLEAN after promotion to a common type (numbers; DATE
 * with DATE or a VARCHAR constant; VARCHAR bytewise; BOOLEAN). */
ex_expr *ex_expr_cmp(ex_plan *p, ex_cmp op, ex_expr *a, ex_expr *b, pa_err *err);
/* SQL three-valued logic. */
ex_expr *ex_expr_and(ex_plan *p, ex_expr *a, ex_expr *b, pa_err *err);
ex_expr *ex_expr_or(ex_plan *p, ex_expr *a, ex_expr *b, pa_err *err);
ex_expr *ex_expr_not(ex_plan *p, ex_expr *a, pa_err *err);
/* a IS NULL, or with negate a IS NOT NULL. */
ex_expr *ex_expr_is_null(ex_plan *p, ex_expr *a, bool negate, pa_err *err);
/* CASE WHEN whens[0] THEN thens[0] ... ELSE else_ END (else_ NULL: ELSE
 * NULL). Result: the common type of the THENs and the ELSE. Every branch is
 * evaluated for every row: an error (overflow, bad cast) in a branch whose
 * condition is false for that row still fails the query. */
ex_expr *ex_expr_case(ex_plan *p, ex_expr *const *whens, ex_expr *const *thens, int n, ex_expr *else_, pa_err *err);
/* a [NOT] IN (list of constants): NULL when a is NULL, or when there is no
 * match and the list holds a NULL. */
ex_expr *ex_expr_in(ex_plan *p, ex_expr *a, ex_expr *const *list, int n, bool negate, pa_err *err);
/* a [NOT] BETWEEN lo AND hi (= a >= lo AND a <= hi, a evaluated once). */
ex_expr *ex_expr_between(ex_plan *p, ex_expr *a, ex_expr *lo, ex_expr *hi, bool negate, pa_err *err);
/* a [NOT] LIKE pattern: % any characters, _ one character, no escape. */
ex_expr *ex_expr_like(ex_plan *p, ex_expr *a, const char *pattern, bool negate, pa_err *err);
/* SUBSTRING(s FROM from FOR len) in characters, 1-based (len NULL: to the
 * end); DuckDB's rules for negative or zero positions and lengths. */
ex_expr *ex_expr_substring(ex_plan *p, ex_expr *s, ex_expr *from, ex_expr *len, pa_err *err);
/* PostgreSQL's numeric functions. SQRT .. POWER take DOUBLE (other numbers
 * are cast) and give DOUBLE; LOG is log(base a, b). FLOOR, CEIL, TRUNC and
 * ROUND keep a DOUBLE a DOUBLE and an INTEGER or BIGINT as it is; a
 * DECIMAL(p,s) gives DECIMAL(p,0) (ROUND with digits d < s: DECIMAL(p,d), d < 0:
 * DECIMAL(p+1,0)). ROUND of a DOUBLE without digits rounds half to even,
 * with digits (-308..308) half away from zero. SIGN gives INTEGER, DOUBLE
 * for a DOUBLE. b: LOG and POWER only; digits: ROUND only (has_digits).
 * AVG_DIV (not SQL's: distribute.c's merge of AVG over ranks): DOUBLE of
 * the exact sum a (INTEGER, BIGINT or DECIMAL) over the count b (BIGINT),
 * divided as AVG divides (kn_math's AVG). */
typedef enum ex_math {
    EX_SQRT, EX_CBRT, EX_EXP, EX_LN, EX_LOG10, EX_LOG, EX_POWER, EX_FLOOR, EX_CEIL, EX_TRUNC, EX_ROUND, EX_SIGN,
    EX_AVG_DIV
} ex_math;
ex_expr *ex_expr_math(ex_plan *p, ex_math fn, ex_expr *a, ex_expr *b, int digits, bool has_digits, pa_err *err);

/* PostgreSQL's string functions that measure a string or take a part of
 * it (kn_strfn lists them and their rules): length, octet_length, strpos
 * (b the substring), starts_with, left/right (b the count), btrim/ltrim/
 * rtrim (b the characters, NULL b: a space), split_part (b the delimiter, c
 * the field). a and the string operands are VARCHAR; counts are integers. */
typedef enum ex_strfn {
    EX_LENGTH, EX_OCTET_LENGTH, EX_STRPOS, EX_STARTS_WITH, EX_LEFT, EX_RIGHT, EX_BTRIM, EX_LTRIM, EX_RTRIM,
    EX_SPLIT_PART
} ex_strfn;
ex_expr *ex_expr_strfn(ex_plan *p, ex_strfn fn, ex_expr *a, ex_expr *b, ex_expr *c, pa_err *err);

/* PostgreSQL's string functions that make new text (kn_textfn gives their
 * rules), on VARCHAR a: upper, lower, initcap, reverse; a || b (CONCAT,
 * NULL when either is); replace (b, c: VARCHAR constants); lpad / rpad (b:
 * an integer constant, the length; c: a VARCHAR constant, NULL c: a
 * space); repeat (b: an integer constant). Counts must be constants, as
 * the size of the result rests on them: anything else is PA_EUNSUPPORTED
 * naming the function. A count over 10^8 is PA_EINVAL ("requested length
 * too large"). EX_CONCAT_WS is ex_expr_concat's step, not for callers. */
typedef enum ex_textfn {
    EX_UPPER, EX_LOWER, EX_INITCAP, EX_CONCAT, EX_CONCAT_WS, EX_REPLACE, EX_LPAD, EX_RPAD, EX_REPEAT, EX_REVERSE,
    EX_TRANSLATE, EX_MD5,
    EX_REGEXP_REPLACE,  /* ex_expr_regexp_replace's node, not for ex_expr_text */
    /* CASTs between text and the byte types (ex_expr_cast's nodes). */
    EX_BYTEA_IN, EX_BYTEA_OUT, EX_UUID_IN, EX_UUID_OUT
} ex_textfn;
ex_expr *ex_expr_text(ex_plan *p, ex_textfn fn, ex_expr *a, ex_expr *b, ex_expr *c, pa_err *err);
/* PostgreSQL's regular expressions (the syntax: kernels.h at
 * kn_regex_compile; the matching, leftmost-first: kn_regex.h).
 * regexp_like: BOOLEAN, whether pattern matches somewhere in a (negate:
 * NOT, the !~ operators). regexp_replace: a with the first match, or every
 * one under flag g, replaced by repl, where \1..\9 are the groups' text
 * ('' for a group that took no part or that the pattern lacks), \0 and \&
 * the match's, \\ a backslash, and a backslash before anything else stays.
 * pattern, repl and flags (NULL: none) must be VARCHAR constants:
 * PA_EUNSUPPORTED naming the function and the argument otherwise. Flags: i
 * case-insensitive, c case-sensitive (the last of them wins), g (regexp_
 * replace only); another flag or an invalid pattern is PA_EINVAL. A NULL
 * argument gives NULL. */
ex_expr *ex_expr_regexp_like(ex_plan *p, ex_expr *a, ex_expr *pattern, ex_expr *flags, bool negate, pa_err *err);
ex_expr *ex_expr_regexp_replace(ex_plan *p, ex_expr *a, ex_expr *pattern, ex_expr *repl, ex_expr *flags,
                                pa_err *err);
/* concat(args) (sep NULL) and concat_ws(sep, args), as PostgreSQL: the
 * VARCHAR args joined, NULL ones skipped (with their separator); all NULL
 * gives ''; concat_ws with a NULL separator gives NULL. n >= 1. */
ex_expr *ex_expr_concat(ex_plan *p, ex_expr *sep, ex_expr *const *args, int n, pa_err *err);

/* EXTRACT(field FROM date) -> BIGINT. */
ex_expr *ex_expr_extract(ex_plan *p, ex_field field, ex_expr *date, pa_err *err);
/* DATE_TRUNC(field, date) -> DATE (PostgreSQL gives a timestamp; Pista has
 * no timestamps yet): YEAR, QUARTER, MONTH, WEEK (Monday), DAY, DECADE,
 * CENTURY, MILLENNIUM. */
ex_expr *ex_expr_date_trunc(ex_plan *p, ex_field field, ex_expr *date, pa_err *err);
/* MAKE_DATE(year, month, day) -> DATE; integers; a field out of range is
 * the statement's error ("date field value out of range: 2023-02-30"). */
ex_expr *ex_expr_make_date(ex_plan *p, ex_expr *y, ex_expr *m, ex_expr *d, pa_err *err);
/* date + n units (n < 0 subtracts) -> DATE; months and years keep the day,
 * clamped to the end of the month (1996-02-29 + 1 year = 1997-02-28). */
ex_expr *ex_expr_date_add(ex_plan *p, ex_expr *date, int64_t n, ex_unit unit, pa_err *err);
/* age(a, b) of two TIMESTAMPs (DATEs count as midnight; TIMESTAMPTZ as its
 * UTC instant): PostgreSQL's symbolic INTERVAL of years, months, days and
 * time. */
ex_expr *ex_expr_age(ex_plan *p, ex_expr *a, ex_expr *b, pa_err *err);
/* CAST(a AS t): between every pair of types except DATE with a number. */
ex_expr *ex_expr_cast(ex_plan *p, ex_expr *a, pa_type t, pa_err *err);

pa_type ex_expr_type(const ex_expr *e);
/* True when e is a plain column reference (its index to *index). */
bool ex_expr_is_column(const ex_expr *e, int *index);
/* True when e is a constant (after folding); NULL constants included. */
bool ex_expr_is_const(const ex_expr *e);
/* The value of a non-NULL INTEGER or BIGINT constant; false otherwise. */
bool ex_expr_const_int(const ex_expr *e, int64_t *v);
/* True when e is the NULL constant (after folding). */
bool ex_expr_is_null_const(const ex_expr *e);
/* True when a and b are the same expression: kind, type, operands and
 * constant values (every byte of a VARCHAR). */
bool ex_expr_equal(const ex_expr *a, const ex_expr *b);
/* The value of a non-NULL constant as the text a pq_pred value takes
 * (storage.h): integers in decimal, DECIMAL exactly with its scale ("0.05",
 * "-12.00"), DATE YYYY-MM-DD, DOUBLE with 17 significant digits, VARCHAR its
 * bytes, BOOLEAN true/false; NUL-terminated into buf. PA_EINVAL when e is
 * not a constant, is NULL, or the text needs cap bytes or more. */
int ex_expr_const_text(const ex_expr *e, char *buf, size_t cap);

/* ------------------------------------------------------------- operators
 *
 * Every builder returns PA_OK and *out, or an error (bad column index, type
 * mismatch...) leaving the plan unchanged. Column references are indexes
 * into the input operator's output columns.
 */

/* Scan Parquet files (paths: files, directories or globs) projecting
 * `columns` (NULL = all) with the conjunction of `preds` pushed into the
 * scan (row-group and page pruning, exact row filtering). */
int ex_scan(ex_plan *p, const char *const *paths, int n_paths, const char *const *columns, int n_columns,
            const pq_pred *preds, int n_preds, ex_op **out, pa_err *err);

/* Layout of the files (pq_scan_options' fields of the same names): types
 * (per column, required with hive partition or union_by_name columns the
 * first file lacks) are the table's, each file's values converted to them. */
typedef struct ex_scan_layout {
    const pa_type *types;
    int hive_partitioning;      /* PQ_HIVE_AUTO, PQ_HIVE_ON, PQ_HIVE_OFF */
    bool union_by_name;
} ex_scan_layout;
/* ex_scan with a layout (NULL: ex_scan's). */
int ex_scan_layout_build(ex_plan *p, const char *const *paths, int n_paths, const char *const *columns,
                         int n_columns, const pq_pred *preds, int n_preds, const ex_scan_layout *layout,
                         ex_op **out, pa_err *err);

/* Read only one rank's share of the scan's files: the row groups whose
 * index over every file (in scan order) is part modulo parts. */
int ex_scan_set_share(ex_op *scan, int part, int parts, pa_err *err);

/* Rows of the input for which pred (BOOLEAN) is TRUE (op_filter.c). Chunks
 * where every row passes go on without a copy; empty results are dropped. */
int ex_filter(ex_plan *p, ex_op *input, ex_expr *pred, ex_op **out, pa_err *err);
/* One output column per expression, named names[i] (NULL names or entries:
 * "col<i>", or the input's name for a column reference), (op_project.c).
 * Column references pass through without a copy; the other expressions are
 * compiled into one program (shared subexpressions evaluated once). */
int ex_project(ex_plan *p, ex_op *input, ex_expr *const *exprs, const char *const *names, int n, ex_op **out,
               pa_err *err);

/* One row of constants, for SELECT without FROM (op_values.c): output
 * column i is exprs[i] (constants, NULL ones included; PA_EINVAL for any
 * other expression), named names[i] ("col<i>" when names or the entry is
 * NULL). n == 0 gives one row without columns. A source usable under every
 * operator, on either side of a join. */
int ex_values(ex_plan *p, ex_expr *const *exprs, const char *const *names, int n, ex_op **out, pa_err *err);
/* The same with rows rows (a VALUES list): exprs holds rows x n constants,
 * row by row, each column of one type throughout (PA_EINVAL naming the
 * first that differs); n >= 1 unless rows is 1. */
int ex_values_rows(ex_plan *p, ex_expr *const *exprs, const char *const *names, int n, int64_t rows, ex_op **out,
                   pa_err *err);

/* generate_series / range (op_series.c): one BIGINT column `name` of the
 * rows start, start + step, ... count of them (the caller computes count
 * so that every value fits; step != 0), made by kn_sequence on the device
 * a chunk at a time, as many chunks in flight as workers ask for. */
int ex_series(ex_plan *p, int64_t start, int64_t step, int64_t count, const char *name, ex_op **out, pa_err *err);

/* An exchange (op_exchange.c): input's rows moved between the ranks of
 * world w while they are produced. Its input pipeline packs each chunk
 * into per-rank buffers (host memory; a device chunk goes through pinned
 * memory first), the query's round thread sends them in rounds of
 * all-to-all with the other ranks' (every exchange of the plan in each
 * round, the same rounds on every rank), and the pipeline above reads what
 * arrives as it arrives: in OVERLAPPED mode it starts with the input
 * pipeline, and a bounded receive queue holds senders back (a rank whose
 * queue is full says so in the round, and nobody sends it more of that
 * exchange until it drained). Each rank ends an exchange when its input
 * ended and everything was sent; the reader's input ends when every rank
 * ended it. A reader that stops early (LIMIT) drops what still arrives.
 * Output: input's columns [0, n_keep); keys index input's columns.
 *   EX_X_REPART     row to rank hash(keys) mod size (ex_result_pack_parts'
 *                   routing: equal keys meet on one rank whatever the side)
 *   EX_X_LOCAL      this rank's hash share of its own rows (no rounds: an
 *                   input every rank holds whole, joined with a REPART one)
 *   EX_X_BROADCAST  every row to every rank
 * Every rank must build the same exchanges in the same order (the plan
 * decides them). The plan's exchanges use one world. */
typedef enum ex_xmode { EX_X_REPART, EX_X_LOCAL, EX_X_BROADCAST } ex_xmode;
int ex_exchange(ex_plan *p, ex_op *input, nt_world *w, ex_xmode mode, int n_keep, const int *keys, int n_keys,
                ex_op **out, pa_err *err);

/* The rows of an earlier run's result as a source (op_rows.c): output
 * column i is r's column i (names as r's). Each chunk of r goes out once:
 * as a view (no copy) on a host-visible device (the cpu), else uploaded;
 * r is the caller's, read-only, must outlive every run of the plan, and
 * comes from a run on the same device (host chunks where the host cannot
 * read device memory). For a WITH query used several times. */
int ex_rows(ex_plan *p, const ex_result *r, ex_op **out, pa_err *err);

/* Concatenate the inputs (same column types; names of the first). */
int ex_union_all(ex_plan *p, ex_op *const *inputs, int n_inputs, ex_op **out, pa_err *err);

/* Gather small chunks into chunks of about target_rows (0 = the device's
 * default chunk size) before a size-sensitive operator. The planner
 * inserts these; a plan may also place them by hand. */
int ex_rechunk(ex_plan *p, ex_op *input, int64_t target_rows, ex_op **out, pa_err *err);

/* Group-by aggregation (op_agg*.c). Output: the group columns (input names
 * and types) then one column per aggregate, named names[i] (names or an
 * entry NULL: "sum(l_quantity)", "count_star()"). n_groups = 0 is a global
 * aggregate: exactly one row, COUNT 0 and NULL SUM/AVG/MIN/MAX on empty
 * input. NULL arguments are ignored; NULL keys form one group. Result
 * types: COUNT* BIGINT; SUM of INTEGER/BIGINT BIGINT (summed in 128 bits,
 * PA_EOVERFLOW if the total leaves BIGINT: DuckDB's HUGEINT prints the same
 * digits), of DECIMAL(p,s) DECIMAL(38,s), of DOUBLE DOUBLE; AVG DOUBLE;
 * MIN/MAX the argument's type. An INTERVAL group column groups by its
 * normalised length ('1 mon' and '30 days' are one group, as in
 * PostgreSQL) and gives back one of the group's values; so does an
 * INTERVAL in DISTINCT and COUNT(DISTINCT) (a projection of the keys below
 * the aggregation, one above it: see interval_keys in op_agg.c). */
typedef enum ex_agg_kind {
    EX_AGG_SUM, EX_AGG_COUNT, EX_AGG_COUNT_STAR, EX_AGG_COUNT_DISTINCT, EX_AGG_AVG, EX_AGG_MIN, EX_AGG_MAX,
} ex_agg_kind;
typedef struct ex_agg {
    ex_agg_kind kind;
    int column;               /* input column index (ignored for COUNT_STAR) */
} ex_agg;
/* The result type of aggregate k over an argument of type arg (ignored for
 * COUNT_STAR) into *out, by the rules above; PA_EINVAL naming the aggregate
 * when it does not apply (SUM or AVG of a non-number). ex_aggregate uses it. */
int ex_agg_type(ex_agg_kind k, pa_type arg, pa_type *out, pa_err *err);
int ex_aggregate(ex_plan *p, ex_op *input, const int *group_cols, int n_groups, const ex_agg *aggs, int n_aggs,
                 const char *const *names, ex_op **out, pa_err *err);
/* Distinct rows over all input columns (NULLs equal), in no set order. */
int ex_distinct(ex_plan *p, ex_op *input, ex_op **out, pa_err *err);

/* Sort, top-N and limit (op_sort.c, op_topn.c, op_limit.c).
 * A sort key is an input column and its direction. The builders take
 * explicit NULL placement; SQL's defaults (PostgreSQL and DuckDB) are ASC
 * NULLS LAST and DESC NULLS FIRST, i.e. nulls_first = descending unless the
 * query says NULLS FIRST/LAST. DOUBLE orders -0 = +0 and NaN above +Inf;
 * VARCHAR by bytes (memcmp, then length). Ties come out in any order. */
typedef struct ex_sort_key {
    int column;
    bool descending;
    bool nulls_first;
} ex_sort_key;

/* ORDER BY keys (1..32 keys; a pipeline breaker; output in order). */
int ex_sort(ex_plan *p, ex_op *input, const ex_sort_key *keys, int n_keys, ex_op **out, pa_err *err);
/* ORDER BY keys LIMIT limit OFFSET offset, keeping only about
 * limit + offset rows per worker while it runs. limit, offset >= 0. */
int ex_topn(ex_plan *p, ex_op *input, const ex_sort_key *keys, int n_keys, int64_t limit, int64_t offset,
            ex_op **out, pa_err *err);
/* Streaming LIMIT/OFFSET: rows [offset, offset + limit) of the input in
 * the order chunks reach it (with several workers, which rows is not
 * defined, their number is). Stops its pipeline (EX_FINISHED) once enough
 * rows passed. limit, offset >= 0. */
int ex_limit(ex_plan *p, ex_op *input, int64_t limit, int64_t offset, ex_op **out, pa_err *err);

/* Window functions (op_window.c): every input column, then one column per
 * function, named names[i] (NULL: the function's name). The rows are
 * sorted by the partition keys (ascending, NULLs last) and the order keys
 * below the op (a SORT the builder adds), and come out in that order.
 * Values: ROW_NUMBER, RANK, DENSE_RANK, NTILE (n buckets), COUNT_STAR and
 * COUNT BIGINT; PERCENT_RANK, CUME_DIST and AVG DOUBLE; SUM as the
 * group-by SUM (ex_agg_type); SHIFT (lag n > 0 / lead n < 0: the argument
 * n rows before, NULL outside the partition), FIRST_VALUE, LAST_VALUE,
 * NTH_VALUE (n >= 1), MIN and MAX the argument's type. FIRST_VALUE and the
 * ones after it are over each row's frame; the aggregates ignore NULLs and
 * SUM/AVG/MIN/MAX are NULL over a frame without values. RANGE with an
 * offset needs exactly one order key, a number;
 * its offsets are in the key's representation (unscaled DECIMAL). A window
 * holds fewer than 2^31 rows. */
typedef enum ex_window_kind {
    EX_WIN_ROW_NUMBER, EX_WIN_RANK, EX_WIN_DENSE_RANK, EX_WIN_NTILE, EX_WIN_PERCENT_RANK, EX_WIN_CUME_DIST,
    EX_WIN_SHIFT, EX_WIN_FIRST_VALUE, EX_WIN_LAST_VALUE, EX_WIN_NTH_VALUE, EX_WIN_COUNT_STAR, EX_WIN_COUNT,
    EX_WIN_SUM, EX_WIN_AVG, EX_WIN_MIN, EX_WIN_MAX,
    EX_WIN_STRING_AGG,        /* a partition's values joined, at its first row (the string_agg aggregate) */
} ex_window_kind;
typedef enum ex_frame_bound {
    EX_FB_UNBOUNDED_PRECEDING, EX_FB_PRECEDING, EX_FB_CURRENT_ROW, EX_FB_FOLLOWING, EX_FB_UNBOUNDED_FOLLOWING,
} ex_frame_bound;
typedef struct ex_window_frame {
    bool rows;                /* ROWS; else RANGE */
    ex_frame_bound start, end;
    int64_t start_n, end_n;   /* offsets: ROWS rows, RANGE over an integer-like key */
    double start_d, end_d;    /* RANGE over a DOUBLE key */
} ex_window_frame;
#define EX_WINDOW_SEP_MAX 64
typedef struct ex_window_fn {
    ex_window_kind kind;
    int column;               /* the argument's input column; -1 none */
    int64_t n;                /* NTILE, SHIFT, NTH_VALUE */
    ex_window_frame frame;    /* FIRST_VALUE .. MAX */
    const char *sep;          /* STRING_AGG: the separator (at most EX_WINDOW_SEP_MAX bytes) */
    int32_t sep_len;
} ex_window_fn;
/* The output type of fn over an input whose column types are in_types. */
int ex_window_type(const ex_window_fn *fn, const pa_type *in_types, pa_type *out, pa_err *err);
int ex_window(ex_plan *p, ex_op *input, const int *part_cols, int n_part, const ex_sort_key *order, int n_order,
              const ex_window_fn *fns, int n_fns, const char *const *names, ex_op **out, pa_err *err);

/* Hash join (op_join*.c). The build side is a pipeline breaker (its
 * chunks are gathered, then one hash table is built); the probe side
 * streams. Keys are column indexes, probe_keys[k] of probe matched with
 * build_keys[k] of build (1..32 keys); a key pair has the same type (DECIMAL:
 * the same scale) or is INTEGER with BIGINT. NULL keys never match.
 * Output: every probe column, then for INNER and LEFT the build columns
 * build_out_cols (names and types of the build input; NULL for LEFT's
 * unmatched rows); SEMI and ANTI output only the probe columns; MARK adds a
 * BOOLEAN column "mark" = probe keys IN (build keys) with SQL's NULL rules:
 * TRUE on a match, else NULL if the build side is not empty and a NULL
 * makes the comparison unknown, else FALSE. ANTI is NOT EXISTS: probe rows
 * whose key is NULL are kept (for NOT IN, filter on MARK instead). Rows come
 * out in no set order. */
typedef enum ex_join_type {
    EX_JOIN_INNER, EX_JOIN_LEFT, EX_JOIN_SEMI, EX_JOIN_ANTI, EX_JOIN_MARK,
} ex_join_type;
int ex_hash_join(ex_plan *p, ex_op *probe, ex_op *build, ex_join_type type, const int *probe_keys,
                 const int *build_keys, int n_keys, const int *build_out_cols, int n_build_out, ex_op **out,
                 pa_err *err);
/* ex_hash_join with a residual predicate and optionally no keys
 * (op_join_pairs.c). residual (NULL: none) is a BOOLEAN expression over the
 * PAIR schema, made with ex_expr_col_typed: indexes 0..P-1 are the probe
 * input's columns, P..P+B-1 every column of the build input (not only
 * build_out_cols). A probe row and a build row match when their keys are
 * equal AND residual is TRUE (NULL or FALSE: no match), for every join
 * type: LEFT pads probe rows without a match, SEMI keeps and ANTI drops
 * probe rows with one. MARK: TRUE if some pair matches; else NULL if some
 * key-equal pair has a NULL residual or the IN-NULL rule above applies
 * (whatever the residual of those pairs); else FALSE.
 * n_keys == 0 (0..32) makes every build row a candidate for every probe row
 * (CROSS JOIN, joins on non-equalities, a scalar subquery's one row): pairs
 * are enumerated and filtered in chunk-sized batches, and without a
 * residual SEMI, ANTI and MARK only look at whether the build side is
 * empty; MARK then has no IN-NULL rule (never NULL without a residual). */
int ex_hash_join_cond(ex_plan *p, ex_op *probe, ex_op *build, ex_join_type type, const int *probe_keys,
                      const int *build_keys, int n_keys, const int *build_out_cols, int n_build_out,
                      ex_expr *residual, ex_op **out, pa_err *err);

/* Make an INNER or LEFT join the join of a scalar subquery (the build side):
 * building fails with PA_EINVAL "more than one row returned by a subquery
 * used as an expression" when two build rows have equal keys (NULL keys
 * excepted: they match nothing), or, without keys, when the build side has
 * more than one row. A residual is not considered: the check is on the
 * keys alone. */
int ex_hash_join_single(ex_op *join, pa_err *err);

/* --------------------------------------------------------------- running */

typedef enum ex_mode {
    EX_MODE_OVERLAPPED,   /* default: pipelines and I/O overlap, chunks stream */
    EX_MODE_CHUNKED,      /* chunks stream, one pipeline at a time, scans start with their pipeline */
    EX_MODE_BLOCKING,     /* each scan reads its whole table, then decodes and materialises it
                           * (pq_scan_options.read_first); each operator runs to completion */
} ex_mode;

const char *ex_mode_name(ex_mode m);
int ex_mode_parse(const char *text, ex_mode *out, pa_err *err);

/* Progress counters of a run (see ex_run_options.progress). */
typedef struct ex_progress {
    _Atomic int64_t rows_scanned, rows_total;
} ex_progress;

typedef struct ex_run_options {
    dv_device *dev;           /* required */
    ex_mode mode;
    int threads;              /* workers per pipeline; 0 = the device's default */
    int64_t chunk_rows;       /* target rows per chunk; 0 = the device's default */
    int queue_chunks;         /* capacity of the queues between stages; 0 = default */
    /* Cancellation (NULL: off). When *cancel becomes non-zero (a signal
     * handler may set it), ex_run stops within about 100 ms - workers check
     * it between chunks, the coordinator and blocked waits at least every
     * 20 ms, scans before each unit - and returns PA_ECANCELED "query
     * canceled" with everything freed. Long single steps (a sort's or a hash
     * build's finalize) are not interrupted. */
    volatile sig_atomic_t *cancel;
    /* Progress (NULL: off): ex_run adds to rows_total the rows of every file
     * of every scan of the plan (from the footers) when it starts, and each
     * scan adds to rows_scanned the rows it has decoded as it goes (before
     * row filtering; row groups pruned by statistics are added when the scan
     * ends, so a finished scan has counted all of its rows). Neither is reset:
     * zero them before a run. Readable at any time from any thread. */
    ex_progress *progress;
    /* Keep the result in device memory (a device the host cannot read
     * otherwise gets a host copy): for a result only a later query's ROWS
     * source reads, such as a WITH query evaluated once. */
    bool keep_on_device;
    /* Set (when not NULL) if the run failed in a round of its exchanges:
     * every rank of the world then has the error, and no rank makes
     * another round for this failure. */
    bool *round_failed;
} ex_run_options;

/* Per-operator statistics (summed over workers). */
typedef struct ex_op_stats {
    const char *label;        /* "HASH_JOIN inner" ... (owned by the result) */
    int depth;                /* in the plan tree, for indenting */
    int pipeline;             /* first pipeline it belongs to */
    int64_t rows_in, rows_out, chunks_out;
    uint64_t ns;              /* busy time in the operator, all workers */
    uint64_t mem_peak;        /* bytes of operator state at its largest */
    char detail[96];          /* SCAN: files and row groups read and pruned; else "" */
} ex_op_stats;

typedef struct ex_query_stats {
    uint64_t ns_total;
    int n_pipelines;
    int n_ops;
    ex_op_stats *ops;         /* n_ops entries, owned by the result: [0] is RESULT, then
                               * the tree under root in pre-order (input before build side) */
    pa_counters counters;     /* counter deltas over the run: bytes read, copied, syncs... */
    uint64_t mem_peak;        /* device pool peak during the query */
    char device[192];         /* dv_describe of the device used */
    ex_mode mode;
    int download_syncs;       /* host syncs the result's download took: 0 on a host-visible
                                 device, else 1, or 2 when a VARCHAR column's byte count was
                                 unknown on the host (see pa_column_bytes) */
} ex_query_stats;

/* The result: host-visible columns. Rows are in the order the plan produces
 * (a SORT or TOPN at the top gives a total order). */
struct ex_result {
    int n_columns;
    const char **names;
    pa_type *types;
    int64_t n_rows;
    dv_chunk **chunks;        /* in order: host-visible, unless on_device */
    bool on_device;           /* chunks in memory of a device the host cannot read
                                 (ex_run_options.keep_on_device): complete, for ex_rows
                                 only; destroy the result after the runs that read it */
    int n_chunks;
    ex_query_stats stats;
};

/* Run the plan whose top operator is root. On error (including PA_ENOMEM
 * with the operator named) nothing is returned and every resource of the
 * run is freed: the device stays usable for the next query. */
int ex_run(ex_plan *p, ex_op *root, const ex_run_options *opt, ex_result **out, pa_err *err);
void ex_result_destroy(ex_result *r);
/* A result's rows as one buffer (pa_malloc'd, *bytes long) that
 * ex_result_unpack turns back into rows elsewhere (another rank). r must be
 * host-visible (not on_device). */
int ex_result_pack(const ex_result *r, void **out, int64_t *bytes, pa_err *err);
/* r's rows split into `parts` packed buffers (as ex_result_pack's) by a
 * hash of key columns keys[0..n_keys): equal keys (equal values of the same
 * type; NULLs alike; -0.0 as 0.0) land in the same part, on every rank.
 * Only columns [0, n_keep) are packed (keys may lie beyond). With only >= 0
 * just that part is packed (the others are NULL). out and bytes have
 * `parts` entries; the caller frees each out[p] with pa_free. */
int ex_result_pack_parts(const ex_result *r, int n_keep, const int *keys, int n_keys, int parts, int only,
                         void **out, int64_t *bytes, pa_err *err);
/* One result of host chunks on dev from n packed buffers (in order), each
 * of a result with these columns; PA_ECORRUPT naming the buffer when one
 * does not hold such rows. */
int ex_result_unpack(dv_device *dev, int n_columns, const char *const *names, const pa_type *types,
                     const void *const *bufs, const int64_t *sizes, int n, ex_result **out, pa_err *err);

/* Print helpers for tools and tests (the answers format: '|' separated,
 * header line of names, PA_FMT_ANSWER values). Returns bytes written or -1. */
int ex_result_write_csv(const ex_result *r, FILE *f, char sep, bool header);
/* The same with every value in full (a DECIMAL's every digit, a DOUBLE's
 * shortest round-trip digits as DuckDB writes them; NULL an empty field,
 * fields quoted as RFC 4180 wants, an empty string as ""); the header line
 * when asked. 0, or -1 when writing failed (errno) or memory ran out. */
int ex_result_write_csv_full(const ex_result *r, FILE *f, char sep, bool header);
/* x as DuckDB's CSV writer (and Python's repr) print a double, into buf
 * (cap bytes); its length, as snprintf counts it. */
size_t ex_format_double_repr(double x, char *buf, size_t cap);
/* The plan with pipelines, device, each operator's estimate ("~N rows" when
 * set with ex_op_set_estimate, else the builders' guess "est N") and (after
 * a run) per-operator rows, time and memory, as text lines into f. */
int ex_explain(const ex_plan *p, const ex_op *root, const ex_result *analyzed, dv_device *dev, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_EXEC_H */

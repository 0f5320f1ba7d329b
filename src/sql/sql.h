/*
 * sql.h - the SQL front end: the whole public surface of src/sql.
 *
 * A session holds a catalog (tables are Parquet files, views are stored
 * SELECTs) and the settings queries run with (device, threads, mode). Text
 * goes in, one statement at a time: libpg_query parses it (PostgreSQL's
 * grammar), the binder turns the parse tree into a typed logical plan, the
 * optimiser decorrelates subqueries, pushes predicates and projections
 * down to the scans and orders joins from cardinality estimates, and the
 * plan is lowered onto the execution engine's operators (exec.h) and run.
 *
 * Statements: SELECT (with WITH, set operations, subqueries), EXPLAIN
 * [ANALYZE] SELECT, CREATE VIEW name AS SELECT, CREATE TABLE name AS SELECT
 * (writes <data dir>/<name>.parquet), DROP VIEW / DROP TABLE (catalog only:
 * never deletes files).
 *
 * Errors: every function returns PA_OK or a status with err set. Errors
 * that belong to a place in the statement text (syntax, unknown column,
 * unsupported construct, type mismatch) also record that place:
 * sql_error_offset() gives its byte offset in the text last passed to
 * sql_execute, -1 when the error has no position.
 *
 * Threads: a session is used by one thread at a time, except
 * sql_session_cancel and sql_progress, which any thread (or a signal
 * handler, for cancel) may call while sql_execute runs.
 */
#ifndef PISTA_SQL_H
#define PISTA_SQL_H

#include "core/core.h"
#include "device/device.h"
#include "exec/exec.h"
#include "net/net.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sql_session sql_session;

typedef struct sql_options {
    dv_device *dev;           /* required; not owned */
    int threads;              /* workers per pipeline; 0 = the device's default */
    ex_mode mode;             /* EX_MODE_OVERLAPPED by default (zeroed options) */
    const char *data_dir;     /* NULL: none; tables in it are registered, CREATE TABLE writes there */
    nt_world *world;          /* NULL or one rank: statements run here alone. Several ranks:
                               * every rank runs the same statements in the same order and
                               * rank 0 gets the results (src/sql/distribute.c); not owned */
    int64_t replicate_rows;   /* several ranks: a table of fewer rows is read whole by every
                               * rank, a bigger one split (0: SQL_REPLICATE_ROWS) */
} sql_options;

#define SQL_REPLICATE_ROWS 1000000

int sql_session_create(const sql_options *opt, sql_session **out, pa_err *err);
void sql_session_destroy(sql_session *s);

dv_device *sql_session_device(const sql_session *s);
/* Settings for the statements that follow. */
void sql_session_set_threads(sql_session *s, int threads);
void sql_session_set_mode(sql_session *s, ex_mode mode);

/* ----------------------------------------------------------------- catalog */

/* Register every DIR/<name>.parquet file and every DIR/<name>/ directory
 * holding *.parquet parts, or hive partition folders (key=value/...), as
 * table <name> (lower-cased). Returns PA_EIO when DIR cannot be read. A
 * table whose files cannot be read (not Parquet, truncated, columns that do
 * not fit together) is skipped: the session keeps a warning naming it and
 * why (sql_session_warnings), the other tables register. A name already
 * registered is replaced. */
int sql_register_dir(sql_session *s, const char *dir, pa_err *err);
/* The warnings kept since the last clear ("table bad skipped: dd/bad.parquet:
 * not a Parquet file"), owned by the session; returns how many. The library
 * prints nothing: the caller shows them. */
int sql_session_warnings(const sql_session *s, const char *const **out);
void sql_session_clear_warnings(sql_session *s);
/* Register one table from a file, a directory of parts, or a glob. The
 * schema is read from the (first) file's footer now. */
int sql_register_table(sql_session *s, const char *name, const char *path, pa_err *err);

typedef struct sql_table_info {
    const char *name;
    bool is_view;
    const char *source;               /* path or glob; a view: its CREATE VIEW statement */
    int n_columns;
    const char *const *column_names;
    const pa_type *column_types;
    int64_t rows;                     /* from the Parquet footers; -1 for a view */
} sql_table_info;

/* Tables and views in name order. The info points into the session and is
 * valid until the catalog changes. */
int sql_table_count(const sql_session *s);
int sql_table_get(sql_session *s, int i, sql_table_info *out, pa_err *err);
/* By name; PA_ENOTFOUND when there is no such table or view. */
int sql_table_find(sql_session *s, const char *name, sql_table_info *out, pa_err *err);

/* -------------------------------------------------------------- statements */

typedef enum sql_result_kind {
    SQL_RESULT_ROWS,          /* a SELECT: rows in `rows` */
    SQL_RESULT_TEXT,          /* EXPLAIN [ANALYZE]: the plan as text lines in `text` */
    SQL_RESULT_OK,            /* CREATE / DROP: a one-line message in `text` */
} sql_result_kind;

typedef struct sql_result {
    sql_result_kind kind;
    ex_result *rows;          /* SQL_RESULT_ROWS; also set after EXPLAIN ANALYZE */
    char *text;               /* SQL_RESULT_TEXT and SQL_RESULT_OK; NUL-terminated */
    uint64_t ns_plan;         /* parse + bind + optimise + lower */
    uint64_t ns_run;          /* ex_run */
    /* Several ranks (rank 0's result): the statement's work per rank, for
     * the time it could take at best (Tmin). n_ranks 0: one process. */
    int n_ranks;
    int64_t max_read, max_received;   /* bytes read from storage, received from other ranks */
    int max_read_rank, max_received_rank;
    int64_t total_read, total_received;
} sql_result;

/* Run exactly one statement (a trailing ';' and surrounding whitespace or
 * comments are allowed; a second statement is an error). On error *out is
 * NULL and sql_error_offset tells where. */
int sql_execute(sql_session *s, const char *text, sql_result **out, pa_err *err);
void sql_result_destroy(sql_result *r);

/* Byte offset into the last statement text of the last error, or -1. */
int sql_error_offset(const sql_session *s);

/* Ask the statement running in sql_execute to stop: it returns
 * PA_ECANCELED soon after. Async-signal-safe. A cancel that arrives when
 * nothing runs is forgotten at the next sql_execute. */
void sql_session_cancel(sql_session *s);

/* Rows the running statement's scans have produced so far and the rows
 * their files hold (from the footers; pruned row groups still count in the
 * total). Both 0 when nothing runs. Safe from any thread. */
void sql_progress(const sql_session *s, int64_t *rows_scanned, int64_t *rows_total);

/* ------------------------------------------------------------------ scripts */

/* Split text into statements at top-level ';' (not in quotes, comments or
 * dollar quotes). Each span is [start, start + len) of text without the
 * ';'; spans that hold only whitespace or comments are left out. *spans is
 * pa_malloc'd (pa_free it). PA_ESYNTAX for an unterminated quote or
 * comment, with sql_error_offset-style offset in *err_offset. */
typedef struct sql_span {
    int start, len;
} sql_span;
int sql_split(const char *text, sql_span **spans, int *n, int *err_offset, pa_err *err);

/* True when text holds at least one complete statement, i.e. ends (outside
 * quotes and comments) with ';' after something other than whitespace.
 * For a shell deciding whether to read another line. */
bool sql_statement_complete(const char *text);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_SQL_H */

/*
 * session.c - sessions and statements: parse, dispatch (SELECT, EXPLAIN,
 * CREATE VIEW / TABLE AS, DROP), compile (bind, optimise, lower), run.
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <errno.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

int sql_session_create(const sql_options *opt, sql_session **out, pa_err *err)
{
    *out = NULL;
    if (!opt || !opt->dev)
        return pa_error(err, PA_EINVAL, "sql session: a device is required");
    sql_session *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "sql session");
    s->opt = *opt;
    s->opt.data_dir = NULL;
    s->err_offset = -1;
    if (opt->data_dir) {
        int rc;
        if (!(s->data_dir = pa_strdup(opt->data_dir)))
            rc = pa_error(err, PA_ENOMEM, "sql session");
        else {
            /* CREATE TABLE's temporary files left by a killed process. */
            pq_writer_clean_stale(opt->data_dir);
            rc = sql_register_dir(s, opt->data_dir, err);
        }
        if (rc) {
            sql_session_destroy(s);
            return rc;
        }
    }
    *out = s;
    return PA_OK;
}

void sql_session_destroy(sql_session *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_tables; i++)
        sq_table_free(s->tables[i]);
    for (int i = 0; i < s->n_adhoc; i++)
        sq_table_free(s->adhoc[i]);
    pa_free(s->tables);
    pa_free(s->adhoc);
    pa_free(s->data_dir);
    sql_session_clear_warnings(s);
    pa_free(s);
}

dv_device *sql_session_device(const sql_session *s) { return s->opt.dev; }
void sql_session_set_threads(sql_session *s, int threads) { s->opt.threads = threads; }
void sql_session_set_mode(sql_session *s, ex_mode mode) { s->opt.mode = mode; }
int sql_error_offset(const sql_session *s) { return s->err_offset; }
void sql_session_cancel(sql_session *s) { s->cancel = 1; }

void sql_progress(const sql_session *s, int64_t *rows_scanned, int64_t *rows_total)
{
    if (!s->running) {
        *rows_scanned = *rows_total = 0;
        return;
    }
    *rows_scanned = atomic_load(&((sql_session *)s)->progress.rows_scanned);
    *rows_total = atomic_load(&((sql_session *)s)->progress.rows_total);
}

void sql_result_destroy(sql_result *r)
{
    if (!r)
        return;
    ex_result_destroy(r->rows);
    pa_free(r->text);
    pa_free(r);
}

/* ------------------------------------------------------------- compile */
/* Bind and lower a query. With `spread` and several ranks the plan is
 * spread first (distribute.c); a rank whose part is then done sets
 * c->passive and gets no root. */
static int compile(sq_ctx *c, pgn *query, bool spread, ex_op **root)
{
    sq_node *n;
    const char **names;
    *root = NULL;
    int rc = sq_bind_select(c, query, NULL, &n, &names, NULL);
    if (rc == PA_OK && spread)
        rc = sq_distribute(c, &n);
    if (rc == PA_OK && !c->passive)
        rc = sq_lower_root(c, n, names, root);
    return rc;
}

/* A rank other than 0 after its part of a spread statement. */
static int passive_result(sq_ctx *c, sql_result *res)
{
    char t[96];
    snprintf(t, sizeof t, "rank %d: its share went to rank 0", nt_rank(c->s->opt.world));
    res->kind = SQL_RESULT_OK;
    res->text = pa_strdup(t);
    return res->text ? PA_OK : sq_fail(c, -1, PA_ENOMEM, "out of memory");
}

/* The statement's run; its counters (bytes read...) and time include
 * those of the WITH queries materialized while planning it. */
static int run(sq_ctx *c, ex_op *root, ex_result **out)
{
    int rc = sq_run(c, c->plan, root, out);
    for (int i = 0; rc == PA_OK && i < c->n_mats; i++) {
        ex_query_stats *a = &(*out)->stats;
        const ex_query_stats *b = &c->mats[i]->stats;
        for (int k = 0; k < PA_CTR__COUNT; k++)
            a->counters.v[k] += b->counters.v[k];
        a->ns_total += b->ns_total;
        if (b->mem_peak > a->mem_peak)
            a->mem_peak = b->mem_peak;
    }
    return rc;
}

int sq_run(sq_ctx *c, ex_plan *plan, ex_op *root, ex_result **out)
{
    return sq_run_ex(c, plan, root, false, out);
}

int sq_run_ex(sq_ctx *c, ex_plan *plan, ex_op *root, bool keep_on_device, ex_result **out)
{
    sql_session *s = c->s;
    ex_run_options o = {0};
    o.keep_on_device = keep_on_device;
    o.dev = s->opt.dev;
    o.mode = s->opt.mode;
    o.threads = s->opt.threads;
    o.cancel = &s->cancel;
    atomic_store(&s->progress.rows_scanned, 0);
    atomic_store(&s->progress.rows_total, 0);
    o.progress = &s->progress;
    bool round_failed = false;   /* every rank has the error already: no statement round for it */
    o.round_failed = &round_failed;
    s->running = true;
    int rc = ex_run(plan, root, &o, out, c->err);
    s->running = false;
    if (round_failed)
        c->dist_round = true;
    return rc;
}

static char *explain_text(sq_ctx *c, ex_op *root, const ex_result *analyzed)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        sq_fail(c, -1, PA_ENOMEM, "EXPLAIN: out of memory");
        return NULL;
    }
    if (c->dist_note)
        fprintf(f, "%s\n", c->dist_note);
    for (int i = 0; i < c->n_mats; i++) {
        if (!c->mat_names[i])   /* rows an exchange moved between ranks (distribute.c) */
            continue;
        fprintf(f, "with: %s evaluated once before the query: %lld rows, %.3f ms, %lld bytes read\n", c->mat_names[i],
                (long long)c->mats[i]->n_rows, (double)c->mats[i]->stats.ns_total / 1e6,
                (long long)c->mats[i]->stats.counters.v[PA_CTR_BYTES_READ]);
    }
    int rc = ex_explain(c->plan, root, analyzed, c->s->opt.dev, f);
    fclose(f);
    if (rc < 0) {
        free(buf);
        sq_fail(c, -1, PA_EIO, "EXPLAIN: could not write the plan");
        return NULL;
    }
    char *t = pa_strdup(buf ? buf : "");
    free(buf);
    if (!t)
        sq_fail(c, -1, PA_ENOMEM, "EXPLAIN: out of memory");
    return t;
}

static char *lower_name(const char *s)
{
    char *d = pa_strdup(s);
    for (char *p = d; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

/* r's rows as the Parquet file path (through a temporary file renamed at
 * the end: the file is whole or not there). */
static int write_parquet(sq_ctx *c, const ex_result *r, const char *path, const pq_writer_options *wo)
{
    pq_writer *w = NULL;
    pq_write_column *cols = pa_calloc((size_t)r->n_columns + 1, sizeof *cols);
    if (!cols)
        return pa_error(c->err, PA_ENOMEM, "writing %s: out of memory", path);
    for (int i = 0; i < r->n_columns; i++)
        cols[i] = (pq_write_column){r->names[i], r->types[i], true};
    int rc = pq_writer_create(path, cols, (uint32_t)r->n_columns, wo, &w, c->err);
    pa_free(cols);
    for (int k = 0; rc == PA_OK && k < r->n_chunks; k++)
        rc = pq_writer_write(w, r->chunks[k]->columns, r->chunks[k]->length, c->err);
    if (w)
        rc = rc == PA_OK ? pq_writer_close(w, c->err) : (pq_writer_abort(w), rc);
    return rc;
}

/* A table name becomes <data dir>/<name>.parquet or a folder <name>: it
 * must stay a plain file name in that directory ("../x" wrote outside it),
 * and names starting with '.' are the writer's temporary files. */
static bool name_ok(sq_ctx *c, const char *name, int loc)
{
    if (!name[0] || strchr(name, '/') || name[0] == '.' || strlen(name) > 200) {
        sq_fail(c, loc, PA_EINVAL,
                "table name \"%s\" cannot be a file name in the data directory (it is empty, longer than 200 "
                "bytes, holds '/' or starts with '.')",
                name);
        return false;
    }
    return true;
}

/* CREATE TABLE name AS SELECT: run, write <data dir>/<name>.parquet. */
static int create_table(sq_ctx *c, PgQuery__CreateTableAsStmt *st, sql_result *res)
{
    sql_session *s = c->s;
    if (st->objtype != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "CREATE MATERIALIZED VIEW is not supported");
    if (!s->data_dir)
        return sq_fail(c, -1, PA_EINVAL, "CREATE TABLE needs a data directory (--data DIR)");
    char *name = lower_name(st->into->rel->relname);
    if (!name)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    if (!name_ok(c, name, st->into->rel->location)) {
        pa_free(name);
        return c->err->code;
    }
    if (sq_catalog_find(s, name)) {
        int rc = st->if_not_exists ? PA_OK : sq_fail(c, st->into->rel->location, PA_EINVAL, "table \"%s\" already exists", name);
        if (rc == PA_OK && !(res->text = pa_strdup("CREATE TABLE (exists)")))
            rc = PA_ENOMEM;
        pa_free(name);
        return rc;
    }
    ex_op *root;
    ex_result *r = NULL;
    if (s->opt.world && nt_size(s->opt.world) > 1) {
        pa_free(name);
        return sq_fail(c, -1, PA_EUNSUPPORTED, "CREATE TABLE AS is not supported across ranks yet");
    }
    int rc = compile(c, st->query, false, &root);
    if (rc == PA_OK)
        rc = run(c, root, &r);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.parquet", s->data_dir, name);
    if (rc == PA_OK) {
        pq_writer_options wo;
        pq_writer_options_init(&wo);
        wo.no_replace = true; /* a file made since the catalog was read (another process) is kept */
        rc = write_parquet(c, r, path, &wo);
    }
    if (rc == PA_OK)
        rc = sql_register_table(s, name, path, c->err);
    if (rc == PA_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "CREATE TABLE %s: %lld rows", name, (long long)r->n_rows);
        if (!(res->text = pa_strdup(msg)))
            rc = pa_error(c->err, PA_ENOMEM, "CREATE TABLE");
    }
    ex_result_destroy(r);
    pa_free(name);
    return rc;
}

/* ------------------------------------------------- CREATE TABLE, INSERT */

/* CREATE TABLE name (column type [NOT NULL], ...): a folder <data
 * dir>/<name> holding one Parquet file of no rows with the columns (NOT
 * NULL ones REQUIRED); INSERT adds files beside it. */
static int create_table_cols(sq_ctx *c, PgQuery__CreateStmt *st, sql_result *res)
{
    sql_session *s = c->s;
    int loc = st->relation->location;
    if (!s->data_dir)
        return sq_fail(c, -1, PA_EINVAL, "CREATE TABLE needs a data directory (--data DIR)");
    if (st->n_inh_relations || st->partspec || st->of_typename || st->n_constraints || st->n_options)
        return sq_fail(c, loc, PA_EUNSUPPORTED,
                       "CREATE TABLE with INHERITS, PARTITION BY, OF, WITH or table constraints is not supported");
    if (s->opt.world && nt_size(s->opt.world) > 1)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "CREATE TABLE is not supported across ranks yet");
    char *name = lower_name(st->relation->relname);
    if (!name)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    int rc = PA_OK;
    size_t n = st->n_table_elts;
    pq_write_column *cols = pa_calloc(n + 1, sizeof *cols);
    char **names = pa_calloc(n + 1, sizeof *names);
    if (!cols || !names)
        rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
    if (rc == PA_OK && !name_ok(c, name, loc))
        rc = c->err->code;
    if (rc == PA_OK && sq_catalog_find(s, name)) {
        if (st->if_not_exists && !(res->text = pa_strdup("CREATE TABLE (exists)")))
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
        else if (!st->if_not_exists)
            rc = sq_fail(c, loc, PA_EINVAL, "table \"%s\" already exists", name);
        goto done;
    }
    if (rc == PA_OK && n == 0)
        rc = sq_fail(c, loc, PA_EINVAL, "CREATE TABLE needs at least one column");
    for (size_t i = 0; rc == PA_OK && i < n; i++) {
        PgQuery__ColumnDef *cd = st->table_elts[i]->column_def;
        if (!cd) {
            rc = sq_fail(c, loc, PA_EUNSUPPORTED, "CREATE TABLE: only column definitions are supported (no LIKE, no table constraints)");
            break;
        }
        if (!(names[i] = lower_name(cd->colname))) {
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
            break;
        }
        for (size_t j = 0; j < i && rc == PA_OK; j++)
            if (!strcmp(names[j], names[i]))
                rc = sq_fail(c, cd->location, PA_EINVAL, "column \"%s\" specified more than once", names[i]);
        pa_type t;
        if (rc == PA_OK)
            rc = sq_type_of(c, cd->type_name, &t);
        bool nullable = !cd->is_not_null;
        for (size_t k = 0; rc == PA_OK && k < cd->n_constraints; k++) {
            PgQuery__Constraint *k_ = cd->constraints[k]->constraint;
            if (k_ && k_->contype == PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL)
                nullable = false;
            else if (!k_ || k_->contype != PG_QUERY__CONSTR_TYPE__CONSTR_NULL)
                rc = sq_fail(c, k_ ? k_->location : cd->location, PA_EUNSUPPORTED,
                             "column \"%s\": constraints other than NOT NULL (PRIMARY KEY, UNIQUE, CHECK, DEFAULT, "
                             "REFERENCES) are not supported", names[i]);
        }
        if (cd->raw_default && rc == PA_OK)
            rc = sq_fail(c, cd->location, PA_EUNSUPPORTED, "column \"%s\": DEFAULT is not supported", names[i]);
        cols[i] = (pq_write_column){names[i], t, nullable};
    }
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", s->data_dir, name);
    snprintf(path, sizeof path, "%s/part-000000.parquet", dir);
    bool made = false;
    if (rc == PA_OK) {
        struct stat sb;
        char file[4200];
        snprintf(file, sizeof file, "%s.parquet", dir);
        if (stat(file, &sb) == 0 || stat(dir, &sb) == 0)
            rc = sq_fail(c, loc, PA_EINVAL, "table \"%s\": %s exists already in the data directory", name,
                         stat(file, &sb) == 0 ? file : dir);
        else if (mkdir(dir, 0755) != 0)
            rc = pa_error(c->err, PA_EIO, "CREATE TABLE %s: cannot make %s: %s", name, dir, strerror(errno));
        else
            made = true;
    }
    if (rc == PA_OK) {
        pq_writer *w = NULL;
        pq_writer_options wo;
        pq_writer_options_init(&wo);
        wo.no_replace = true;
        rc = pq_writer_create(path, cols, (uint32_t)n, &wo, &w, c->err);
        if (rc == PA_OK)
            rc = pq_writer_close(w, c->err);
    }
    if (rc == PA_OK)
        rc = sql_register_table(s, name, dir, c->err);
    if (rc == PA_OK && !(res->text = pa_strdup("CREATE TABLE")))
        rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
    if (rc != PA_OK && made) {   /* nothing left behind */
        unlink(path);
        rmdir(dir);
    }
done:
    for (size_t i = 0; names && i < n; i++)
        pa_free(names[i]);
    pa_free(names);
    pa_free(cols);
    pa_free(name);
    return rc;
}

/* Output j of n is a bare NULL (SELECT NULL, a VALUES column of NULLs):
 * it takes the target column's type, whatever the literal's own. */
static bool untyped_null(const sq_node *n, int j)
{
    const sq_node *p = n;
    while (p && (p->kind == SQ_L_SORT || p->kind == SQ_L_LIMIT) && p->in[0] && p->in[0]->n_out == p->n_out)
        p = p->in[0];
    if (!p || j >= p->n_out || !p->exprs)
        return false;
    if (p->kind == SQ_L_PROJECT)
        return p->exprs[j]->kind == SQ_E_CONST && p->exprs[j]->flag;
    if (p->kind != SQ_L_VALUES)
        return false;
    for (int64_t r = 0; r < p->n_rows; r++) {
        const sq_expr *e = p->exprs[r * p->n_out + j];
        if (e->kind != SQ_E_CONST || !e->flag)
            return false;
    }
    return true;
}

/* The next free part number of folder dir (1 + the largest part-N.parquet). */
static long next_part(const char *dir)
{
    long next = 1;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        long k;
        char tail[16];
        if (sscanf(de->d_name, "part-%ld.%15s", &k, tail) == 2 && !strcmp(tail, "parquet") && k >= next)
            next = k + 1;
    }
    if (d)
        closedir(d);
    return next;
}

/* INSERT INTO table [(columns)] VALUES ... | SELECT ...: the rows cast to
 * the table's types (columns not named are NULL) go to a new Parquet file
 * in the table's folder, written whole under a temporary name, then the
 * table is read again. */
static int insert(sq_ctx *c, PgQuery__InsertStmt *st, sql_result *res)
{
    sql_session *s = c->s;
    int loc = st->relation->location;
    if (st->on_conflict_clause || st->n_returning_list || st->with_clause)
        return sq_fail(c, loc, PA_EUNSUPPORTED, "INSERT with ON CONFLICT, RETURNING or WITH is not supported");
    if (!st->select_stmt)
        return sq_fail(c, loc, PA_EUNSUPPORTED, "INSERT ... DEFAULT VALUES is not supported");
    if (s->opt.world && nt_size(s->opt.world) > 1)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "INSERT is not supported across ranks yet");
    char *name = lower_name(st->relation->relname);
    if (!name)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    sq_table *t = sq_catalog_find(s, name);
    struct stat sb;
    int rc = PA_OK;
    if (!t)
        rc = sq_fail(c, loc, PA_ENOTFOUND, "relation \"%s\" does not exist", name);
    else if (t->is_view)
        rc = sq_fail(c, loc, PA_EINVAL, "cannot insert into view \"%s\"", name);
    else if (t->n_paths < 1 || stat(t->source, &sb) != 0 || !S_ISDIR(sb.st_mode))
        rc = sq_fail(c, loc, PA_EUNSUPPORTED,
                     "cannot insert into \"%s\": it is the file %s; INSERT adds files to a table made by CREATE TABLE "
                     "%s (columns), a folder of Parquet files",
                     name, t->source, name);
    pa_free(name);
    if (rc != PA_OK)
        return rc;
    int nt = t->n_cols;
    int *src = pa_malloc((size_t)nt * sizeof *src);   /* query column of each table column, -1: NULL */
    if (!src)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    for (int i = 0; i < nt; i++)
        src[i] = st->n_cols ? -1 : i;
    for (size_t j = 0; rc == PA_OK && j < st->n_cols; j++) {
        PgQuery__ResTarget *rt = st->cols[j]->res_target;
        int k = -1;
        for (int i = 0; rt && i < nt; i++)
            if (!strcasecmp(t->col_names[i], rt->name))
                k = i;
        if (k < 0)
            rc = sq_fail(c, rt ? rt->location : loc, PA_ENOTFOUND, "column \"%s\" of relation \"%s\" does not exist",
                         rt ? rt->name : "?", t->name);
        else if (src[k] >= 0)
            rc = sq_fail(c, rt->location, PA_EINVAL, "column \"%s\" specified more than once", t->col_names[k]);
        else
            src[k] = (int)j;
    }
    int n_target = st->n_cols ? (int)st->n_cols : nt;
    ex_op *root = NULL;
    ex_result *r = NULL;
    sq_node *qn = NULL;
    const char **qnames = NULL;
    if (rc == PA_OK)
        rc = sq_bind_select(c, st->select_stmt, NULL, &qn, &qnames, NULL);
    if (rc == PA_OK)
        rc = sq_lower_root(c, qn, qnames, &root);
    if (rc == PA_OK && ex_op_columns(root) != n_target)
        rc = sq_fail(c, -1, PA_EINVAL, "INSERT has more %s than %s", ex_op_columns(root) > n_target ? "expressions" : "target columns",
                     ex_op_columns(root) > n_target ? "target columns" : "expressions");
    if (rc == PA_OK) {
        ex_expr **ex = pa_calloc((size_t)nt + 1, sizeof *ex);
        if (!ex)
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
        for (int i = 0; rc == PA_OK && i < nt; i++) {
            ex[i] = src[i] < 0 || untyped_null(qn, src[i])
                        ? ex_expr_null(c->plan, t->col_types[i], c->err)
                        : ex_expr_cast(c->plan, ex_expr_col(c->plan, root, src[i], c->err), t->col_types[i], c->err);
            if (!ex[i])
                rc = pa_error(c->err, c->err->code ? c->err->code : PA_EINVAL, "column \"%s\" is of type %s: %s",
                              t->col_names[i], pa_type_name(t->col_types[i].id), c->err->msg);
        }
        if (rc == PA_OK)
            rc = ex_project(c->plan, root, ex, (const char *const *)t->col_names, nt, &root, c->err);
        pa_free(ex);
    }
    if (rc == PA_OK)
        rc = run(c, root, &r);
    /* NOT NULL columns */
    for (int i = 0; rc == PA_OK && t->col_nullable && i < nt; i++) {
        if (t->col_nullable[i])
            continue;
        for (int k = 0; rc == PA_OK && k < r->n_chunks; k++)
            for (int64_t row = 0; row < r->chunks[k]->length; row++)
                if (!pa_column_valid(&r->chunks[k]->columns[i], row)) {
                    rc = sq_fail(c, -1, PA_EINVAL, "null value in column \"%s\" of relation \"%s\" violates not-null constraint",
                                 t->col_names[i], t->name);
                    break;
                }
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", t->source);
    char tname[256];
    snprintf(tname, sizeof tname, "%s", t->name);
    if (rc == PA_OK && r->n_rows > 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/part-%06ld.parquet", dir, next_part(dir));
        pq_write_column *cols = pa_calloc((size_t)nt + 1, sizeof *cols);
        pq_writer *w = NULL;
        pq_writer_options wo;
        pq_writer_options_init(&wo);
        wo.no_replace = true;   /* another process's insert made the same part: fail, keep it */
        if (!cols)
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
        for (int i = 0; rc == PA_OK && i < nt; i++)
            cols[i] = (pq_write_column){t->col_names[i], t->col_types[i], !t->col_nullable || t->col_nullable[i]};
        if (rc == PA_OK)
            rc = pq_writer_create(path, cols, (uint32_t)nt, &wo, &w, c->err);
        pa_free(cols);
        for (int k = 0; rc == PA_OK && k < r->n_chunks; k++)
            rc = pq_writer_write(w, r->chunks[k]->columns, r->chunks[k]->length, c->err);
        if (w)
            rc = rc == PA_OK ? pq_writer_close(w, c->err) : (pq_writer_abort(w), rc);
        if (rc == PA_OK)
            rc = sql_register_table(s, tname, dir, c->err);   /* t is freed here */
    }
    if (rc == PA_OK) {
        char msg[64];
        snprintf(msg, sizeof msg, "INSERT 0 %lld", (long long)r->n_rows);
        if (!(res->text = pa_strdup(msg)))
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory");
    }
    ex_result_destroy(r);
    pa_free(src);
    return rc;
}

/* ------------------------------------------------------------- COPY TO */

/* An option's value as text ("" when it has none). */
static const char *opt_text(PgQuery__DefElem *d, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!d->arg)
        return buf;
    switch (d->arg->node_case) {
    case PG_QUERY__NODE__NODE_STRING: snprintf(buf, cap, "%s", d->arg->string->sval); break;
    case PG_QUERY__NODE__NODE_INTEGER: snprintf(buf, cap, "%d", d->arg->integer->ival); break;
    case PG_QUERY__NODE__NODE_BOOLEAN: snprintf(buf, cap, "%s", d->arg->boolean->boolval ? "true" : "false"); break;
    case PG_QUERY__NODE__NODE_A_STAR: snprintf(buf, cap, "*"); break;
    default: snprintf(buf, cap, "?"); break;
    }
    return buf;
}

/* A boolean option (HEADER): no value, true/false/on/off/1/0. */
static int opt_bool(sq_ctx *c, PgQuery__DefElem *d, bool *out)
{
    char b[64];
    const char *v = opt_text(d, b, sizeof b);
    if (!*v || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1"))
        *out = true;
    else if (!strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0"))
        *out = false;
    else
        return sq_fail(c, d->location, PA_EINVAL, "%s requires a Boolean value, not \"%s\"", d->defname, v);
    return PA_OK;
}

/* r's rows as CSV at path, through a temporary file beside it renamed at
 * the end. */
static int write_csv(sq_ctx *c, const ex_result *r, const char *path, char sep, bool header)
{
    char tmp[4200];
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(tmp, sizeof tmp, "%.*s.%s.tmp.%ld.XXXXXX", dir_len, path, slash ? slash + 1 : path, (long)getpid());
    int fd = mkstemp(tmp);
    if (fd < 0)
        return pa_error(c->err, PA_EIO, "COPY: cannot create a file beside %s: %s", path, strerror(errno));
    fchmod(fd, 0644);   /* mkstemp's 0600 is for the temporary name only */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return pa_error(c->err, PA_EIO, "COPY: %s: %s", path, strerror(errno));
    }
    int w = ex_result_write_csv_full(r, f, sep, header);
    int e = errno;
    if (fclose(f) != 0 && w == 0) {
        w = -1;
        e = errno;
    }
    if (w != 0) {
        unlink(tmp);
        return pa_error(c->err, PA_EIO, "COPY: writing %s failed: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return pa_error(c->err, PA_EIO, "COPY: cannot put the file at %s: %s", path, strerror(e));
    }
    return PA_OK;
}

/* COPY (query) TO 'file' / COPY table TO 'file', WITH (FORMAT parquet |
 * csv, HEADER, DELIMITER 'c', COMPRESSION codec): the file is written
 * whole or not at all (a temporary file renamed), replacing one there. */
static int copy_to(sq_ctx *c, PgQuery__CopyStmt *st, sql_result *res)
{
    sql_session *s = c->s;
    if (st->is_from)
        return sq_fail(c, -1, PA_EUNSUPPORTED,
                       "COPY FROM is not supported: tables are Parquet files (--data DIR, read_parquet('path'))");
    if (st->is_program)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "COPY TO PROGRAM is not supported");
    if (!st->filename || !*st->filename)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "COPY TO STDOUT is not supported: name a file");
    if (st->n_attlist || st->where_clause)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "COPY with a column list or WHERE is not supported (COPY (SELECT ...) TO is)");
    if (s->opt.world && nt_size(s->opt.world) > 1)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "COPY is not supported across ranks yet");
    size_t fl = strlen(st->filename);
    bool parquet = fl >= 8 && !strcasecmp(st->filename + fl - 8, ".parquet"), header = false;
    char sep = ',';
    pq_writer_options wo;
    pq_writer_options_init(&wo);
    for (size_t i = 0; i < st->n_options; i++) {
        PgQuery__DefElem *d = st->options[i]->def_elem;
        if (!d)
            continue;
        char b[256];
        const char *v = opt_text(d, b, sizeof b);
        int rc = PA_OK;
        if (!strcasecmp(d->defname, "format")) {
            if (!strcasecmp(v, "parquet"))
                parquet = true;
            else if (!strcasecmp(v, "csv"))
                parquet = false;
            else
                rc = sq_fail(c, d->location, PA_EUNSUPPORTED, "COPY format \"%s\" is not supported (parquet, csv)", v);
        } else if (!strcasecmp(d->defname, "header"))
            rc = opt_bool(c, d, &header);
        else if (!strcasecmp(d->defname, "delimiter")) {
            if (strlen(v) != 1 || *v == '"' || *v == '\n' || *v == '\r')
                rc = sq_fail(c, d->location, PA_EINVAL, "COPY delimiter must be a single one-byte character other than a quote or line break");
            sep = *v;
        } else if (!strcasecmp(d->defname, "compression") || !strcasecmp(d->defname, "codec")) {
            static const struct {
                const char *name;
                int32_t codec;
            } codecs[] = {{"lz4_raw", PQ_CODEC_LZ4_RAW}, {"lz4", PQ_CODEC_LZ4_RAW}, {"snappy", PQ_CODEC_SNAPPY},
                          {"zstd", PQ_CODEC_ZSTD},       {"gzip", PQ_CODEC_GZIP},     {"brotli", PQ_CODEC_BROTLI},
                          {"uncompressed", PQ_CODEC_UNCOMPRESSED}};
            int k = -1;
            for (int j = 0; j < (int)(sizeof codecs / sizeof codecs[0]); j++)
                if (!strcasecmp(v, codecs[j].name))
                    k = j;
            if (k < 0)
                rc = sq_fail(c, d->location, PA_EUNSUPPORTED,
                             "COPY compression \"%s\" is not supported (lz4_raw, snappy, zstd, gzip, brotli, uncompressed)", v);
            else
                wo.codec = codecs[k].codec;
        } else
            rc = sq_fail(c, d->location, PA_EUNSUPPORTED, "COPY option \"%s\" is not supported (FORMAT, HEADER, DELIMITER, COMPRESSION)",
                         d->defname);
        if (rc != PA_OK)
            return rc;
    }
    /* The rows: the query, or every column of the table. */
    PgQuery__ParseResult *tree = NULL;
    pgn *query = st->query;
    if (!query) {
        char *name = lower_name(st->relation->relname);
        char text[600];
        if (!name)
            return sq_fail(c, -1, PA_ENOMEM, "out of memory");
        if (strchr(name, '"') || strlen(name) > 500) {
            pa_free(name);
            return sq_fail(c, st->relation->location, PA_EINVAL, "bad table name");
        }
        snprintf(text, sizeof text, "SELECT * FROM \"%s\"", name);
        pa_free(name);
        int off, rc = sq_parse(text, &tree, &off, c->err);
        if (rc != PA_OK)
            return rc;
        query = tree->stmts[0]->stmt;
    }
    ex_op *root;
    ex_result *r = NULL;
    int rc = compile(c, query, false, &root);
    if (rc == PA_OK)
        rc = run(c, root, &r);
    if (rc == PA_OK)
        rc = parquet ? write_parquet(c, r, st->filename, &wo) : write_csv(c, r, st->filename, sep, header);
    if (rc == PA_OK) {
        char msg[64];
        snprintf(msg, sizeof msg, "COPY %lld", (long long)r->n_rows);
        if (!(res->text = pa_strdup(msg)))
            rc = pa_error(c->err, PA_ENOMEM, "COPY");
    }
    ex_result_destroy(r);
    if (tree)
        pg_query__parse_result__free_unpacked(tree, NULL);
    return rc;
}

static int create_view(sq_ctx *c, PgQuery__ViewStmt *v, const char *text, sql_result *res)
{
    sql_session *s = c->s;
    char *name = lower_name(v->view->relname);
    if (!name)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    sq_table *old = sq_catalog_find(s, name);
    int rc = PA_OK;
    if (old && (!old->is_view || !v->replace))
        rc = sq_fail(c, v->view->location, PA_EINVAL, "%s \"%s\" already exists", old->is_view ? "view" : "table", name);

    /* Check that it binds now: errors belong to CREATE VIEW, not to its use. */
    sq_node *n = NULL;
    const char **names = NULL;
    if (rc == PA_OK)
        rc = sq_bind_select(c, v->query, NULL, &n, &names, NULL);
    if (rc == PA_OK && (int)v->n_aliases > n->n_out)
        rc = sq_fail(c, v->view->location, PA_EINVAL, "CREATE VIEW specifies more column names than columns");
    for (size_t i = 0; rc == PA_OK && i < v->n_aliases; i++) {   /* CREATE VIEW v (a, b): the first columns' names */
        char *nm = sq_strdup(&c->A, sq_node_name(v->aliases[i]));
        for (char *p = nm; p && *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (!(names[i] = nm))
            rc = sq_fail(c, -1, PA_ENOMEM, "CREATE VIEW");
    }
    sq_table *t = NULL;
    if (rc == PA_OK) {
        t = pa_calloc(1, sizeof *t);
        if (!t || !(t->name = pa_strdup(name)) || !(t->source = pa_strdup(text)) ||
            !(t->col_names = pa_calloc((size_t)n->n_out + 1, sizeof *t->col_names)) ||
            !(t->col_types = pa_calloc((size_t)n->n_out + 1, sizeof *t->col_types)))
            rc = sq_fail(c, -1, PA_ENOMEM, "CREATE VIEW");
    }
    if (rc == PA_OK) {
        t->is_view = true;
        t->n_cols = n->n_out;
        t->rows = -1;
        for (int i = 0; i < n->n_out && rc == PA_OK; i++) {
            t->col_types[i] = c->cols[n->out[i]].type;
            if (!(t->col_names[i] = pa_strdup(names[i] ? names[i] : "?")))
                rc = sq_fail(c, -1, PA_ENOMEM, "CREATE VIEW");
        }
    }
    if (rc == PA_OK)
        rc = sq_catalog_put(s, t, c->err);
    if (rc == PA_OK) {
        t = NULL;
        if (!(res->text = pa_strdup("CREATE VIEW")))
            rc = PA_ENOMEM;
    }
    sq_table_free(t);
    pa_free(name);
    return rc;
}

static int drop(sq_ctx *c, PgQuery__DropStmt *d, sql_result *res)
{
    sql_session *s = c->s;
    bool view = d->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_VIEW;
    if (!view && d->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "only DROP TABLE and DROP VIEW are supported");
    for (size_t i = 0; i < d->n_objects; i++) {
        pgn *o = d->objects[i];
        const char *nm = NULL;
        if (o->node_case == PG_QUERY__NODE__NODE_LIST && o->list->n_items)
            nm = sq_node_name(o->list->items[o->list->n_items - 1]);
        char *name = nm ? lower_name(nm) : NULL;
        if (!name)
            return sq_fail(c, -1, PA_EINVAL, "DROP: bad name");
        int k = -1;
        for (int j = 0; j < s->n_tables; j++)
            if (!strcmp(s->tables[j]->name, name))
                k = j;
        if (k < 0 || s->tables[k]->is_view != view) {
            int rc = d->missing_ok ? PA_OK : sq_fail(c, -1, PA_ENOTFOUND, "%s \"%s\" does not exist", view ? "view" : "table", name);
            pa_free(name);
            if (rc)
                return rc;
            continue;
        }
        pa_free(name);
        sq_table_free(s->tables[k]);
        memmove(s->tables + k, s->tables + k + 1, (size_t)(s->n_tables - k - 1) * sizeof *s->tables);
        s->n_tables--;
    }
    res->text = pa_strdup(view ? "DROP VIEW" : "DROP TABLE (the files are kept)");
    return res->text ? PA_OK : PA_ENOMEM;
}

static int statement(sq_ctx *c, pgn *stmt, const char *text, sql_result *res)
{
    ex_op *root;
    int rc;
    switch (stmt->node_case) {
    case PG_QUERY__NODE__NODE_SELECT_STMT: {
        uint64_t t0 = pa_now_ns();
        if ((rc = compile(c, stmt, true, &root)))
            return rc;
        if (c->passive)
            return passive_result(c, res);
        uint64_t t1 = pa_now_ns();
        res->ns_plan = t1 - t0;
        res->kind = SQL_RESULT_ROWS;
        rc = run(c, root, &res->rows);
        res->ns_run = pa_now_ns() - t1;
        return rc;
    }
    case PG_QUERY__NODE__NODE_EXPLAIN_STMT: {
        PgQuery__ExplainStmt *e = stmt->explain_stmt;
        bool analyze = false;
        for (size_t i = 0; i < e->n_options; i++) {
            PgQuery__DefElem *d = e->options[i]->def_elem;
            if (d && !strcasecmp(d->defname, "analyze"))
                analyze = true;
            else if (d && strcasecmp(d->defname, "verbose") != 0)
                return sq_fail(c, d->location, PA_EUNSUPPORTED, "EXPLAIN option %s is not supported", d->defname);
        }
        uint64_t t0 = pa_now_ns();
        c->no_run = !analyze;
        if ((rc = compile(c, e->query, analyze, &root)))
            return rc;
        if (c->passive)
            return passive_result(c, res);
        res->ns_plan = pa_now_ns() - t0;
        if (analyze) {
            uint64_t t1 = pa_now_ns();
            if ((rc = run(c, root, &res->rows)))
                return rc;
            res->ns_run = pa_now_ns() - t1;
        }
        res->kind = SQL_RESULT_TEXT;
        return (res->text = explain_text(c, root, res->rows)) ? PA_OK : c->err->code;
    }
    case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT:
        res->kind = SQL_RESULT_OK;
        return create_table(c, stmt->create_table_as_stmt, res);
    case PG_QUERY__NODE__NODE_VIEW_STMT: res->kind = SQL_RESULT_OK; return create_view(c, stmt->view_stmt, text, res);
    case PG_QUERY__NODE__NODE_COPY_STMT: res->kind = SQL_RESULT_OK; return copy_to(c, stmt->copy_stmt, res);
    case PG_QUERY__NODE__NODE_DROP_STMT: res->kind = SQL_RESULT_OK; return drop(c, stmt->drop_stmt, res);
    case PG_QUERY__NODE__NODE_CREATE_STMT: res->kind = SQL_RESULT_OK; return create_table_cols(c, stmt->create_stmt, res);
    case PG_QUERY__NODE__NODE_INSERT_STMT: res->kind = SQL_RESULT_OK; return insert(c, stmt->insert_stmt, res);
    case PG_QUERY__NODE__NODE_UPDATE_STMT:
    case PG_QUERY__NODE__NODE_DELETE_STMT:
        return sq_fail(c, -1, PA_EUNSUPPORTED, "UPDATE and DELETE are not supported: tables are Parquet files, which "
                                               "Pista adds to (INSERT) but never rewrites");
    default: return sq_fail(c, -1, PA_EUNSUPPORTED, "this kind of statement is not supported");
    }
}

/* Several ranks: after every statement that got a context, each rank's
 * bytes read and received go to rank 0 (one more round, made whatever
 * happened, unless the world is broken), into res there. A rank's bytes
 * read: rank 0's result counts all it ran (the parts kept as exchanged
 * rows included); elsewhere, the parts and the WITH queries run here. */
static void stats_round(sq_ctx *c, sql_result *res, const nt_stats *net0)
{
    nt_world *w = c->s->opt.world;
    if (!w || nt_size(w) < 2 || nt_broken(w))
        return;
    int size = nt_size(w);
    nt_stats net;
    nt_stats_get(w, &net);
    int64_t mine[2] = {c->dist_read, net.bytes_received - net0->bytes_received};
    for (int i = 0; i < c->n_mats; i++)
        if (c->mat_names[i])
            mine[0] += c->mats[i]->stats.counters.v[PA_CTR_BYTES_READ];
    if (res && res->rows)
        mine[0] = res->rows->stats.counters.v[PA_CTR_BYTES_READ];
    nt_buf *recv = nt_rank(w) == 0 ? pa_calloc((size_t)size, sizeof *recv) : NULL;
    pa_err e;
    pa_err_init(&e);
    if (nt_gather(w, 0, mine, sizeof mine, recv, &e) == PA_OK && recv && res) {
        res->n_ranks = size;
        for (int p = 0; p < size; p++) {
            int64_t v[2] = {0, 0};
            if (recv[p].bytes == sizeof v)
                memcpy(v, recv[p].data, sizeof v);
            res->total_read += v[0];
            res->total_received += v[1];
            if (v[0] > res->max_read || p == 0)
                res->max_read = v[0], res->max_read_rank = p;
            if (v[1] > res->max_received || p == 0)
                res->max_received = v[1], res->max_received_rank = p;
        }
    }
    for (int p = 0; recv && p < size; p++)
        nt_buf_release(w, recv[p].data);
    pa_free(recv);
    pa_err_close(&e);
}

int sql_execute(sql_session *s, const char *text, sql_result **out, pa_err *err)
{
    *out = NULL;
    s->err_offset = -1;
    s->cancel = 0;
    PgQuery__ParseResult *tree;
    int off;
    int prc = sq_parse(text, &tree, &off, err);
    sq_ctx lone = {.s = s, .err = err};   /* the round of a statement that never got a context */
    if (prc != PA_OK) {
        s->err_offset = off;
        return sq_statement_round(&lone, prc);
    }
    int rc = PA_OK;
    if (tree->n_stmts != 1) {
        if (tree->n_stmts == 0)
            rc = pa_error(err, PA_ESYNTAX, "empty statement");
        else {
            s->err_offset = tree->stmts[1]->stmt_location;
            rc = pa_error(err, PA_EINVAL, "one statement at a time (found %zu)", tree->n_stmts);
        }
        pg_query__parse_result__free_unpacked(tree, NULL);
        return sq_statement_round(&lone, rc);
    }
    sql_result *res = pa_calloc(1, sizeof *res);
    sq_ctx c = {.s = s, .text = text, .err = err, .err_loc = -1};
    nt_stats net0 = {0};
    if (s->opt.world)
        nt_stats_get(s->opt.world, &net0);
    if (!res)
        rc = pa_error(err, PA_ENOMEM, "statement");
    if (rc == PA_OK)
        rc = ex_plan_create(&c.plan, err);
    if (rc == PA_OK)
        rc = statement(&c, tree->stmts[0]->stmt, text, res);
    rc = sq_statement_round(&c, rc);   /* several ranks: unless the statement made it */
    stats_round(&c, res, &net0);
    if (rc != PA_OK) {
        s->err_offset = c.err_loc;
        sql_result_destroy(res);
        res = NULL;
    }
    ex_plan_destroy(c.plan);
    for (int i = 0; i < c.n_mats; i++)
        ex_result_destroy(c.mats[i]);
    pa_free(c.mats);
    sq_arena_free(&c.A);
    pg_query__parse_result__free_unpacked(tree, NULL);
    *out = res;
    return rc;
}

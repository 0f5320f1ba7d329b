/*
 * op_scan.c - SCAN: the source over the Parquet scan of src/storage (paths,
 * projection, predicates pushed down for pruning and exact filtering). The
 * builder reads the first file's footer (through the metadata cache) for
 * the output schema and every file's row count for the estimate; the scan
 * itself (pq_scan_open) starts when the scheduler opens the source - at
 * query start in OVERLAPPED mode - and checks every file. Workers share it:
 * pq_scan_next pops the scan's bounded queue and is thread-safe; each
 * popped unit (a row group) goes out as zero-copy morsels of about the
 * query's chunk_rows rows, so every worker gets a share of every unit.
 */
#include "exec/sched_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct scan_state {
    const char **paths;
    int n_paths;
    const char **columns;    /* the output columns, always explicit */
    int n_columns;
    pq_pred *preds;
    int n_preds;
    int share_part, share_parts;   /* ex_scan_set_share */
    pa_type *types;          /* NULL: the files' own */
    int hive;
    bool union_by_name;
    pq_scan *scan;
    /* Morsels: a decoded unit (a whole row group) is handed out as views of
     * at most `morsel` rows each, so all workers share every unit (and the
     * last one) and each works on a cache-sized piece. Guarded by mu. */
    pthread_mutex_t mu;
    bool mu_init;
    int64_t morsel;
    dv_chunk *cur;           /* the unit being handed out (our reference) */
    int64_t at;              /* its next row */
    /* Progress (ex_run_options.progress), under mu. */
    int64_t file_rows;       /* every row of every file, from the footers */
    int64_t reported;        /* rows added to rows_scanned so far */
} scan_state;

typedef struct flist {
    char **v;
    uint32_t n;
} flist;

static void flist_free(flist *l)
{
    pq_paths_free(l->v, l->n);
    l->v = NULL;
    l->n = 0;
}

/* The files a scan of `paths` will read, as pq_scan_open resolves them
 * (pq_paths_expand: a directory's *.parquet sorted, a glob's matches). */
static int list_files(const char *const *paths, int n, flist *out, pa_err *err)
{
    return pq_paths_expand(paths, (size_t)n, &out->v, &out->n, err);
}

/* Output column `name` of file meta m: its engine type. */
static int column_type(const pq_file_meta *m, const char *file, const char *name, pa_type *out, pa_err *err)
{
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        const pq_leaf *l = &m->leaves[i];
        size_t nl = strlen(name);
        if (strcmp(l->path, name) && (strncmp(l->path, name, nl) || l->path[nl] != '.'))
            continue;
        if (l->max_rep_level > 0 || strchr(l->path, '.'))
            return pa_error(err, PA_EUNSUPPORTED, "%s: column %s is nested (only flat columns are supported)",
                            file, name);
        pq_column_desc d;
        int rc = pq_element_type(&m->schema[l->schema_index], l->path, &d, err);
        if (rc == PA_OK)
            *out = d.type;
        return rc;
    }
    return pa_error(err, PA_ENOTFOUND, "%s: no column %s", file, name);
}

static int scan_open(ex_op *op, ex_query *q, pa_err *err)
{
    scan_state *s = op->state;
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = s->paths;
    o.n_paths = (size_t)s->n_paths;
    o.columns = s->columns;
    o.n_columns = (size_t)s->n_columns;
    o.preds = s->preds;
    o.n_preds = (size_t)s->n_preds;
    o.device = q->dev;
    o.max_chunks = q->opt.queue_chunks;
    o.read_first = q->opt.mode == EX_MODE_BLOCKING;   /* whole columns read, then decoded */
    o.share_part = s->share_part;
    o.share_parts = s->share_parts;
    o.types = s->types;
    o.hive_partitioning = s->hive;
    o.union_by_name = s->union_by_name;
    if (!s->mu_init) {
        pthread_mutex_init(&s->mu, NULL);
        s->mu_init = true;
    }
    s->cur = NULL;
    s->reported = 0;
    s->morsel = q->chunk_rows > 0 ? (q->chunk_rows + 63) / 64 * 64 : INT64_MAX / 2;
    int rc = pq_scan_open(&o, &s->scan, err);
    if (rc != PA_OK)
        return rc;
    /* The files may have changed since the plan was built. */
    if (pq_scan_n_columns(s->scan) != op->n_cols)
        return pa_error(err, PA_EINVAL, "%s: the files' columns changed since the plan was built", op->label);
    for (int i = 0; i < op->n_cols; i++) {
        pa_type t = pq_scan_column_type(s->scan, i);
        if (t.id != op->types[i].id || t.precision != op->types[i].precision || t.scale != op->types[i].scale)
            return pa_error(err, PA_EINVAL, "%s: column %s changed type since the plan was built", op->label,
                            op->names[i]);
    }
    return PA_OK;
}

/* A chunk viewing rows [lo, lo+n) of in (lo a multiple of 8, so validity
 * bitmaps are views too), for worker w (NULL: none). The view has no ready
 * event of its own: w's stream waits for in's (its decode), so what w
 * enqueues reads decoded rows; the scheduler then marks the view ready on
 * that stream for whoever reads it next. Without the wait, a morsel after a
 * unit's first was read before the device had decoded it. */
static int view(dv_chunk *in, ex_worker *w, int64_t lo, int64_t n, dv_chunk **out, pa_err *err)
{
    dv_chunk *c = NULL;
    int rc = dv_chunk_wait_ready(in, w ? w->stream : NULL, err);
    if (rc != PA_OK)
        return rc;
    rc = dv_chunk_create(in->dev, in->n_columns, &c, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = dv_chunk_depend(c, in, err)) != PA_OK) {
        dv_chunk_destroy(c);
        return rc;
    }
    for (int j = 0; j < in->n_columns; j++) {
        const pa_column *sc = &in->columns[j];
        pa_column *d = &c->columns[j];
        *d = *sc;
        d->length = n;
        if (pa_type_is_varlen(sc->type.id))
            d->offsets = sc->offsets + lo;   /* offsets are absolute into the same bytes */
        else
            d->data = (uint8_t *)sc->data + (size_t)lo * (size_t)pa_type_bytes(sc->type);
        if (sc->validity)
            d->validity = sc->validity + lo / 8;
    }
    c->length = n;
    *out = c;
    return PA_OK;
}

/* The next morsel: the rest of the current unit when it is at most 1.5
 * morsels (the unit itself when untouched), else a view of one morsel. */
/* Progress: add the rows the scan decoded since the last report; at the
 * end (done) the rest of the files' rows (pruned row groups). Under mu. */
static void report(scan_state *s, ex_query *q, bool done)
{
    ex_progress *pr = q ? q->opt.progress : NULL;
    if (!pr)
        return;
    int64_t now = s->file_rows;
    if (!done || now < 0) {   /* file_rows < 0: the footers were not all read at build */
        pq_scan_stats st;
        pq_scan_get_stats(s->scan, &st);
        now = (int64_t)st.rows_decoded;
        if (s->file_rows >= 0 && now > s->file_rows)
            now = s->file_rows;
    }
    if (now > s->reported) {
        atomic_fetch_add(&pr->rows_scanned, now - s->reported);
        s->reported = now;
    }
}

static int scan_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    scan_state *s = op->state;
    int rc = PA_OK;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    if (!s->cur) {
        /* pq_scan_next blocks at most until the next unit is decoded; a
         * canceled query stops here instead of taking one more. */
        if (w && ex_query_failed(w->q))
            goto done;
        if ((rc = pq_scan_next(s->scan, &s->cur, err)) != PA_OK)
            goto done;
        report(s, w ? w->q : NULL, !s->cur);
        if (!s->cur)
            goto done;
        s->at = 0;
    }
    int64_t left = s->cur->length - s->at;
    if (left <= s->morsel + s->morsel / 2) {
        if (s->at == 0)
            *out = s->cur;
        else if ((rc = view(s->cur, w, s->at, left, out, err)) == PA_OK)
            dv_chunk_destroy(s->cur);
        if (rc == PA_OK)
            s->cur = NULL;
    } else if ((rc = view(s->cur, w, s->at, s->morsel, out, err)) == PA_OK) {
        s->at += s->morsel;
    }
done:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void scan_destroy(ex_op *op)
{
    scan_state *s = op->state;
    if (s && s->mu_init) {
        dv_chunk_destroy(s->cur);
        s->cur = NULL;
        pthread_mutex_destroy(&s->mu);
        s->mu_init = false;
    }
    if (s && s->scan) {
        pq_scan_close(s->scan);
        s->scan = NULL;
    }
}

static const ex_op_vt scan_vt = {
    .kind = EX_OP_SCAN,
    .source_open = scan_open,
    .source_next = scan_next,
    .destroy = scan_destroy,
};

int ex_scan_set_share(ex_op *op, int part, int parts, pa_err *err)
{
    if (!op || op->vt != &scan_vt || !op->state)
        return pa_error(err, PA_EINVAL, "ex_scan_set_share: not a scan");
    if (parts < 1 || part < 0 || part >= parts)
        return pa_error(err, PA_EINVAL, "ex_scan_set_share: share %d of %d", part, parts);
    scan_state *s = op->state;
    s->share_part = part;
    s->share_parts = parts;
    if (parts > 1) {
        size_t n = strlen(op->label);
        snprintf(op->label + n, sizeof op->label - n, " (rank %d's share of %d)", part, parts);
    }
    return PA_OK;
}

int64_t ex__scan_file_rows(const ex_op *op)
{
    if (!op || op->vt != &scan_vt || !op->state)
        return -1;
    return ((const scan_state *)op->state)->file_rows;
}

void ex__scan_detail(const ex_op *op, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!op || op->vt != &scan_vt || !op->state || !((const scan_state *)op->state)->scan)
        return;
    pq_scan_stats st;
    pq_scan_get_stats(((const scan_state *)op->state)->scan, &st);
    int n = snprintf(buf, cap, "files %llu (%llu pruned)  row groups %llu (%llu pruned)",
                     (unsigned long long)st.files, (unsigned long long)st.files_pruned,
                     (unsigned long long)(st.row_groups - st.row_groups_pruned),
                     (unsigned long long)st.row_groups_pruned);
    if (st.mem_waits && n > 0 && (size_t)n < cap)   /* the memory regulation held row groups back */
        snprintf(buf + n, cap - (size_t)n, "  %llu held back for memory (%.1f ms)", (unsigned long long)st.mem_waits,
                 (double)st.ns_mem_wait / 1e6);
}

static const char *copy_str(ex_plan *p, const char *s, bool *oom)
{
    const char *r = ex_plan_strdup(p, s);
    if (s && !r)
        *oom = true;
    return r;
}

int ex_scan(ex_plan *p, const char *const *paths, int n_paths, const char *const *columns, int n_columns,
            const pq_pred *preds, int n_preds, ex_op **out, pa_err *err)
{
    return ex_scan_layout_build(p, paths, n_paths, columns, n_columns, preds, n_preds, NULL, out, err);
}

int ex_scan_layout_build(ex_plan *p, const char *const *paths, int n_paths, const char *const *columns,
                         int n_columns, const pq_pred *preds, int n_preds, const ex_scan_layout *layout,
                         ex_op **out, pa_err *err)
{
    if (!p || !paths || n_paths <= 0 || n_columns < 0 || n_preds < 0 || (n_preds && !preds) || !out ||
        (layout && layout->types && !columns))
        return pa_error(err, PA_EINVAL, "ex_scan: bad arguments");
    flist files = {0};
    const pq_file_meta *m = NULL;
    int rc = list_files(paths, n_paths, &files, err);
    if (rc != PA_OK)
        goto done;
    const pa_type *types = layout ? layout->types : NULL;
    if (!types && (rc = pq_meta_get(files.v[0], &m, err)) != PA_OK)
        goto done;
    int n_out = columns ? n_columns : (int)m->n_leaves;
    ex_op *op;
    if ((rc = ex_op_new(p, &scan_vt, n_out, &op, err)) != PA_OK)
        goto done;
    scan_state *s = ex_plan_alloc(p, sizeof *s);
    bool oom = !s;
    if (s) {
        s->paths = ex_plan_alloc(p, (size_t)n_paths * sizeof *s->paths);
        s->columns = ex_plan_alloc(p, (size_t)(n_out ? n_out : 1) * sizeof *s->columns);
        s->preds = ex_plan_alloc(p, (size_t)(n_preds ? n_preds : 1) * sizeof *s->preds);
        oom = !s->paths || !s->columns || !s->preds;
        if (!oom && types) {
            s->types = ex_plan_alloc(p, (size_t)(n_out ? n_out : 1) * sizeof *s->types);
            oom = !s->types;
            if (s->types)
                memcpy(s->types, types, (size_t)n_out * sizeof *s->types);
        }
        if (layout) {
            s->hive = layout->hive_partitioning;
            s->union_by_name = layout->union_by_name;
        }
    }
    for (int i = 0; !oom && i < n_paths; i++)
        s->paths[i] = copy_str(p, paths[i], &oom);
    for (int i = 0; !oom && i < n_preds; i++) {
        s->preds[i].column = copy_str(p, preds[i].column, &oom);
        s->preds[i].op = preds[i].op;
        s->preds[i].value = copy_str(p, preds[i].value, &oom);
    }
    if (oom) {
        rc = pa_error(err, PA_ENOMEM, "out of memory building a scan");
        goto done;
    }
    s->n_paths = n_paths;
    s->n_preds = n_preds;
    s->n_columns = n_out;
    for (int i = 0; i < n_out; i++) {
        const char *name = columns ? columns[i] : m->leaves[i].path;
        pa_type t;
        if (!name) {
            rc = pa_error(err, PA_EINVAL, "ex_scan: column %d is NULL", i);
            goto done;
        }
        if (types)
            t = types[i];
        else if ((rc = column_type(m, files.v[0], name, &t, err)) != PA_OK)
            goto done;
        if ((rc = ex_op_set_column(op, i, name, t, err)) != PA_OK)
            goto done;
        s->columns[i] = op->names[i];
    }
    for (int i = 0; i < n_preds; i++)
        if (!preds[i].column || (!types && ex_op_find_column(op, preds[i].column) < 0)) {
            /* A filter-only column: it must exist too (the scan reads it). */
            pa_type t;
            if (!preds[i].column) {
                rc = pa_error(err, PA_EINVAL, "ex_scan: predicate %d has no column", i);
                goto done;
            }
            if ((rc = column_type(m, files.v[0], preds[i].column, &t, err)) != PA_OK)
                goto done;
        }
    /* Estimate: every row of every file (predicates not counted). */
    int64_t rows = 0;
    for (uint32_t f = 0; f < files.n; f++) {
        const pq_file_meta *mf;
        if (pq_meta_get(files.v[f], &mf, NULL) != PA_OK) {
            rows = -1;
            break;
        }
        rows += mf->num_rows;
        pq_file_meta_release(mf);
    }
    op->est_rows = rows;
    s->file_rows = rows;
    op->state = s;
    const char *base = strrchr(paths[0], '/');
    snprintf(op->label, sizeof op->label, "SCAN %s%s", base ? base + 1 : paths[0], n_paths > 1 ? " ..." : "");
    *out = op;
done:
    /* On error the op (if made) stays in the plan, unreachable and harmless. */
    if (m)
        pq_file_meta_release(m);
    flist_free(&files);
    return rc;
}

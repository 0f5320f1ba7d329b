/*
 * op_sort_common.c - the pieces SORT and TOPN share (op_sort_int.h):
 * source sets, record buffers, gathering rows into output chunks, runs,
 * the output source role and the builder.
 */
#include "exec/op_sort_int.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------- source sets */

int ex__srcset_add(ex__srcset *s, dv_chunk *c, pa_err *err)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        dv_chunk **ch = pa_realloc(s->chunks, (size_t)cap * sizeof *ch);
        if (!ch)
            return pa_error(err, PA_ENOMEM, "out of memory listing sort inputs");
        s->chunks = ch;
        kn_sort_source *cols = pa_realloc(s->cols, (size_t)cap * sizeof *cols);
        if (!cols)
            return pa_error(err, PA_ENOMEM, "out of memory listing sort inputs");
        s->cols = cols;
        s->cap = cap;
    }
    s->chunks[s->n] = dv_chunk_retain(c);
    s->cols[s->n] = c->columns;
    s->n++;
    return PA_OK;
}

void ex__srcset_pop(ex__srcset *s, dv_stream *st)
{
    if (s->n > 0)
        dv_chunk_release(s->chunks[--s->n], st);
}

int ex__srcset_move(ex__srcset *to, ex__srcset *from, pa_err *err)
{
    for (int i = 0; i < from->n; i++) {
        int rc = ex__srcset_add(to, from->chunks[i], err);
        if (rc != PA_OK)
            return rc;
    }
    ex__srcset_clear(from, NULL);   /* to holds a reference to each */
    return PA_OK;
}

void ex__srcset_clear(ex__srcset *s, dv_stream *st)
{
    for (int i = 0; i < s->n; i++)
        dv_chunk_release(s->chunks[i], st);
    pa_free(s->chunks);
    pa_free(s->cols);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------- record buffers */

int ex__recs_reserve(ex_op *op, const kn_ctx *kn, const kn_sort_layout *l, ex__recs *r, int64_t need,
                     pa_err *err)
{
    if (need <= r->cap)
        return PA_OK;
    int64_t cap = r->cap * 2 > need ? r->cap * 2 : need;
    if (cap < 1024)
        cap = 1024;
    uint8_t *p = NULL;
    int rc = ex_alloc(op, (size_t)cap * l->stride, (void **)&p, err);
    if (rc != PA_OK)
        return rc;
    if (r->n > 0 && (rc = kn_sort_copy(kn, l, r->p, r->n, 0, p, err)) != PA_OK) {
        ex_free(op, p, (size_t)cap * l->stride);
        return rc;
    }
    ex_free(op, r->p, (size_t)r->cap * l->stride);
    r->p = p;
    r->cap = cap;
    return PA_OK;
}

void ex__recs_free(ex_op *op, const kn_sort_layout *l, ex__recs *r)
{
    if (r->p)
        ex_free(op, r->p, (size_t)r->cap * l->stride);
    memset(r, 0, sizeof *r);
}

int ex__recs_sort(ex_op *op, const kn_ctx *kn, const kn_sort_layout *l, ex__recs *r, const ex__srcset *src,
                  pa_err *err)
{
    if (r->n <= 1)
        return PA_OK;
    size_t ss = kn_sort_scratch_size(l, r->n);
    void *scratch = NULL;
    int rc = ex_alloc(op, ss, &scratch, err);
    if (rc != PA_OK)
        return rc;
    rc = kn_sort_records(kn, l, r->p, r->n, scratch, ss, src->cols, src->n, err);
    ex_free(op, scratch, ss);
    return rc;
}

/* ---------------------------------------------------------------- gather */

int ex__gather_init(ex_op *op, dv_device *dev, ex__gather *g, pa_err *err)
{
    memset(g, 0, sizeof *g);
    g->dev = dev;
    size_t n = (size_t)(op->n_cols > 0 ? op->n_cols : 1) * sizeof *g->bytes;
    int rc = dv_host_alloc(dev, n, (void **)&g->bytes, err);
    return rc == PA_OK ? rc : ex_oom(op, rc, err);
}

void ex__gather_close(ex__gather *g, dv_stream *st)
{
    if (g->bytes && st && dv_kind_of(g->dev) != DV_KIND_CPU)
        dv_host_free_async(st, g->bytes, NULL);   /* a count may still be on its way */
    else if (g->bytes)
        dv_host_free(g->dev, g->bytes);
    ex_pending_close(&g->pend);
    memset(g, 0, sizeof *g);
}

/* Enqueue the string bytes of every VARCHAR column; *any = there is one. */
static int count_bytes(ex_op *op, ex_worker *w, const kn_sort_layout *l, const ex__srcset *src,
                       const uint8_t *recs, int64_t n, ex__gather *g, bool *any, pa_err *err)
{
    *any = false;
    for (int j = 0; j < op->n_cols; j++) {
        if (!pa_type_is_varlen(op->types[j].id))
            continue;
        int rc = kn_sort_gather_bytes(&w->kn, l, src->cols, src->n, j, recs, n, &g->bytes[j], err);
        if (rc != PA_OK)
            return rc;
        *any = true;
    }
    return PA_OK;
}

int ex__sort_gather(ex_op *op, ex_worker *w, const kn_sort_layout *l, const ex__srcset *src, const uint8_t *recs,
                    int64_t n, ex__gather *g, dv_chunk **out, pa_err *err)
{
    int rc;
    *out = NULL;
    if (!g->counting) {
        bool any;
        if ((rc = count_bytes(op, w, l, src, recs, n, g, &any, err)) != PA_OK)
            return rc;
        g->counting = any;
    }
    if (g->counting) {
        bool ready;
        if ((rc = ex_pending_ready(w, &g->pend, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            w->blocked = true;
            return PA_OK;
        }
        g->counting = false;
    }
    dv_chunk *c = NULL;
    if ((rc = ex_chunk_new(op, w, op->n_cols, &c, err)) != PA_OK)
        return rc;
    for (int j = 0; j < op->n_cols; j++) {
        pa_column *col = &c->columns[j];
        *col = (pa_column){.type = op->types[j], .length = n, .data = NULL, .offsets = NULL, .validity = NULL};
        bool nulls = false;
        for (int i = 0; i < src->n && !nulls; i++)
            nulls = src->cols[i][j].validity != NULL;
        if (nulls)
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(n + 7) / 8, (void **)&col->validity, err));
        if (pa_type_is_varlen(col->type.id)) {
            size_t bytes = (size_t)g->bytes[j];
            PA_TRY(rc = ex_chunk_alloc(op, c, bytes ? bytes : 1, &col->data, err));
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(n + 1) * 4, (void **)&col->offsets, err));
            pa_column_set_bytes(col, (int64_t)bytes);   /* the gather's exact count */
        } else {
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)n * (size_t)pa_type_bytes(col->type), &col->data, err));
        }
        PA_TRY(rc = kn_sort_gather(&w->kn, l, src->cols, src->n, j, recs, n, col, err));
    }
    c->length = n;
    *out = c;
    return PA_OK;
fail:
    dv_chunk_release(c, w->stream);   /* after the kernels already enqueued on it */
    return rc;
}

/* ------------------------------------------------------------------ runs */

int ex__sort_add_run(ex__sort *s, ex__run *run, pa_err *err)
{
    int rc = PA_OK;
    pthread_mutex_lock(&s->mu);
    if (s->n_runs == s->cap_runs) {
        int cap = s->cap_runs ? s->cap_runs * 2 : 8;
        ex__run *r = pa_realloc(s->runs, (size_t)cap * sizeof *r);
        if (!r) {
            rc = pa_error(err, PA_ENOMEM, "out of memory collecting sorted runs");
            goto out;
        }
        s->runs = r;
        s->cap_runs = cap;
    }
    s->runs[s->n_runs++] = *run;
    memset(run, 0, sizeof *run);
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int ex__sort_concat_runs(ex_op *op, const kn_ctx *kn, ex__sort *s, pa_err *err)
{
    int64_t total = 0;
    for (int i = 0; i < s->n_runs; i++)
        total += s->runs[i].recs.n;
    int rc = ex__recs_reserve(op, kn, &s->l, &s->out, total, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < s->n_runs; i++) {
        ex__run *r = &s->runs[i];
        rc = kn_sort_copy(kn, &s->l, r->recs.p, r->recs.n, (uint32_t)s->out_src.n,
                          s->out.p + (size_t)s->out.n * s->l.stride, err);
        if (rc == PA_OK)
            rc = ex__srcset_move(&s->out_src, &r->src, err);
        if (rc != PA_OK)
            return rc;
        s->out.n += r->recs.n;
        ex__recs_free(op, &s->l, &r->recs);
    }
    s->n_runs = 0;
    return PA_OK;
}

/* ---------------------------------------------------------------- output */

int ex__sort_source_open(ex_op *op, ex_query *q, pa_err *err)
{
    ex__sort *s = op->state;
    s->chunk_rows = q->chunk_rows > 0 ? q->chunk_rows : 65536;
    return s->g.bytes ? PA_OK : ex__gather_init(op, q->dev, &s->g, err);
}

/* Free the output state (records, runs, sources) once st reached the work
 * enqueued so far (NULL: now); s->mu held or unshared. */
static void release_output(ex_op *op, ex__sort *s, dv_stream *st)
{
    if (s->run_pos)
        ex_free(op, s->run_pos, (size_t)s->n_runs * sizeof *s->run_pos);
    for (int i = 0; i < s->n_runs; i++) {
        ex__recs_free(op, &s->l, &s->runs[i].recs);
        ex__srcset_clear(&s->runs[i].src, st);
    }
    s->n_runs = 0;
    ex__recs_free(op, &s->l, &s->out);
    ex__recs_free(op, &s->l, &s->merge_buf);
    ex__srcset_clear(&s->out_src, st);
    pa_free(s->run_p);
    pa_free(s->run_n);
    s->run_p = NULL;
    s->run_n = s->run_pos = NULL;
}

/* The records of the next m output rows. */
static int next_records(ex_op *op, ex_worker *w, ex__sort *s, int64_t m, const uint8_t **recs, pa_err *err)
{
    if (!s->run_p) {
        *recs = s->out.p + (size_t)s->out_pos * s->l.stride;
        return PA_OK;
    }
    int rc = ex__recs_reserve(op, &w->kn, &s->l, &s->merge_buf, m, err);
    if (rc == PA_OK)
        rc = kn_sort_merge_next(&w->kn, &s->l, s->run_p, s->run_n, s->run_pos, s->n_runs, m, s->merge_buf.p,
                                s->out_src.cols, s->out_src.n, err);
    *recs = s->merge_buf.p;
    return rc;
}

int ex__sort_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    ex__sort *s = op->state;
    int rc = PA_OK;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    if (!s->making && s->out_pos < s->out_end) {   /* a new chunk: its records */
        s->m = s->out_end - s->out_pos < s->chunk_rows ? s->out_end - s->out_pos : s->chunk_rows;
        if ((rc = next_records(op, w, s, s->m, &s->recs, err)) == PA_OK)
            s->making = true;
    }
    if (s->making) {
        rc = ex__sort_gather(op, w, &s->l, &s->out_src, s->recs, s->m, &s->g, out, err);
        if (rc == PA_OK && *out) {
            s->making = false;
            s->out_pos += s->m;
        }
    }
    if (rc == PA_OK && !s->making && s->out_pos >= s->out_end)
        release_output(op, s, w->stream);   /* give the memory back before the query ends */
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void ex__sort_destroy(ex_op *op)
{
    ex__sort *s = op->state;
    if (!s)
        return;
    release_output(op, s, NULL);
    pa_free(s->runs);
    s->runs = NULL;
    s->cap_runs = 0;
    ex__gather_close(&s->g, NULL);
    pthread_mutex_destroy(&s->mu);
    op->state = NULL;
}

/* --------------------------------------------------------------- builder */

int ex__sort_build(ex_plan *p, const ex_op_vt *vt, ex_op *input, const ex_sort_key *keys, int n_keys,
                   int64_t limit, int64_t offset, ex_op **out, pa_err *err)
{
    const char *what = ex_op_kind_name(vt->kind);
    if (!p || !input || (!keys && n_keys > 0) || !out)
        return pa_error(err, PA_EINVAL, "%s: bad arguments", what);
    if (limit < 0 || offset < 0)
        return pa_error(err, PA_EINVAL, "%s: negative limit or offset", what);
    kn_sort_key kk[KN_SORT_MAX_KEYS];
    if (n_keys < 1 || n_keys > KN_SORT_MAX_KEYS)
        return pa_error(err, PA_EINVAL, "%s: %d keys (1..%d allowed)", what, n_keys, KN_SORT_MAX_KEYS);
    for (int k = 0; k < n_keys; k++) {
        if (keys[k].column < 0 || keys[k].column >= input->n_cols)
            return pa_error(err, PA_EINVAL, "%s: key %d is column %d, the input has %d", what, k, keys[k].column,
                            input->n_cols);
        kk[k] = (kn_sort_key){keys[k].column, input->types[keys[k].column], keys[k].descending,
                              keys[k].nulls_first};
    }
    kn_sort_layout l;
    int rc = kn_sort_layout_init(&l, kk, n_keys, err);
    if (rc != PA_OK)
        return rc;
    ex__sort *s = ex_plan_alloc(p, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "%s: out of memory", what);
    ex_op *op;
    if ((rc = ex_op_new(p, vt, input->n_cols, &op, err)) != PA_OK)
        return rc;
    for (int i = 0; i < input->n_cols; i++)
        if ((rc = ex_op_set_column(op, i, input->names[i], input->types[i], err)) != PA_OK)
            return rc;
    memset(s, 0, sizeof *s);
    s->l = l;
    s->limit = limit;
    s->offset = offset;
    pthread_mutex_init(&s->mu, NULL);
    op->state = s;
    op->child[0] = input;
    op->n_child = 1;
    size_t at = (size_t)snprintf(op->label, sizeof op->label, "%s", what);
    for (int k = 0; k < n_keys && at < sizeof op->label; k++)
        at += (size_t)snprintf(op->label + at, sizeof op->label - at, "%s%s%s%s", k ? ", " : " ",
                               input->names[keys[k].column], keys[k].descending ? " DESC" : "",
                               keys[k].nulls_first != keys[k].descending
                                   ? (keys[k].nulls_first ? " NULLS FIRST" : " NULLS LAST")
                                   : "");
    if (vt->kind == EX_OP_TOPN && at < sizeof op->label)
        snprintf(op->label + at, sizeof op->label - at, " LIMIT %lld", (long long)limit);
    *out = op;
    return PA_OK;
}

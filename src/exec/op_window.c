/*
 * op_window.c - WINDOW: window functions over partitions of sorted rows.
 *
 * Design notes
 * - The builder puts a SORT on (partition keys, order keys) under the op
 *   (none without keys), so the sink sees each partition's rows together
 *   and in order. The sink keeps a reference to every input chunk; for a
 *   VARCHAR column the window reads, a chunk whose string bytes the host
 *   does not know gets them counted (kn_concat_bytes into pinned memory,
 *   read behind an ex_pending).
 * - finalize (on the finalize stream, no waiting): the columns the window
 *   reads (keys and arguments) concatenated into one buffer each, then the
 *   bounds of partitions and peer groups, each function's frames and
 *   segment tree (kernels.h, window functions).
 * - Source: one output chunk per input chunk (in order, one worker, when a
 *   VARCHAR value is taken from other rows; else any worker, any order): the input
 *   chunk's columns as they are, then each function's values for its rows
 *   (kn_window_eval). Functions whose value is another row's argument
 *   (lag, lead, first/last/nth_value, min, max) give positions, and the
 *   values are taken from the concatenated argument; a VARCHAR one needs
 *   its byte count first (a pending wait in source_next).
 */
#include "exec/op_sort_int.h"

#include <stdio.h>
#include <string.h>

/* The kernels' enums are the builder's. */
_Static_assert(EX_WINDOW_SEP_MAX == KN_WINDOW_SEP_MAX && EX_WIN_MAX == (int)KN_WIN_MAX && EX_WIN_SHIFT == (int)KN_WIN_SHIFT &&
                   EX_WIN_STRING_AGG == (int)KN_WIN_STRING_AGG &&
                   EX_WIN_COUNT_STAR == (int)KN_WIN_COUNT_STAR && EX_WIN_NTILE == (int)KN_WIN_NTILE &&
                   EX_FB_UNBOUNDED_FOLLOWING == (int)KN_FB_UNBOUNDED_FOLLOWING && EX_FB_PRECEDING == (int)KN_FB_PRECEDING,
               "window enums");

typedef struct win_fn {
    struct {
        int kind, column;
        int64_t n;
        kn_window_frame frame;
    } d;
    kn_window_fn fn;          /* kind, n and separator, as the kernels take them */
    pa_type type;             /* of the output */
    int32_t *frames;          /* 2 x rows, framed kinds */
    void *tree;
    size_t tree_bytes;
} win_fn;

typedef struct win_state {
    pthread_mutex_t mu;
    int n_in;                 /* input columns */
    int n_part, n_keys;
    int keys[KN_WINDOW_MAX_KEYS];   /* input columns: partition keys, then order keys */
    bool order_desc;          /* of the first order key (RANGE offsets) */
    win_fn *fns;
    int n_fns;
    /* what the window reads: input column -> its concatenation (-1: not read) */
    int *slot;
    int n_slots;
    pa_column *cat;           /* n_slots columns of rows rows */
    void **cat_mem;           /* their buffers: 3 per slot (data, offsets, validity) */
    size_t *cat_size;
    /* input */
    ex__srcset src;
    int64_t **bytes;          /* per chunk, per slot: pinned string byte counts (NULL: known) */
    int cap_bytes;
    int64_t rows;
    int32_t *bounds;
    /* output */
    int next;                 /* next chunk to emit */
    int64_t at;               /* its first row */
    dv_chunk *making;         /* waiting for string byte counts */
    int64_t *take_bytes;      /* pinned, one per function */
    ex_pending pend;
    bool released;
    dv_device *dev;           /* the query's (pinned memory) */
} win_state;

typedef struct win_local {
    ex_pending pend;
    bool counting;
} win_local;

static int win_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    (void)w;
    win_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
    *local = l;
    return PA_OK;
}

static void win_local_free(ex_op *op, void *local)
{
    (void)op;
    win_local *l = local;
    if (!l)
        return;
    ex_pending_close(&l->pend);
    pa_free(l);
}

/* ------------------------------------------------------------------ sink */

static int win_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    win_state *s = op->state;
    win_local *l = local;
    int rc = PA_OK;
    if (l->counting) {   /* called again: the counts enqueued last time */
        bool ready;
        if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            w->blocked = true;
            return PA_OK;
        }
        l->counting = false;
        return PA_OK;
    }
    if (in->length == 0)
        return PA_OK;
    pthread_mutex_lock(&s->mu);
    if (s->src.n == s->cap_bytes) {
        int cap = s->cap_bytes ? s->cap_bytes * 2 : 16;
        int64_t **b = pa_realloc(s->bytes, (size_t)cap * sizeof *b);
        if (!b) {
            pthread_mutex_unlock(&s->mu);
            return pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
        }
        s->bytes = b;
        s->cap_bytes = cap;
    }
    int k = s->src.n;
    s->bytes[k] = NULL;
    s->dev = w->dev;
    if ((rc = ex__srcset_add(&s->src, in, err)) != PA_OK) {
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    s->rows += in->length;
    bool enqueued = false;
    for (int c = 0; c < s->n_in && rc == PA_OK; c++) {
        int j = s->slot[c];
        int64_t b;
        if (j < 0 || !pa_type_is_varlen(op->types[c].id) || pa_column_bytes(&in->columns[c], &b))
            continue;
        if (!s->bytes[k] &&
            (rc = dv_host_alloc(w->dev, (size_t)s->n_slots * sizeof(int64_t), (void **)&s->bytes[k], err)) != PA_OK)
            break;
        rc = kn_concat_bytes(&w->kn, &in->columns[c], 1, &s->bytes[k][j], err);
        enqueued = true;
    }
    pthread_mutex_unlock(&s->mu);
    if (rc != PA_OK || !enqueued)
        return rc;
    bool ready;
    if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
        return rc;
    if (!ready) {
        l->counting = true;
        w->blocked = true;
    }
    return PA_OK;
}

/* -------------------------------------------------------------- finalize */

static int cat_alloc(ex_op *op, win_state *s, int j, size_t n, void **p, pa_err *err)
{
    int rc = ex_alloc(op, n ? n : 1, p, err);
    if (rc == PA_OK) {
        for (int m = 0; m < 3; m++)
            if (!s->cat_mem[3 * j + m]) {
                s->cat_mem[3 * j + m] = *p;
                s->cat_size[3 * j + m] = n ? n : 1;
                break;
            }
    }
    return rc;
}

/* Input column c of every chunk, one after another, into slot j. */
static int concat_column(ex_op *op, const kn_ctx *kn, win_state *s, int c, int j, pa_column *tmp, pa_err *err)
{
    pa_column *d = &s->cat[j];
    int64_t n = s->rows, bytes = 0;
    bool nulls = false;
    for (int i = 0; i < s->src.n; i++) {
        tmp[i] = s->src.chunks[i]->columns[c];
        nulls |= tmp[i].validity != NULL;
        int64_t b = 0;
        if (pa_type_is_varlen(op->types[c].id) && !pa_column_bytes(&tmp[i], &b))
            b = s->bytes[i][j];
        bytes += b;
    }
    *d = (pa_column){.type = op->types[c], .length = n};
    int rc;
    if (pa_type_is_varlen(d->type.id)) {
        if (bytes > INT32_MAX)
            return pa_error(err, PA_EUNSUPPORTED, "%s: more than 2 GiB of strings in column %s of one window",
                            op->label, op->names[c]);
        if ((rc = cat_alloc(op, s, j, (size_t)bytes, &d->data, err)) != PA_OK ||
            (rc = cat_alloc(op, s, j, (size_t)(n + 1) * 4, (void **)&d->offsets, err)) != PA_OK)
            return rc;
    } else if ((rc = cat_alloc(op, s, j, (size_t)n * (size_t)pa_type_bytes(d->type), &d->data, err)) != PA_OK)
        return rc;
    if (nulls && (rc = cat_alloc(op, s, j, (size_t)(n + 7) / 8, (void **)&d->validity, err)) != PA_OK)
        return rc;
    return kn_concat(kn, tmp, s->src.n, d, err);
}

static int win_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    win_state *s = op->state;
    kn_ctx kn = {q->dev, q->fin_stream};
    int64_t n = s->rows;
    if (n == 0)
        return PA_OK;
    if (n >= INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "%s: %lld rows in one window (at most %d)", op->label, (long long)n,
                        INT32_MAX - 1);
    pa_column *tmp = pa_malloc((size_t)s->src.n * sizeof *tmp);
    if (!tmp)
        return pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
    int rc = PA_OK;
    for (int c = 0; c < s->n_in && rc == PA_OK; c++)
        if (s->slot[c] >= 0)
            rc = concat_column(op, &kn, s, c, s->slot[c], tmp, err);
    pa_free(tmp);
    if (rc != PA_OK)
        return rc;
    pa_column keys[KN_WINDOW_MAX_KEYS];
    for (int k = 0; k < s->n_keys; k++)
        keys[k] = s->cat[s->slot[s->keys[k]]];
    size_t sb = kn_window_bounds_scratch(n);
    void *scratch = NULL;
    if ((rc = ex_alloc(op, (size_t)n * KN_WB__COUNT * sizeof(int32_t), (void **)&s->bounds, err)) != PA_OK ||
        (rc = ex_alloc(op, sb, &scratch, err)) != PA_OK)
        return rc;
    rc = kn_window_bounds(&kn, keys, s->n_part, s->n_keys, n, s->bounds, scratch, sb, err);
    ex_free(op, scratch, sb);
    for (int i = 0; i < s->n_fns && rc == PA_OK; i++) {
        win_fn *f = &s->fns[i];
        const pa_column *arg = f->d.column >= 0 ? &s->cat[s->slot[f->d.column]] : NULL;
        if (kn_window_framed(f->d.kind)) {
            kn_window_frame fr = f->d.frame;
            fr.descending = s->order_desc;
            const pa_column *ok = s->n_keys > s->n_part ? &keys[s->n_part] : NULL;
            if ((rc = ex_alloc(op, (size_t)n * 2 * sizeof(int32_t), (void **)&f->frames, err)) == PA_OK)
                rc = kn_window_frames(&kn, &fr, s->bounds, n, ok, f->frames, err);
        }
        f->tree_bytes = kn_window_tree_bytes(f->d.kind, n);
        if (rc == PA_OK && f->tree_bytes) {
            if ((rc = ex_alloc(op, f->tree_bytes, &f->tree, err)) == PA_OK)
                rc = kn_window_tree(&kn, &f->fn, arg, s->bounds, n, f->tree, f->tree_bytes, err);
        }
    }
    return rc;
}

/* ---------------------------------------------------------------- source */

static void release(ex_op *op, win_state *s, dv_stream *st)
{
    if (s->released)
        return;
    s->released = true;
    for (int j = 0; j < 3 * s->n_slots; j++)
        if (s->cat_mem[j])
            ex_free(op, s->cat_mem[j], s->cat_size[j]);
    memset(s->cat_mem, 0, (size_t)(3 * s->n_slots) * sizeof *s->cat_mem);
    if (s->bounds)
        ex_free(op, s->bounds, (size_t)s->rows * KN_WB__COUNT * sizeof(int32_t));
    s->bounds = NULL;
    for (int i = 0; i < s->n_fns; i++) {
        win_fn *f = &s->fns[i];
        if (f->frames)
            ex_free(op, f->frames, (size_t)s->rows * 2 * sizeof(int32_t));
        if (f->tree)
            ex_free(op, f->tree, f->tree_bytes);
        f->frames = NULL;
        f->tree = NULL;
    }
    for (int i = 0; i < s->src.n; i++)
        if (s->bytes && s->bytes[i])
            dv_host_free(s->dev, s->bytes[i]);
    pa_free(s->bytes);
    s->bytes = NULL;
    s->cap_bytes = 0;
    if (s->take_bytes)
        dv_host_free(s->dev, s->take_bytes);
    s->take_bytes = NULL;
    ex__srcset_clear(&s->src, st);
}

/* Chunk k's output: its columns, then every function's values, except the
 * VARCHAR values taken from other rows (strings: done once counted). */
static int start_chunk(ex_op *op, ex_worker *w, win_state *s, int k, int64_t first, dv_chunk **out, bool *strings,
                       pa_err *err)
{
    dv_chunk *in = s->src.chunks[k], *c = NULL;
    int64_t m = in->length;
    int rc = ex_chunk_new(op, w, op->n_cols, &c, err);
    if (rc != PA_OK)
        return rc;
    *strings = false;
    PA_TRY(rc = dv_chunk_depend(c, in, err));
    for (int j = 0; j < s->n_in; j++)
        c->columns[j] = in->columns[j];
    for (int i = 0; i < s->n_fns; i++) {
        win_fn *f = &s->fns[i];
        const kn_window_fn fn = f->fn;
        const pa_column *arg = f->d.column >= 0 ? &s->cat[s->slot[f->d.column]] : NULL;
        pa_column *col = &c->columns[s->n_in + i];
        *col = (pa_column){.type = f->type, .length = m};
        if (f->d.kind == KN_WIN_STRING_AGG) {   /* new text: its bytes counted first */
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(m + 1) * 4, (void **)&col->offsets, err));
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(m + 7) / 8 + 1, (void **)&col->validity, err));
            PA_TRY(rc = kn_window_text_bytes(&w->kn, &fn, s->bounds, f->tree, s->rows, first, m, &s->take_bytes[i],
                                             err));
            *strings = true;
            continue;
        }
        if (!kn_window_takes(f->d.kind)) {
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)m * (size_t)pa_type_bytes(f->type), &col->data, err));
            if (f->d.kind == KN_WIN_SUM || f->d.kind == KN_WIN_AVG)
                PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(m + 7) / 8, (void **)&col->validity, err));
            PA_TRY(rc = kn_window_eval(&w->kn, &fn, arg, s->bounds, f->frames, f->tree, s->rows, first, m, col,
                                       NULL, err));
            continue;
        }
        int32_t *idx;
        PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)m * sizeof(int32_t), (void **)&idx, err));
        PA_TRY(rc = kn_window_eval(&w->kn, &fn, arg, s->bounds, f->frames, f->tree, s->rows, first, m, NULL, idx,
                                   err));
        /* the positions, until taken */
        col->data = idx;
        PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(m + 7) / 8, (void **)&col->validity, err));
        if (pa_type_is_varlen(f->type.id)) {
            PA_TRY(rc = kn_take_string_bytes(&w->kn, arg, idx, m, &s->take_bytes[i], err));
            *strings = true;
            continue;
        }
        void *data;
        PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)m * (size_t)pa_type_bytes(f->type), &data, err));
        pa_column dst = *col;
        dst.data = data;
        PA_TRY(rc = kn_take(&w->kn, arg, idx, m, &dst, err));
        *col = dst;
    }
    c->length = m;
    *out = c;
    return PA_OK;
fail:
    dv_chunk_release(c, w->stream);
    return rc;
}

/* The VARCHAR values of c, now that their byte counts are known. */
static int finish_strings(ex_op *op, ex_worker *w, win_state *s, dv_chunk *c, pa_err *err)
{
    int rc = PA_OK;
    for (int i = 0; i < s->n_fns && rc == PA_OK; i++) {
        win_fn *f = &s->fns[i];
        pa_column *col = &c->columns[s->n_in + i];
        if (f->d.kind == KN_WIN_STRING_AGG) {
            int64_t bytes = s->take_bytes[i];
            if (bytes > INT32_MAX)
                return pa_error(err, PA_EUNSUPPORTED, "%s: string_agg makes %lld bytes of text in one chunk (at most %d)",
                                op->label, (long long)bytes, INT32_MAX);
            if ((rc = ex_chunk_alloc(op, c, bytes ? (size_t)bytes : 1, &col->data, err)) != PA_OK ||
                (rc = kn_window_eval(&w->kn, &f->fn, &s->cat[s->slot[f->d.column]], s->bounds, NULL, f->tree, s->rows,
                                     s->at, c->length, col, NULL, err)) != PA_OK)
                return rc;
            pa_column_set_bytes(col, bytes);
            continue;
        }
        if (!kn_window_takes(f->d.kind) || !pa_type_is_varlen(f->type.id))
            continue;
        const int32_t *idx = col->data;
        pa_column dst = *col;
        size_t bytes = (size_t)s->take_bytes[i];
        if ((rc = ex_chunk_alloc(op, c, bytes ? bytes : 1, &dst.data, err)) != PA_OK ||
            (rc = ex_chunk_alloc(op, c, (size_t)(c->length + 1) * 4, (void **)&dst.offsets, err)) != PA_OK ||
            (rc = kn_take(&w->kn, &s->cat[s->slot[f->d.column]], idx, c->length, &dst, err)) != PA_OK)
            return rc;
        pa_column_set_bytes(&dst, (int64_t)bytes);
        *col = dst;
    }
    return rc;
}

static int win_source_open(ex_op *op, ex_query *q, pa_err *err)
{
    win_state *s = op->state;
    s->next = 0;
    s->at = 0;
    s->dev = q->dev;
    bool strs = false;
    for (int i = 0; i < s->n_fns; i++)
        strs |= (kn_window_takes(s->fns[i].d.kind) && pa_type_is_varlen(s->fns[i].type.id)) ||
                s->fns[i].d.kind == KN_WIN_STRING_AGG;
    if (strs && !s->take_bytes)
        return dv_host_alloc(q->dev, (size_t)s->n_fns * sizeof(int64_t), (void **)&s->take_bytes, err);
    return PA_OK;
}

static int win_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    (void)local;
    win_state *s = op->state;
    int rc = PA_OK;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    if (!s->making && s->next < s->src.n) {
        bool strings;
        dv_chunk *c = NULL;
        if ((rc = start_chunk(op, w, s, s->next, s->at, &c, &strings, err)) == PA_OK) {
            if (strings)
                s->making = c;
            else
                *out = c;
        }
    }
    if (rc == PA_OK && s->making) {
        bool ready;
        if ((rc = ex_pending_ready(w, &s->pend, &ready, err)) == PA_OK && !ready)
            w->blocked = true;
        else if (rc == PA_OK) {
            rc = finish_strings(op, w, s, s->making, err);
            if (rc == PA_OK)
                *out = s->making;
            else
                dv_chunk_release(s->making, w->stream);
            s->making = NULL;
        }
    }
    if (*out) {
        s->at += (*out)->length;
        s->next++;
    }
    if (rc == PA_OK && !s->making && s->next >= s->src.n)
        release(op, s, w->stream);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Without VARCHAR values taken from other rows nothing waits: any worker
 * makes the next chunk (its kernels on its own stream), and the window's
 * buffers, which other workers' kernels may still read, go back when the
 * query ends (destroy). */
static int win_source_next_any(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    (void)local;
    win_state *s = op->state;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    int k = s->next < s->src.n ? s->next++ : -1;
    int64_t first = s->at;
    if (k >= 0)
        s->at += s->src.chunks[k]->length;
    pthread_mutex_unlock(&s->mu);
    if (k < 0)
        return PA_OK;
    bool strings;
    int rc = start_chunk(op, w, s, k, first, out, &strings, err);
    if (rc == PA_OK && strings) {   /* not reached: such windows are ordered */
        dv_chunk_release(*out, w->stream);
        *out = NULL;
        rc = pa_error(err, PA_EINTERNAL, "%s: strings in an unordered window", op->label);
    }
    return rc;
}

static void win_destroy(ex_op *op)
{
    win_state *s = op->state;
    if (!s)
        return;
    if (s->making)
        dv_chunk_release(s->making, NULL);
    s->making = NULL;
    release(op, s, NULL);
    ex_pending_close(&s->pend);
    pthread_mutex_destroy(&s->mu);
    op->state = NULL;
}

/* Rows come out in the window's order, one worker, when some function
 * takes VARCHAR values from other rows (their byte counts are waited for);
 * otherwise chunks come out in any order, from every worker (SQL promises
 * no order without ORDER BY). */
static const ex_op_vt window_vt = {
    .kind = EX_OP_WINDOW,
    .local_init = win_local_init,
    .local_free = win_local_free,
    .source_open = win_source_open,
    .source_next = win_source_next,
    .ordered = true,
    .sink = win_sink,
    .finalize = win_finalize,
    .destroy = win_destroy,
};
static const ex_op_vt window_any_vt = {
    .kind = EX_OP_WINDOW,
    .local_init = win_local_init,
    .local_free = win_local_free,
    .source_open = win_source_open,
    .source_next = win_source_next_any,
    .ordered = false,
    .sink = win_sink,
    .finalize = win_finalize,
    .destroy = win_destroy,
};

/* --------------------------------------------------------------- builder */

int ex_window_type(const ex_window_fn *fn, const pa_type *in_types, pa_type *out, pa_err *err)
{
    return kn_window_type((int)fn->kind, fn->column >= 0 ? in_types[fn->column] : (pa_type){PA_TYPE_BIGINT, 0, 0},
                          out, err);
}

static const char *kind_name(int k)
{
    static const char *const names[] = {"row_number", "rank", "dense_rank", "ntile", "percent_rank", "cume_dist",
                                        "lag", "first_value", "last_value", "nth_value", "count_star", "count",
                                        "sum", "avg", "min", "max", "string_agg"};
    return k >= 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "?";
}

int ex_window(ex_plan *p, ex_op *input, const int *part_cols, int n_part, const ex_sort_key *order, int n_order,
              const ex_window_fn *fns, int n_fns, const char *const *names, ex_op **out, pa_err *err)
{
    if (!p || !input || !out || n_part < 0 || n_order < 0 || n_fns < 1 || !fns || (n_part && !part_cols) ||
        (n_order && !order))
        return pa_error(err, PA_EINVAL, "WINDOW: bad arguments");
    if (n_part + n_order > KN_WINDOW_MAX_KEYS)
        return pa_error(err, PA_EUNSUPPORTED, "WINDOW: %d PARTITION BY and ORDER BY keys (at most %d)",
                        n_part + n_order, KN_WINDOW_MAX_KEYS);
    int n_in = input->n_cols, rc;
    win_state *s = ex_plan_alloc(p, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "WINDOW: out of memory");
    memset(s, 0, sizeof *s);
    s->n_in = n_in;
    s->n_part = n_part;
    s->n_keys = n_part + n_order;
    s->n_fns = n_fns;
    s->fns = ex_plan_alloc(p, (size_t)n_fns * sizeof *s->fns);
    s->slot = ex_plan_alloc(p, (size_t)n_in * sizeof *s->slot);
    if (!s->fns || !s->slot)
        return pa_error(err, PA_ENOMEM, "WINDOW: out of memory");
    memset(s->fns, 0, (size_t)n_fns * sizeof *s->fns);
    for (int c = 0; c < n_in; c++)
        s->slot[c] = -1;
    ex_sort_key sk[KN_WINDOW_MAX_KEYS];
    for (int k = 0; k < s->n_keys; k++) {
        int c = k < n_part ? part_cols[k] : order[k - n_part].column;
        if (c < 0 || c >= n_in)
            return pa_error(err, PA_EINVAL, "WINDOW: key %d is column %d, the input has %d", k, c, n_in);
        s->keys[k] = c;
        sk[k] = k < n_part ? (ex_sort_key){c, false, false} : order[k - n_part];
        if (s->slot[c] < 0)
            s->slot[c] = s->n_slots++;
    }
    s->order_desc = n_order && order[0].descending;
    for (int i = 0; i < n_fns; i++) {
        win_fn *f = &s->fns[i];
        f->d.kind = (int)fns[i].kind;
        f->d.column = fns[i].column;
        f->d.n = fns[i].n;
        f->d.frame = (kn_window_frame){fns[i].frame.rows, (int32_t)fns[i].frame.start, (int32_t)fns[i].frame.end, 0,
                                       fns[i].frame.start_n, fns[i].frame.end_n, fns[i].frame.start_d,
                                       fns[i].frame.end_d};
        f->fn = (kn_window_fn){.kind = f->d.kind, .n = f->d.n};
        if (fns[i].kind == EX_WIN_STRING_AGG) {
            if (fns[i].sep_len < 0 || fns[i].sep_len > KN_WINDOW_SEP_MAX || (fns[i].sep_len && !fns[i].sep))
                return pa_error(err, PA_EUNSUPPORTED, "string_agg: a separator of %d bytes (at most %d)",
                                fns[i].sep_len, KN_WINDOW_SEP_MAX);
            f->fn.sep_len = fns[i].sep_len;
            if (fns[i].sep_len)
                memcpy(f->fn.sep, fns[i].sep, (size_t)fns[i].sep_len);
        }
        int c = fns[i].column;
        bool arg = c >= 0;
        if (arg && c >= n_in)
            return pa_error(err, PA_EINVAL, "WINDOW: function %d reads column %d, the input has %d", i, c, n_in);
        if ((rc = kn_window_type(fns[i].kind, arg ? input->types[c] : (pa_type){PA_TYPE_BIGINT, 0, 0}, &f->type,
                                 err)) != PA_OK)
            return rc;
        if (arg && s->slot[c] < 0)
            s->slot[c] = s->n_slots++;
        int kd = f->d.kind;
        if (!arg && kd != KN_WIN_ROW_NUMBER && kd != KN_WIN_RANK && kd != KN_WIN_DENSE_RANK && kd != KN_WIN_NTILE &&
            kd != KN_WIN_PERCENT_RANK && kd != KN_WIN_CUME_DIST && kd != KN_WIN_COUNT_STAR)
            return pa_error(err, PA_EINVAL, "WINDOW: %s needs an argument", kind_name(kd));
        if ((kd == KN_WIN_NTILE || kd == KN_WIN_NTH_VALUE) && fns[i].n < 1)
            return pa_error(err, PA_EINVAL, "argument of %s must be greater than zero", kind_name(kd));
        if (kn_window_framed(kd)) {
            const kn_window_frame *fr = &f->d.frame;
            bool offset = fr->start == KN_FB_PRECEDING || fr->start == KN_FB_FOLLOWING ||
                          fr->end == KN_FB_PRECEDING || fr->end == KN_FB_FOLLOWING;
            if (!fr->rows && offset) {
                if (n_order != 1)
                    return pa_error(err, PA_EINVAL,
                                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column");
                pa_type t = input->types[order[0].column];
                if (t.id != PA_TYPE_INTEGER && t.id != PA_TYPE_BIGINT && !pa_type_is_float(t.id) &&
                    t.id != PA_TYPE_DECIMAL)
                    return pa_error(err, PA_EUNSUPPORTED,
                                    "RANGE with an offset over an ORDER BY column of type %s (numbers only)",
                                    pa_type_name(t.id));
            }
            if (fr->start == KN_FB_UNBOUNDED_FOLLOWING)
                return pa_error(err, PA_EINVAL, "frame start cannot be UNBOUNDED FOLLOWING");
            if (fr->end == KN_FB_UNBOUNDED_PRECEDING)
                return pa_error(err, PA_EINVAL, "frame end cannot be UNBOUNDED PRECEDING");
            if (fr->start_n < 0 || fr->end_n < 0 || fr->start_d < 0 || fr->end_d < 0)
                return pa_error(err, PA_EINVAL, "frame starting or ending offset must not be negative");
        }
    }
    s->cat = ex_plan_alloc(p, (size_t)(s->n_slots ? s->n_slots : 1) * sizeof *s->cat);
    s->cat_mem = ex_plan_alloc(p, (size_t)(3 * s->n_slots + 1) * sizeof *s->cat_mem);
    s->cat_size = ex_plan_alloc(p, (size_t)(3 * s->n_slots + 1) * sizeof *s->cat_size);
    if (!s->cat || !s->cat_mem || !s->cat_size)
        return pa_error(err, PA_ENOMEM, "WINDOW: out of memory");
    memset(s->cat_mem, 0, (size_t)(3 * s->n_slots + 1) * sizeof *s->cat_mem);
    ex_op *below = input;
    if (s->n_keys && (rc = ex_sort(p, input, sk, s->n_keys, &below, err)) != PA_OK)
        return rc;
    bool strings = false;
    for (int i = 0; i < n_fns; i++)
        strings |= (kn_window_takes(s->fns[i].d.kind) && pa_type_is_varlen(s->fns[i].type.id)) ||
                   s->fns[i].d.kind == KN_WIN_STRING_AGG;
    ex_op *op;
    if ((rc = ex_op_new(p, strings ? &window_vt : &window_any_vt, n_in + n_fns, &op, err)) != PA_OK)
        return rc;
    for (int c = 0; c < n_in; c++)
        if ((rc = ex_op_set_column(op, c, input->names[c], input->types[c], err)) != PA_OK)
            return rc;
    for (int i = 0; i < n_fns; i++) {
        char nm[64];
        const char *name = names && names[i] ? names[i] : NULL;
        if (!name) {
            snprintf(nm, sizeof nm, "%s", kind_name(fns[i].kind));
            name = nm;
        }
        if ((rc = ex_op_set_column(op, n_in + i, name, s->fns[i].type, err)) != PA_OK)
            return rc;
    }
    pthread_mutex_init(&s->mu, NULL);
    op->state = s;
    op->child[0] = below;
    op->n_child = 1;
    size_t at = (size_t)snprintf(op->label, sizeof op->label, "WINDOW");
    for (int i = 0; i < n_fns && at < sizeof op->label; i++)
        at += (size_t)snprintf(op->label + at, sizeof op->label - at, "%s%s", i ? ", " : " ", kind_name(fns[i].kind));
    *out = op;
    return PA_OK;
}

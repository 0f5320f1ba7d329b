/*
 * op_join.c - HASH_JOIN: the builder and the build side. Design notes in
 * op_join_int.h; the probe side (streaming) is op_join_probe.c.
 *
 * Build (sink role): each worker copies the key and output columns of its
 * input chunks into segments of its own (the chunks go at once), combine
 * hands the segments to the op, and finalize concatenates them into one
 * columnar buffer, hashes the keys and builds the table once (kn_join_*).
 */
#include "exec/op_join_int.h"

#include <stdio.h>
#include <string.h>

static const char *const type_label[] = {"inner", "left", "semi", "anti", "mark"};

/* The probe passes the join type to the kernel as it is. */
_Static_assert((int)EX_JOIN_INNER == (int)KN_JOIN_INNER && (int)EX_JOIN_LEFT == (int)KN_JOIN_LEFT &&
                   (int)EX_JOIN_SEMI == (int)KN_JOIN_SEMI && (int)EX_JOIN_ANTI == (int)KN_JOIN_ANTI &&
                   (int)EX_JOIN_MARK == (int)KN_JOIN_MARK,
               "ex_join_type and kn_join_kind agree");

/* -------------------------------------------------------- build segments */

/* Rows a new segment has room for at least: small chunks (out of a
 * selective filter) are gathered into segments of this many rows, so the
 * per-segment cost (one allocation, one append per chunk at finalize) is
 * paid per 4096 rows, not per chunk. */
#define EX__JOIN_SEG_ROWS 4096

static size_t al64(size_t x) { return (x + 63) & ~(size_t)63; }

static void seg_free(ex_op *op, ex__join_seg *sg)
{
    ex_free(op, sg->mem, sg->size);
    pa_free(sg->cols);
    pa_free(sg);
}

/* A segment with room for cap_rows rows of the build columns (j->bcol_src)
 * and str_cap[c] bytes of strings, a validity bitmap where nulls[c], all
 * in one ex_alloc block. Empty (0 rows); the caller frees it (seg_free). */
static int seg_create(ex_op *op, ex__join *j, int64_t cap_rows, const int64_t *str_cap, const bool *nulls,
                      ex__join_seg **out, pa_err *err)
{
    int n = j->n_bcols;
    ex__join_seg *sg = pa_calloc(1, sizeof *sg);
    void *cols = sg ? pa_calloc((size_t)(n ? n : 1), sizeof(pa_column) + 2 * sizeof(int64_t)) : NULL;
    if (!cols) {
        pa_free(sg);
        return pa_error(err, PA_ENOMEM, "out of host memory for a build segment");
    }
    sg->cols = cols;
    sg->str_cap = (int64_t *)(sg->cols + n);
    sg->str_used = sg->str_cap + n;
    size_t total = 0, sizes[3 * EX__JOIN_MAX_COLS];
    for (int c = 0; c < n; c++) {
        pa_type t = op->child[1]->types[j->bcol_src[c]];
        bool str = pa_type_is_varlen(t.id);
        sg->str_cap[c] = str ? str_cap[c] : 0;
        if (sg->str_cap[c] > INT32_MAX) {
            seg_free(op, sg);
            return pa_error(err, PA_EUNSUPPORTED, "%s: build column %s holds more than 2 GiB of strings",
                            op->label, op->child[1]->names[j->bcol_src[c]]);
        }
        sizes[3 * c] = str ? (size_t)str_cap[c] : (size_t)cap_rows * (size_t)pa_type_bytes(t);
        sizes[3 * c + 1] = str ? ((size_t)cap_rows + 1) * 4 : 0;
        sizes[3 * c + 2] = nulls[c] ? ((size_t)cap_rows + 7) / 8 : 0;
        for (int k = 0; k < 3; k++)
            total += al64(sizes[3 * c + k]);
    }
    total = total ? total : 64;
    int rc = ex_alloc(op, total, &sg->mem, err);
    if (rc != PA_OK) {
        seg_free(op, sg);
        return rc;
    }
    sg->size = total;
    sg->cap_rows = cap_rows;
    uint8_t *p = sg->mem;
    for (int c = 0; c < n; c++) {
        pa_column *col = &sg->cols[c];
        col->type = op->child[1]->types[j->bcol_src[c]];
        col->data = p;
        p += al64(sizes[3 * c]);
        if (sizes[3 * c + 1])
            col->offsets = (int32_t *)p;
        p += al64(sizes[3 * c + 1]);
        if (sizes[3 * c + 2])
            col->validity = p;
        p += al64(sizes[3 * c + 2]);
    }
    *out = sg;
    return PA_OK;
}

/* Append the n rows of cols (src[c] for segment column c) at the segment's
 * end; the caller checked that they fit. */
static int seg_append(const kn_ctx *kn, ex__join_seg *sg, int n_cols, const pa_column *const *src, int64_t n,
                      const int64_t *str_bytes, pa_err *err)
{
    for (int c = 0; c < n_cols; c++) {
        int rc = kn_append_column(kn, src[c], &sg->cols[c], sg->rows, err);
        if (rc != PA_OK)
            return rc;
        sg->str_used[c] += str_bytes[c];
        sg->cols[c].length = sg->rows + n;
    }
    sg->rows += n;
    return PA_OK;
}

static bool seg_fits(const ex__join_seg *sg, int n_cols, const pa_column *const *src, int64_t n,
                     const int64_t *str_bytes)
{
    if (sg->rows + n > sg->cap_rows)
        return false;
    for (int c = 0; c < n_cols; c++)
        if (sg->str_used[c] + str_bytes[c] > sg->str_cap[c] || (src[c]->validity && !sg->cols[c].validity))
            return false;
    return true;
}

static int segs_push(ex__join_seg ***v, int *n, int *cap, ex__join_seg *sg, pa_err *err)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        ex__join_seg **p = pa_realloc(*v, (size_t)nc * sizeof *p);
        if (!p)
            return pa_error(err, PA_ENOMEM, "out of host memory listing build segments");
        *v = p;
        *cap = nc;
    }
    (*v)[(*n)++] = sg;
    return PA_OK;
}

/* ----------------------------------------------------------- sink locals */

typedef struct build_local {
    ex_role role;             /* EX_ROLE_SINK: tells the locals apart */
    ex__join_seg **segs;      /* the last one is being filled */
    int n, cap;
    dv_chunk *pend;           /* a chunk whose string bytes are being counted, or NULL */
    int64_t *bytes;           /* pinned: per build column, pend's string bytes */
    ex_pending ready;         /* bytes */
    dv_device *dev;
    dv_stream *stream;        /* the worker's: pend released in its order at the end */
} build_local;

static int join_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    if (w->role == EX_ROLE_STREAMING)
        return ex__join_probe_local_init(op, w, local, err);
    ex__join *j = op->state;
    build_local *bl = pa_calloc(1, sizeof *bl);
    if (!bl)
        return pa_error(err, PA_ENOMEM, "out of host memory for a build worker");
    bl->role = EX_ROLE_SINK;
    bl->dev = w->dev;
    bl->stream = w->stream;
    size_t nb = (size_t)(j->n_bcols ? j->n_bcols : 1) * sizeof *bl->bytes;
    int rc = dv_host_alloc(w->dev, nb, (void **)&bl->bytes, err);
    if (rc != PA_OK) {
        pa_free(bl);
        return ex_oom(op, rc, err);
    }
    *local = bl;
    return PA_OK;
}

static void join_local_free(ex_op *op, void *local)
{
    /* Both kinds of local start with their role. */
    if (*(const ex_role *)local == EX_ROLE_STREAMING) {
        ex__join_probe_local_free(op, local);
        return;
    }
    build_local *bl = local;
    for (int i = 0; i < bl->n; i++)
        if (bl->segs[i])
            seg_free(op, bl->segs[i]);
    pa_free(bl->segs);
    dv_chunk_release(bl->pend, bl->stream);
    ex_pinned_free(bl->dev, bl->stream, bl->bytes);   /* a failed query's kernel may still write it */
    ex_pending_close(&bl->ready);
    pa_free(bl);
}

/* Copy the build columns of chunk in, with str_bytes[c] bytes of strings in
 * column c, into the worker's current segment (a new one when it is
 * full). */
static int append(ex_op *op, ex_worker *w, build_local *bl, dv_chunk *in, const int64_t *str_bytes, pa_err *err)
{
    ex__join *j = op->state;
    int64_t n = in->length;
    const pa_column *src[EX__JOIN_MAX_COLS];
    for (int c = 0; c < j->n_bcols; c++)
        src[c] = &in->columns[j->bcol_src[c]];
    ex__join_seg *sg = bl->n ? bl->segs[bl->n - 1] : NULL;
    int rc;
    if (!sg || !seg_fits(sg, j->n_bcols, src, n, str_bytes)) {
        int64_t cap = n > EX__JOIN_SEG_ROWS ? n : EX__JOIN_SEG_ROWS, str_cap[EX__JOIN_MAX_COLS];
        bool nulls[EX__JOIN_MAX_COLS];
        for (int c = 0; c < j->n_bcols; c++) {
            /* Room for strings as long as these on average, and a quarter
             * more; a few long strings (a string_agg) are not taken for
             * the average of a whole segment: past 256 MiB, room for these
             * (the next chunk that does not fit starts a segment). */
            const int64_t lim = (int64_t)1 << 28, own = str_bytes[c] + str_bytes[c] / 4 + 256;
            str_cap[c] = str_bytes[c] * cap / n + str_bytes[c] * cap / n / 4 + 256;
            if (str_cap[c] > lim)
                str_cap[c] = own > lim ? own : lim;
            nulls[c] = src[c]->validity != NULL;
        }
        if ((rc = seg_create(op, j, cap, str_cap, nulls, &sg, err)) != PA_OK)
            return rc;
        if ((rc = segs_push(&bl->segs, &bl->n, &bl->cap, sg, err)) != PA_OK) {
            seg_free(op, sg);
            return rc;
        }
    }
    return seg_append(&w->kn, sg, j->n_bcols, src, n, str_bytes, err);
}

/* Append the chunk whose string bytes were being counted, once they are
 * known; false in *ready while they are not (w->wait names the event). */
static int append_pending(ex_op *op, ex_worker *w, build_local *bl, bool *ready, pa_err *err)
{
    *ready = true;
    if (!bl->pend)
        return PA_OK;
    int rc = ex_pending_ready(w, &bl->ready, ready, err);
    if (rc != PA_OK || !*ready)
        return rc;
    rc = append(op, w, bl, bl->pend, bl->bytes, err);
    dv_chunk_release(bl->pend, w->stream);   /* after the kernels that read it */
    bl->pend = NULL;
    return rc;
}

/* Copy the build columns of one input chunk into the worker's segments, so
 * the chunk - and the scan chunk it may view - is let go at once. With
 * strings, their bytes are counted by a kernel first; where that has not
 * run when the call returns (a device with asynchronous kernels), the chunk
 * is kept and appended at the next call, which waits for the count if it
 * must. */
static int join_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    build_local *bl = local;
    bool ready, strings = false;
    int rc = append_pending(op, w, bl, &ready, err);
    if (rc != PA_OK || !ready) {
        w->blocked = rc == PA_OK;
        return rc;
    }
    if (in->length == 0)
        return PA_OK;
    for (int c = 0; c < j->n_bcols && rc == PA_OK; c++) {
        const pa_column *src = &in->columns[j->bcol_src[c]];
        bl->bytes[c] = 0;
        if (pa_type_is_varlen(src->type.id)) {
            strings = true;
            rc = kn_concat_bytes(&w->kn, src, 1, &bl->bytes[c], err);
        }
    }
    if (rc != PA_OK || !strings)
        return rc == PA_OK ? append(op, w, bl, in, bl->bytes, err) : rc;
    bl->pend = dv_chunk_retain(in);
    if ((rc = append_pending(op, w, bl, &ready, err)) == PA_OK && !ready)
        w->wait = NULL;   /* not waiting now: the next call looks again */
    return rc;
}

static int join_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    ex__join *j = op->state;
    build_local *bl = local;
    bool ready;
    int rc = append_pending(op, w, bl, &ready, err);
    if (rc != PA_OK || !ready) {
        w->blocked = rc == PA_OK;
        return rc;
    }
    pthread_mutex_lock(&j->mu);
    for (int i = 0; i < bl->n && rc == PA_OK; i++) {
        rc = segs_push(&j->segs, &j->n_segs, &j->cap_segs, bl->segs[i], err);
        if (rc == PA_OK)
            bl->segs[i] = NULL;   /* the op's now */
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* ------------------------------------------------------------- finalize */

/* One segment holding every build row: the only one, or all concatenated. */
static int concat_segments(ex_op *op, ex__join *j, ex_query *q, kn_ctx *kn, pa_err *err)
{
    int64_t rows = 0, str_bytes[EX__JOIN_MAX_COLS] = {0};
    bool nulls[EX__JOIN_MAX_COLS] = {0};
    for (int i = 0; i < j->n_segs; i++) {
        ex__join_seg *sg = j->segs[i];
        rows += sg->rows;
        for (int c = 0; c < j->n_bcols; c++) {
            nulls[c] |= sg->cols[c].validity != NULL;
            str_bytes[c] += sg->str_used[c];
        }
    }
    if (rows > INT32_MAX - 1)
        return pa_error(err, PA_EUNSUPPORTED, "%s: build side of %lld rows (at most %d)", op->label,
                        (long long)rows, INT32_MAX - 1);
    if (j->n_segs == 1) {
        j->build = j->segs[0];
        j->n_segs = 0;
        return PA_OK;
    }
    ex__join_seg *all;
    int rc = seg_create(op, j, rows, str_bytes, nulls, &all, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < j->n_segs && rc == PA_OK; i++) {
        if (q && ex_query_failed(q)) {
            rc = pa_error(err, PA_ECANCELED, "query canceled");
            break;
        }
        const pa_column *src[EX__JOIN_MAX_COLS];
        for (int c = 0; c < j->n_bcols; c++)
            src[c] = &j->segs[i]->cols[c];
        rc = seg_append(kn, all, j->n_bcols, src, j->segs[i]->rows, j->segs[i]->str_used, err);
    }
    if (rc != PA_OK) {
        seg_free(op, all);
        return rc;
    }
    for (int i = 0; i < j->n_segs; i++)
        seg_free(op, j->segs[i]);
    j->n_segs = 0;
    j->build = all;
    return PA_OK;
}

/* Slots emptied, rows hashed or rows inserted per task: a few milliseconds
 * on a core (a canceled query stops within one), and enough tasks to share
 * among a pool's threads. A multiple of 8 (bitmap views). */
#define EX__JOIN_TASK (1 << 18)

/* A view of rows [lo, lo + n) of c; lo is a multiple of 8. */
static pa_column rows_view(const pa_column *c, int64_t lo, int64_t n)
{
    pa_column v = *c;
    v.length = n;
    if (pa_type_is_varlen(c->type.id))
        v.offsets = c->offsets + lo;   /* offsets index the same bytes */
    else
        v.data = (uint8_t *)c->data + (size_t)lo * (size_t)pa_type_bytes(c->type);
    if (c->validity)
        v.validity = c->validity + lo / 8;
    return v;
}

/* The build in tasks, two rounds: first emptying the table's slots
 * (n_begin tasks) and hashing the build keys, then the inserts (atomic, so
 * the tasks of a round may run at once on threads or streams). */
typedef struct build_tasks {
    ex__join *j;
    ex_query *q;
    uint64_t *hashes;
    size_t n_begin;
    bool inserts;               /* the second round */
    int rc;                     /* the first error, with err */
    pa_err err;
    pthread_mutex_t mu;
} build_tasks;

static void build_task(void *ctx, size_t i, const kn_ctx *kn)
{
    build_tasks *b = ctx;
    if (__atomic_load_n(&b->rc, __ATOMIC_RELAXED) != PA_OK)
        return;
    ex__join *j = b->j;
    pa_err e;
    pa_err_init(&e);
    int rc;
    if (ex_query_failed(b->q)) {
        rc = pa_error(&e, PA_ECANCELED, "query canceled");
    } else if (b->inserts) {
        int64_t lo = (int64_t)i * EX__JOIN_TASK, n = j->build_rows - lo;
        rc = kn_join_build_rows(kn, &j->table, b->hashes, lo, lo + (n < EX__JOIN_TASK ? n : EX__JOIN_TASK), &e);
    } else if (i < b->n_begin) {
        uint64_t lo = (uint64_t)i * EX__JOIN_TASK, n = j->table.n_slots - lo;
        rc = kn_join_build_begin(kn, &j->table, lo, lo + (n < EX__JOIN_TASK ? n : EX__JOIN_TASK), &e);
    } else {
        int64_t lo = (int64_t)(i - b->n_begin) * EX__JOIN_TASK, n = j->build_rows - lo;
        n = n < EX__JOIN_TASK ? n : EX__JOIN_TASK;
        pa_column view[EX__JOIN_MAX_KEYS];
        for (int k = 0; k < j->n_keys; k++)
            view[k] = rows_view(&j->bkeys[k], lo, n);
        rc = kn_hash_keys(kn, view, j->n_keys, n, b->hashes + lo, &e);
    }
    if (rc != PA_OK) {
        pthread_mutex_lock(&b->mu);
        if (b->rc == PA_OK) {
            pa_err_propagate(&b->err, &e);
            __atomic_store_n(&b->rc, rc, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&b->mu);
    }
    pa_err_close(&e);
}

/* Build the table: each round's tasks in parallel (ex_fin_parallel: on the
 * cpu device on its threads, first-touching a large table's slots being
 * much of a build; elsewhere over a few streams after the finalize
 * stream). The first round covers slot_lo 0, which resets the info, before
 * any insert adds to it. */
static int build_table(ex__join *j, ex_query *q, uint64_t *hashes, pa_err *err)
{
    build_tasks b = {.j = j, .q = q, .hashes = hashes};
    b.n_begin = (size_t)((j->table.n_slots + EX__JOIN_TASK - 1) / EX__JOIN_TASK);
    size_t n_rows = (size_t)((j->build_rows + EX__JOIN_TASK - 1) / EX__JOIN_TASK);
    pa_err_init(&b.err);
    pthread_mutex_init(&b.mu, NULL);
    int rc = ex_fin_parallel(q, b.n_begin + n_rows, build_task, &b, err);
    b.inserts = true;
    if (rc == PA_OK && b.rc == PA_OK)
        rc = ex_fin_parallel(q, n_rows, build_task, &b, err);
    if (rc == PA_OK && b.rc != PA_OK) {
        rc = b.rc;
        pa_err_propagate(err, &b.err);
    }
    pthread_mutex_destroy(&b.mu);
    pa_err_close(&b.err);
    return rc;
}

static int join_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    ex__join *j = op->state;
    kn_ctx kn = {q->dev, q->fin_stream};
    int rc = concat_segments(op, j, q, &kn, err);
    if (rc != PA_OK)
        return rc;
    int64_t rows = j->build->rows;
    j->build_rows = rows;
    if (j->n_keys == 0) {   /* every build row is a candidate: no table */
        if (j->single && rows > 1)
            return pa_error(err, PA_EINVAL, "more than one row returned by a subquery used as an expression");
        j->built = true;
        return PA_OK;
    }
    pa_type btypes[EX__JOIN_MAX_KEYS], ptypes[EX__JOIN_MAX_KEYS];
    for (int k = 0; k < j->n_keys; k++) {
        j->bkeys[k] = j->build->cols[j->key_bcol[k]];
        btypes[k] = j->bkeys[k].type;
        ptypes[k] = op->child[0]->types[j->probe_keys[k]];
    }
    if ((rc = dv_host_alloc(q->dev, sizeof *j->info, (void **)&j->info, err)) != PA_OK)
        return ex_oom(op, rc, err);
    j->info_dev = q->dev;
    size_t tb = kn_join_table_bytes(rows, btypes, ptypes, j->n_keys);
    if ((rc = ex_alloc(op, tb, &j->tmem, err)) != PA_OK)
        return rc;
    j->tmem_size = tb;
    uint64_t *hashes = NULL;
    size_t hb = (size_t)(rows ? rows : 1) * sizeof *hashes;
    if ((rc = ex_alloc(op, hb, (void **)&hashes, err)) != PA_OK)
        return rc;
    rc = kn_join_table_init(&j->table, j->tmem, tb, rows, j->bkeys, ptypes, j->n_keys, j->info, err);
    if (rc == PA_OK)
        rc = build_table(j, q, hashes, err);
    ex_free(op, hashes, hb);
    /* The build info is complete once the finalize stream reached the end
     * of the inserts: the probe reads it (and checks ex_hash_join_single)
     * behind its first wait, which comes after this on its stream. */
    if (rc == PA_OK)
        j->built = true;
    return rc;
}

int ex_hash_join_single(ex_op *join, pa_err *err)
{
    if (!join || join->vt->kind != EX_OP_HASH_JOIN)
        return pa_error(err, PA_EINVAL, "ex_hash_join_single: not a hash join");
    ex__join *j = join->state;
    if (j->type != EX_JOIN_LEFT && j->type != EX_JOIN_INNER)
        return pa_error(err, PA_EINVAL, "ex_hash_join_single: only INNER and LEFT joins output build rows");
    j->single = true;
    return PA_OK;
}

static void join_destroy(ex_op *op)
{
    ex__join *j = op->state;
    if (!j)
        return;
    for (int i = 0; i < j->n_segs; i++)
        seg_free(op, j->segs[i]);
    pa_free(j->segs);
    j->segs = NULL;
    j->n_segs = 0;
    if (j->build)
        seg_free(op, j->build);
    j->build = NULL;
    ex_free(op, j->tmem, j->tmem_size);
    j->tmem = NULL;
    if (j->info)
        dv_host_free(j->info_dev, j->info);
    j->info = NULL;
    pthread_mutex_destroy(&j->mu);
    op->state = NULL;
}

static const ex_op_vt join_vt = {
    .kind = EX_OP_HASH_JOIN,
    .local_init = join_local_init,
    .local_free = join_local_free,
    .execute = ex__join_execute,
    .sink = join_sink,
    .combine = join_combine,
    .finalize = join_finalize,
    .destroy = join_destroy,
};

/* --------------------------------------------------------------- builder */

static int check_col(ex_op *in, int c, const char *what, int i, pa_err *err)
{
    if (c < 0 || c >= in->n_cols)
        return pa_error(err, PA_EINVAL, "hash join: %s %d is column %d of an input with %d columns", what, i, c,
                        in->n_cols);
    return PA_OK;
}

int ex__join_bcol_slot(ex__join *j, int src)
{
    for (int c = 0; c < j->n_bcols; c++)
        if (j->bcol_src[c] == src)
            return c;
    j->bcol_src[j->n_bcols] = src;
    return j->n_bcols++;
}

int ex_hash_join(ex_plan *p, ex_op *probe, ex_op *build, ex_join_type type, const int *probe_keys,
                 const int *build_keys, int n_keys, const int *build_out_cols, int n_build_out, ex_op **out,
                 pa_err *err)
{
    if (n_keys < 1)
        return pa_error(err, PA_EINVAL, "hash join on %d keys (1..%d)", n_keys, EX__JOIN_MAX_KEYS);
    return ex_hash_join_cond(p, probe, build, type, probe_keys, build_keys, n_keys, build_out_cols, n_build_out,
                             NULL, out, err);
}

int ex_hash_join_cond(ex_plan *p, ex_op *probe, ex_op *build, ex_join_type type, const int *probe_keys,
                      const int *build_keys, int n_keys, const int *build_out_cols, int n_build_out,
                      ex_expr *residual, ex_op **out, pa_err *err)
{
    if (!probe || !build)
        return pa_error(err, PA_EINVAL, "hash join: missing input");
    if ((int)type < EX_JOIN_INNER || type > EX_JOIN_MARK)
        return pa_error(err, PA_EINVAL, "hash join: join type %d", (int)type);
    if (n_keys < 0 || n_keys > EX__JOIN_MAX_KEYS || (n_keys && (!probe_keys || !build_keys)))
        return pa_error(err, PA_EINVAL, "hash join on %d keys (0..%d)", n_keys, EX__JOIN_MAX_KEYS);
    if (residual && ex_expr_type(residual).id != PA_TYPE_BOOLEAN)
        return pa_error(err, PA_EINVAL, "hash join: the residual predicate is %s, not BOOLEAN",
                        pa_type_name(ex_expr_type(residual).id));
    bool with_build = type == EX_JOIN_INNER || type == EX_JOIN_LEFT;
    if (!with_build)
        n_build_out = 0;
    if (n_build_out < 0 || n_keys + n_build_out > EX__JOIN_MAX_COLS || (n_build_out && !build_out_cols))
        return pa_error(err, PA_EINVAL, "hash join: %d build output columns", n_build_out);
    int rc;
    for (int k = 0; k < n_keys; k++) {
        if ((rc = check_col(probe, probe_keys[k], "probe key", k, err)) != PA_OK ||
            (rc = check_col(build, build_keys[k], "build key", k, err)) != PA_OK)
            return rc;
        pa_type pt = probe->types[probe_keys[k]], bt = build->types[build_keys[k]];
        if (!kn_join_key_types_ok(bt, pt)) {
            char x[48], y[48];
            return pa_error(err, PA_EINVAL, "hash join: key %s %s cannot be compared with %s %s",
                            probe->names[probe_keys[k]], pa_type_format(pt, x, sizeof x),
                            build->names[build_keys[k]], pa_type_format(bt, y, sizeof y));
        }
    }
    for (int c = 0; c < n_build_out; c++)
        if ((rc = check_col(build, build_out_cols[c], "build output", c, err)) != PA_OK)
            return rc;

    int n_cols = probe->n_cols + n_build_out + (type == EX_JOIN_MARK);
    ex__join *j = ex_plan_alloc(p, sizeof *j);
    if (!j)
        return pa_error(err, PA_ENOMEM, "out of memory building a hash join");
    j->type = type;
    j->n_keys = n_keys;
    j->n_out = n_build_out;
    for (int k = 0; k < n_keys; k++) {
        j->probe_keys[k] = probe_keys[k];
        j->key_bcol[k] = ex__join_bcol_slot(j, build_keys[k]);
    }
    for (int c = 0; c < n_build_out; c++)
        j->out_bcol[c] = ex__join_bcol_slot(j, build_out_cols[c]);
    if ((residual || n_keys == 0) && (rc = ex__join_pairs_setup(p, j, probe, build, residual, err)) != PA_OK)
        return rc;
    ex_op *op;
    if ((rc = ex_op_new(p, &join_vt, n_cols, &op, err)) != PA_OK)
        return rc;
    for (int c = 0; c < probe->n_cols; c++)
        if ((rc = ex_op_set_column(op, c, probe->names[c], probe->types[c], err)) != PA_OK)
            return rc;
    for (int c = 0; c < n_build_out; c++) {
        int src = build_out_cols[c];
        if ((rc = ex_op_set_column(op, probe->n_cols + c, build->names[src], build->types[src], err)) != PA_OK)
            return rc;
    }
    if (type == EX_JOIN_MARK) {
        pa_type bt = {.id = PA_TYPE_BOOLEAN};
        if ((rc = ex_op_set_column(op, n_cols - 1, "mark", bt, err)) != PA_OK)
            return rc;
    }
    pthread_mutex_init(&j->mu, NULL);
    op->state = j;
    op->child[0] = probe;
    op->child[1] = build;
    op->n_child = 2;
    op->est_rows = probe->est_rows;
    snprintf(op->label, sizeof op->label, "%s %s%s", n_keys ? "HASH_JOIN" : "NESTED_LOOP_JOIN", type_label[type],
             j->resid ? " +residual" : "");
    *out = op;
    return PA_OK;
}

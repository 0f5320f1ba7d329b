/*
 * op_join_probe.c - HASH_JOIN probe side (streaming role): hash a probe
 * chunk's keys, probe the table built by finalize, and turn the matched
 * (probe row, build row) pairs into output chunks. Execute drives a chunk
 * through phases (ex__probe_phase), resuming where it stopped when a chunk
 * fans out beyond one output chunk or waits for sizes its kernels write
 * (see op_join_int.h). Joins with a residual or without keys step through
 * op_join_pairs.c; the buffer, gather and output helpers here serve both.
 */
#include "exec/op_join_int.h"

#include <string.h>

typedef ex__probe_local probe_local;

int ex__join_probe_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    ex__join *j = op->state;
    probe_local *pl = pa_calloc(1, sizeof *pl);
    if (!pl)
        return pa_error(err, PA_ENOMEM, "out of host memory for a probe worker");
    pl->role = EX_ROLE_STREAMING;
    pl->dev = w->dev;
    pl->stream = w->stream;
    pl->unique = -1;
    int slots = op->n_cols > j->n_pair_cols ? op->n_cols : j->n_pair_cols;
    int rc = dv_host_alloc(w->dev, sizeof *pl->pin + (size_t)slots * sizeof(int64_t), (void **)&pl->pin, err);
    if (rc != PA_OK) {
        pa_free(pl);
        return ex_oom(op, rc, err);
    }
    *local = pl;
    return PA_OK;
}

void ex__join_probe_local_free(ex_op *op, void *local)
{
    probe_local *pl = local;
    ex_free(op, pl->hashes, pl->hashes_size);
    ex_free(op, pl->scratch, pl->scratch_size);
    ex_free(op, pl->pidx, pl->idx_size);
    ex_free(op, pl->bidx, pl->idx_size);
    ex_free(op, pl->rstate, pl->rstate_size);
    ex_free(op, pl->unknown, pl->unknown_size);
    ex_free(op, pl->escratch, pl->escratch_size);
    ex_text_area_free(op, &pl->text);
    dv_chunk_release(pl->out, pl->stream);
    /* Kernels of a failed query may still be queued to write it. */
    ex_pinned_free(pl->dev, pl->stream, pl->pin);
    ex_pending_close(&pl->pend);
    pa_free(pl);
}

int ex__join_reserve(ex_op *op, void **p, size_t *size, size_t need, pa_err *err)
{
    if (*size >= need && *p)
        return PA_OK;
    ex_free(op, *p, *size);
    *p = NULL;
    *size = 0;
    size_t n = need + need / 2 + 64;
    int rc = ex_alloc(op, n, p, err);
    if (rc == PA_OK)
        *size = n;
    return rc;
}

int ex__join_reserve_idx(ex_op *op, probe_local *pl, pa_err *err)
{
    if (pl->idx_size >= (size_t)pl->capacity * 4 && pl->pidx)
        return PA_OK;
    ex_free(op, pl->pidx, pl->idx_size);
    ex_free(op, pl->bidx, pl->idx_size);
    pl->pidx = pl->bidx = NULL;
    pl->idx_size = 0;
    size_t n = (size_t)pl->capacity * 4 + (size_t)pl->capacity * 2 + 64;
    int rc = ex_alloc(op, n, (void **)&pl->pidx, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = ex_alloc(op, n, (void **)&pl->bidx, err)) != PA_OK) {
        ex_free(op, pl->pidx, n);
        pl->pidx = NULL;
        return rc;
    }
    pl->idx_size = n;
    return PA_OK;
}

int ex__join_probe_capacity(ex_op *op, ex_worker *w, probe_local *pl, int64_t rows, pa_err *err)
{
    int64_t chunk_rows = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : rows;
    pl->capacity = pl->unique != 0 || rows >= chunk_rows ? rows : chunk_rows;
    return ex__join_reserve_idx(op, pl, err);
}

int ex__join_cursor_reset(ex_worker *w, probe_local *pl, pa_err *err)
{
    static const kn_join_cursor zero;
    pl->first = true;
    if (dv_kind_of(w->dev) == DV_KIND_CPU) {   /* its kernels ran before they returned */
        pl->pin->cur = zero;
        return PA_OK;
    }
    return dv_copy_async(w->stream, &pl->pin->cur, &zero, sizeof zero, DV_COPY_H2H, err);
}

int ex__join_check_single(ex_op *op, pa_err *err)
{
    ex__join *j = op->state;
    if (j->single && j->n_keys && !j->info->unique)
        return pa_error(err, PA_EINVAL, "more than one row returned by a subquery used as an expression");
    return PA_OK;
}

/* Start probing chunk in: hash its keys, size the buffers, reset the cursor. */
static int probe_start(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int64_t rows = in->length;
    pa_column pk[EX__JOIN_MAX_KEYS];
    for (int k = 0; k < j->n_keys; k++)
        pk[k] = in->columns[j->probe_keys[k]];
    int rc;
    if ((rc = ex__join_reserve(op, (void **)&pl->hashes, &pl->hashes_size, (size_t)rows * 8, err)) != PA_OK ||
        (rc = ex__join_reserve(op, &pl->scratch, &pl->scratch_size, kn_join_probe_scratch_size(&j->table, rows),
                               err)) != PA_OK)
        return rc;
    if ((rc = kn_hash_keys(&w->kn, pk, j->n_keys, rows, pl->hashes, err)) != PA_OK ||
        (rc = ex__join_cursor_reset(w, pl, err)) != PA_OK)
        return rc;
    pl->ph = EX__PH_CALL;
    return PA_OK;
}

/* EX__PH_CALL: the next kn_join_probe call, into pl->out's MARK column. */
static int probe_call(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int64_t rows = in->length;
    pa_column pk[EX__JOIN_MAX_KEYS];
    for (int k = 0; k < j->n_keys; k++)
        pk[k] = in->columns[j->probe_keys[k]];
    uint8_t *mark = NULL, *mark_valid = NULL;
    int rc;
    if (j->type == EX_JOIN_INNER || j->type == EX_JOIN_LEFT) {
        if ((rc = ex__join_probe_capacity(op, w, pl, rows, err)) != PA_OK)
            return rc;
    } else {   /* one output row per probe row at most: one call */
        pl->capacity = rows;
        if ((rc = ex__join_reserve_idx(op, pl, err)) != PA_OK)
            return rc;
    }
    if (j->type == EX_JOIN_MARK) {
        if ((rc = ex_chunk_new(op, w, op->n_cols, &pl->out, err)) != PA_OK)
            return rc;
        pa_column *mc = &pl->out->columns[op->n_cols - 1];
        if ((rc = ex_chunk_alloc(op, pl->out, (size_t)rows, (void **)&mark, err)) != PA_OK ||
            (rc = ex_chunk_alloc(op, pl->out, ((size_t)rows + 7) / 8, (void **)&mark_valid, err)) != PA_OK)
            return rc;
        mc->type = op->types[op->n_cols - 1];
        mc->data = mark;
        mc->validity = mark_valid;   /* dropped below when no mark is NULL */
    }
    rc = kn_join_probe(&w->kn, &j->table, (kn_join_kind)j->type, pk, pl->hashes, rows, pl->scratch,
                       pl->scratch_size, &pl->pin->cur, pl->capacity, pl->pidx, pl->bidx, mark, mark_valid, err);
    pl->wait = true;
    pl->ph = EX__PH_COUNT;
    return rc;
}

/* EX__PH_COUNT: the call's pairs, once its cursor can be read. */
static int probe_count(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int rc = ex__join_check_single(op, err);
    if (rc != PA_OK)
        return rc;
    pl->unique = j->info->unique != 0;
    const kn_join_cursor *cur = &pl->pin->cur;
    if (j->type == EX_JOIN_MARK && cur->n_null == 0)
        pl->out->columns[op->n_cols - 1].validity = NULL;
    /* Each probe row at most once (LEFT: at least once, so as many rows as
     * in means once each). */
    bool once = pl->first && cur->done && (j->type != EX_JOIN_INNER || pl->unique);
    pl->first = false;
    pl->done = cur->done;
    return ex__join_emit_sizes(op, w, pl, in, cur->n_out, j->type == EX_JOIN_LEFT && cur->n_null > 0, once,
                               cur->done ? EX__PH_IDLE : EX__PH_CALL, err);
}

bool ex__join_identity(const probe_local *pl, const int32_t *idx, int64_t n, int64_t rows, bool once)
{
    if (n != rows)
        return false;
    if (once)
        return true;
    if (!dv_host_visible(pl->dev))
        return false;   /* unknown without reading device memory: gather */
    for (int64_t i = 0; i < n; i++)
        if (idx[i] != i)
            return false;
    return true;
}

int ex__join_take_bytes(ex_worker *w, probe_local *pl, const pa_column *src, const int32_t *idx, int64_t n,
                        int slot, pa_err *err)
{
    if (!pa_type_is_varlen(src->type.id))
        return PA_OK;
    pl->wait = true;
    return kn_take_string_bytes(&w->kn, src, idx, n, &pl->pin->bytes[slot], err);
}

int ex__join_take(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *o, const pa_column *src, const int32_t *idx,
                  int64_t n, bool nulls, int slot, pa_column *dst, pa_err *err)
{
    int rc;
    memset(dst, 0, sizeof *dst);
    size_t data;
    if (pa_type_is_varlen(src->type.id)) {
        data = (size_t)pl->pin->bytes[slot];
        if ((rc = ex_chunk_alloc(op, o, ((size_t)n + 1) * 4, (void **)&dst->offsets, err)) != PA_OK)
            return rc;
    } else {
        data = (size_t)n * (size_t)pa_type_bytes(src->type);
    }
    if ((rc = ex_chunk_alloc(op, o, data ? data : 1, &dst->data, err)) != PA_OK)
        return rc;
    if ((nulls || src->validity) &&
        (rc = ex_chunk_alloc(op, o, ((size_t)n + 7) / 8, (void **)&dst->validity, err)) != PA_OK)
        return rc;
    if ((rc = kn_take(&w->kn, src, idx, n, dst, err)) == PA_OK && pa_type_is_varlen(src->type.id))
        pa_column_set_bytes(dst, (int64_t)data);   /* kn_take_string_bytes' exact count */
    return rc;
}

void ex__join_drop_out(ex_worker *w, probe_local *pl)
{
    dv_chunk_release(pl->out, w->stream);
    pl->out = NULL;
}

int ex__join_emit_sizes(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, int64_t n, bool nulls, bool once,
                        ex__probe_phase after, pa_err *err)
{
    ex__join *j = op->state;
    int n_probe = op->child[0]->n_cols, rc = PA_OK;
    pl->after = after;
    if (n == 0) {
        ex__join_drop_out(w, pl);
        pl->ph = after;
        return PA_OK;
    }
    pl->n = n;
    pl->nulls = nulls;
    pl->ident = ex__join_identity(pl, pl->pidx, n, in->length, once);
    for (int c = 0; c < n_probe && !pl->ident && rc == PA_OK; c++)
        rc = ex__join_take_bytes(w, pl, &in->columns[c], pl->pidx, n, c, err);
    for (int c = 0; c < j->n_out && rc == PA_OK; c++)
        rc = ex__join_take_bytes(w, pl, &j->build->cols[j->out_bcol[c]], pl->bidx, n, n_probe + c, err);
    pl->ph = EX__PH_EMIT;
    return rc;
}

/* EX__PH_EMIT: fill pl->out (made here unless MARK made it) with the rows
 * ex__join_emit_sizes set up, once their string bytes are known, and hand
 * it to *out. The probe columns are in's own, without a copy, when the
 * rows are exactly in's rows in order. */
static int emit(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, dv_chunk **out, pa_err *err)
{
    ex__join *j = op->state;
    int n_probe = op->child[0]->n_cols, rc;
    int64_t n = pl->n;
    if (!pl->out && (rc = ex_chunk_new(op, w, op->n_cols, &pl->out, err)) != PA_OK)
        return rc;
    dv_chunk *o = pl->out;
    if (pl->ident) {
        for (int c = 0; c < n_probe; c++)
            o->columns[c] = in->columns[c];
        if ((rc = dv_chunk_depend(o, in, err)) != PA_OK)
            return rc;
    } else {
        for (int c = 0; c < n_probe; c++)
            if ((rc = ex__join_take(op, w, pl, o, &in->columns[c], pl->pidx, n, false, c, &o->columns[c], err)) !=
                PA_OK)
                return rc;
    }
    for (int c = 0; c < j->n_out; c++)
        if ((rc = ex__join_take(op, w, pl, o, &j->build->cols[j->out_bcol[c]], pl->bidx, n, pl->nulls, n_probe + c,
                                &o->columns[n_probe + c], err)) != PA_OK)
            return rc;
    o->length = n;
    for (int c = 0; c < o->n_columns; c++)
        o->columns[c].length = n;
    *out = o;
    pl->out = NULL;
    pl->ph = pl->after;
    return PA_OK;
}

/* Back to no chunk, letting go of what the one in progress held. */
static void probe_reset(ex_worker *w, probe_local *pl)
{
    ex__join_drop_out(w, pl);
    pl->ph = EX__PH_IDLE;
    pl->wait = false;
}

/* Execute drives the phases: each step waits for the sizes the previous
 * one enqueued (EX_BLOCKED while they are pending), one output chunk or
 * one batch of pairs per call. */
int ex__join_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                     pa_err *err)
{
    ex__join *j = op->state;
    probe_local *pl = local;
    int rc = PA_OK;
    *out = NULL;
    *st = EX_NEED_INPUT;
    if (!j->built)
        return pa_error(err, PA_EINTERNAL, "%s: probe before the build side finished", op->label);
    if (pl->ph == EX__PH_IDLE) {
        if (in->length == 0)
            return PA_OK;
        rc = j->general ? ex__join_pairs_start(op, w, pl, in, out, err) : probe_start(op, w, pl, in, err);
        if (rc != PA_OK)
            goto fail;
    }
    bool called = false;   /* one probe call per execute: a long cross product stays cancellable */
    while (!*out && pl->ph != EX__PH_IDLE && !(called && pl->ph == EX__PH_CALL)) {
        bool ready = true;
        if (pl->wait && (rc = ex_pending_ready(w, &pl->pend, &ready, err)) != PA_OK)
            goto fail;
        if (!ready) {
            *st = EX_BLOCKED;
            return PA_OK;
        }
        pl->wait = false;
        called |= pl->ph == EX__PH_CALL;
        if (pl->ph == EX__PH_EMIT)
            rc = emit(op, w, pl, in, out, err);
        else if (j->general)
            rc = ex__join_pairs_step(op, w, pl, in, err);
        else if (pl->ph == EX__PH_CALL)
            rc = probe_call(op, w, pl, in, err);
        else if (pl->ph == EX__PH_COUNT)
            rc = probe_count(op, w, pl, in, err);
        else
            rc = pa_error(err, PA_EINTERNAL, "%s: probe phase %d", op->label, (int)pl->ph);
        if (rc != PA_OK)
            goto fail;
    }
    *st = pl->ph == EX__PH_IDLE ? EX_NEED_INPUT : EX_HAVE_OUTPUT;
    return PA_OK;
fail:
    probe_reset(w, pl);
    return rc;
}

/*
 * op_join_probe.c - HASH_JOIN probe side (streaming role): hash a probe
 * chunk's keys, probe the table built by finalize, and turn the matched
 * (probe row, build row) pairs into output chunks, resuming across calls
 * when a chunk fans out beyond one output chunk (see op_join_int.h). Joins
 * with a residual or without keys go to op_join_pairs.c; the buffer, gather
 * and output helpers here serve both.
 */
#include "exec/op_join_int.h"

#include <string.h>

typedef ex__probe_local probe_local;

int ex__join_probe_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    probe_local *pl = pa_calloc(1, sizeof *pl);
    if (!pl)
        return pa_error(err, PA_ENOMEM, "out of host memory for a probe worker");
    pl->role = EX_ROLE_STREAMING;
    pl->dev = w->dev;
    int rc = dv_host_alloc(w->dev, sizeof *pl->pin, (void **)&pl->pin, err);
    if (rc != PA_OK) {
        pa_free(pl);
        return rc;
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
    dv_host_free(pl->dev, pl->pin);
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

/* Start probing chunk in: hash its keys, size the buffers, reset the cursor. */
static int probe_start(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int64_t rows = in->length;
    pa_column pk[EX__JOIN_MAX_KEYS];
    for (int k = 0; k < j->n_keys; k++)
        pk[k] = in->columns[j->probe_keys[k]];
    bool one_call = j->type == EX_JOIN_SEMI || j->type == EX_JOIN_ANTI || j->type == EX_JOIN_MARK ||
                    j->info->unique;
    int64_t chunk_rows = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : rows;
    pl->capacity = one_call || rows >= chunk_rows ? rows : chunk_rows;
    int rc;
    if ((rc = ex__join_reserve(op, (void **)&pl->hashes, &pl->hashes_size, (size_t)rows * 8, err)) != PA_OK ||
        (rc = ex__join_reserve(op, &pl->scratch, &pl->scratch_size, kn_join_probe_scratch_size(&j->table, rows),
                               err)) != PA_OK)
        return rc;
    if ((rc = ex__join_reserve_idx(op, pl, err)) != PA_OK)
        return rc;
    if ((rc = kn_hash_keys(&w->kn, pk, j->n_keys, rows, pl->hashes, err)) != PA_OK)
        return rc;
    memset(&pl->pin->cur, 0, sizeof pl->pin->cur);
    pl->in = in;
    pl->active = true;
    return PA_OK;
}

int ex__join_take(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *o, const pa_column *src, const int32_t *idx,
                  int64_t n, bool nulls, pa_column *dst, pa_err *err)
{
    int rc;
    memset(dst, 0, sizeof *dst);
    size_t data;
    if (src->type.id == PA_TYPE_VARCHAR) {
        if ((rc = kn_take_string_bytes(&w->kn, src, idx, n, &pl->pin->bytes, err)) != PA_OK)
            return rc;
        data = (size_t)pl->pin->bytes;
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
    return kn_take(&w->kn, src, idx, n, dst, err);
}

static bool is_identity(const int32_t *idx, int64_t n, int64_t rows)
{
    if (n != rows)
        return false;
    for (int64_t i = 0; i < n; i++)
        if (idx[i] != i)
            return false;
    return true;
}

int ex__join_emit(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, dv_chunk *o, const int32_t *pidx,
                  const int32_t *bidx, int64_t n, bool build_nulls, pa_err *err)
{
    ex__join *j = op->state;
    int n_probe = op->child[0]->n_cols, rc;
    if (is_identity(pidx, n, in->length)) {
        for (int c = 0; c < n_probe; c++)
            o->columns[c] = in->columns[c];
        if ((rc = dv_chunk_depend(o, in, err)) != PA_OK)
            return rc;
    } else {
        for (int c = 0; c < n_probe; c++)
            if ((rc = ex__join_take(op, w, pl, o, &in->columns[c], pidx, n, false, &o->columns[c], err)) != PA_OK)
                return rc;
    }
    for (int c = 0; c < j->n_out; c++)
        if ((rc = ex__join_take(op, w, pl, o, &j->build->cols[j->out_bcol[c]], bidx, n, build_nulls,
                                &o->columns[n_probe + c], err)) != PA_OK)
            return rc;
    o->length = n;
    for (int c = 0; c < o->n_columns; c++)
        o->columns[c].length = n;
    return PA_OK;
}

int ex__join_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                     pa_err *err)
{
    ex__join *j = op->state;
    probe_local *pl = local;
    int rc;
    *out = NULL;
    *st = EX_NEED_INPUT;
    if (!j->built)
        return pa_error(err, PA_EINTERNAL, "%s: probe before the build side finished", op->label);
    if (j->general)
        return ex__join_execute_pairs(op, w, pl, in, out, st, err);
    if (!pl->active || pl->in != in) {
        if (in->length == 0)
            return PA_OK;
        if ((rc = probe_start(op, w, pl, in, err)) != PA_OK)
            return rc;
    }
    int64_t rows = in->length;
    pa_column pk[EX__JOIN_MAX_KEYS];
    for (int k = 0; k < j->n_keys; k++)
        pk[k] = in->columns[j->probe_keys[k]];
    dv_chunk *o = NULL;
    uint8_t *mark = NULL, *mark_valid = NULL;
    if ((rc = ex_chunk_new(op, w, op->n_cols, &o, err)) != PA_OK)
        goto fail;
    if (j->type == EX_JOIN_MARK) {
        pa_column *mc = &o->columns[op->n_cols - 1];
        if ((rc = ex_chunk_alloc(op, o, (size_t)rows, (void **)&mark, err)) != PA_OK ||
            (rc = ex_chunk_alloc(op, o, ((size_t)rows + 7) / 8, (void **)&mark_valid, err)) != PA_OK)
            goto fail;
        mc->type = op->types[op->n_cols - 1];
        mc->data = mark;
    }
    kn_join_cursor *cur = &pl->pin->cur;
    rc = kn_join_probe(&w->kn, &j->table, (kn_join_kind)j->type, pk, pl->hashes, rows, pl->scratch,
                       pl->scratch_size, cur, pl->capacity, pl->pidx, pl->bidx, mark, mark_valid, err);
    if (rc != PA_OK)
        goto fail;
    /* cpu device: the kernel has finished, the sizes in pinned memory are final. */
    int64_t n = cur->n_out;
    if (j->type == EX_JOIN_MARK && cur->n_null > 0)
        o->columns[op->n_cols - 1].validity = mark_valid;
    if (n > 0) {
        bool nulls = j->type == EX_JOIN_LEFT && cur->n_null > 0;
        if ((rc = ex__join_emit(op, w, pl, in, o, pl->pidx, pl->bidx, n, nulls, err)) != PA_OK)
            goto fail;
        *out = o;
    } else {
        dv_chunk_destroy(o);
    }
    if (cur->done) {
        pl->active = false;
        pl->in = NULL;
        *st = EX_NEED_INPUT;
    } else {
        *st = EX_HAVE_OUTPUT;
    }
    return PA_OK;
fail:
    dv_chunk_destroy(o);
    pl->active = false;
    pl->in = NULL;
    return rc;
}

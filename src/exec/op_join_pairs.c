/*
 * op_join_pairs.c - HASH_JOIN with a residual predicate or without keys
 * (design notes in op_join_int.h, "Pairs"): the builder's part (the
 * residual compiled over the pair schema, the build columns it reads kept
 * by the build side) and the probe over candidate pairs in batches.
 *
 * Per probe chunk: each call takes one batch of up to `capacity` candidate
 * pairs (key-equal pairs from kn_join_probe INNER, or every pair from
 * kn_join_cross), filters it with the residual and, for INNER and LEFT,
 * emits the surviving pairs; the call after the last batch emits what the
 * per-row states give (LEFT's padded rows, SEMI, ANTI, MARK). One batch per
 * call keeps a large cross product cancellable between batches. Each batch
 * goes through the phases CALL, COUNT, RESIDUAL (string bytes of the
 * gathered columns known), FILTERED and EMIT, the per-row result through
 * FINISH, FINISHED and EMIT, each reading what the one before wrote. A join
 * without keys and without a residual decides SEMI, ANTI and MARK from
 * whether the build side is empty alone.
 */
#include "exec/expr_int.h"
#include "exec/op_join_int.h"

#include <string.h>

/* Pairs of a cross product per batch at most, whatever the chunk rows: a
 * batch is what a canceled query waits for, and a few milliseconds of
 * work on a CPU core. */
#define EX__JOIN_CROSS_BATCH (1 << 18)

typedef ex__probe_local probe_local;

/* ---------------------------------------------------------------- builder */

int ex__join_pairs_setup(ex_plan *p, ex__join *j, ex_op *probe, ex_op *build, ex_expr *residual, pa_err *err)
{
    int P = probe->n_cols, n = P + build->n_cols;
    j->n_probe_cols = P;
    j->n_pair_cols = n;
    j->general = j->n_keys == 0;
    /* A TRUE residual is none at all. */
    if (!residual || (residual->kind == EX__CONST && !residual->is_null && residual->v.i))
        return PA_OK;
    pa_type *types = pa_malloc((size_t)(n ? n : 1) * sizeof *types);
    if (!types)
        return pa_error(err, PA_ENOMEM, "out of memory compiling a join's residual");
    for (int c = 0; c < n; c++)
        types[c] = c < P ? probe->types[c] : build->types[c - P];
    kn_program *tmp = NULL;
    int rc = ex__compile(&residual, 1, types, n, &tmp, err);
    pa_free(types);
    if (rc == PA_OK && (rc = kn_program_check(tmp, err)) == PA_OK) {
        j->resid = ex_plan_alloc(p, tmp->bytes);
        j->pair_bcol = ex_plan_alloc(p, (size_t)(n ? n : 1) * sizeof *j->pair_bcol);
        j->pair_used = ex_plan_alloc(p, (size_t)(n ? n : 1) * sizeof *j->pair_used);
        if (!j->resid || !j->pair_bcol || !j->pair_used)
            rc = pa_error(err, PA_ENOMEM, "out of memory keeping a join's residual");
        else
            memcpy(j->resid, tmp, tmp->bytes);
    }
    pa_free(tmp);
    if (rc != PA_OK) {
        j->resid = NULL;
        return rc;
    }
    const pa_type *in = kn_program_inputs(j->resid);
    for (int c = 0; c < n; c++) {
        j->pair_used[c] = c < (int)j->resid->n_inputs && in[c].id != PA_TYPE__COUNT;
        j->pair_bcol[c] = -1;
        if (!j->pair_used[c] || c < P)
            continue;
        bool known = false;
        for (int s = 0; s < j->n_bcols && !known; s++)
            known = j->bcol_src[s] == c - P;
        if (!known && j->n_bcols >= EX__JOIN_MAX_COLS) {
            j->resid = NULL;
            return pa_error(err, PA_EINVAL, "hash join: more than %d build columns with the residual's",
                            EX__JOIN_MAX_COLS);
        }
        j->pair_bcol[c] = ex__join_bcol_slot(j, c - P);
    }
    j->general = true;
    return PA_OK;
}

/* ------------------------------------------------------------------ probe */

/* Whether the per-row states are needed (something is emitted per probe
 * row once its pairs are done). */
static bool per_row(const ex__join *j)
{
    if (j->type == EX_JOIN_INNER)
        return false;
    /* LEFT without a residual or keys pads rows only when the build side is empty. */
    return !(j->type == EX_JOIN_LEFT && !j->resid && j->build_rows > 0);
}

/* Set n bytes of device memory (rounded up to 4: the caller's block has
 * room) to the byte v, in the order of w's stream. */
static int fill_bytes(ex_worker *w, void *p, uint8_t v, size_t n, pa_err *err)
{
    if (dv_host_visible(w->dev)) {
        memset(p, v, n);
        return PA_OK;
    }
    return dv_fill_u32_async(w->stream, p, v * 0x01010101u, (n + 3) / 4, err);
}

/* SEMI, ANTI and MARK without keys or residual: decided by whether the
 * build side is empty. */
static int decided(ex_op *op, ex_worker *w, dv_chunk *in, dv_chunk **out, pa_err *err)
{
    ex__join *j = op->state;
    bool any = j->build_rows > 0;
    if (j->type != EX_JOIN_MARK) {
        if (any == (j->type == EX_JOIN_SEMI))
            *out = dv_chunk_retain(in);
        return PA_OK;
    }
    dv_chunk *o = NULL;
    uint8_t *mark;
    size_t bytes = ((size_t)in->length + 3) & ~(size_t)3;
    int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
    if (rc == PA_OK && (rc = ex_chunk_alloc(op, o, bytes, (void **)&mark, err)) == PA_OK &&
        (rc = dv_chunk_depend(o, in, err)) == PA_OK && (rc = fill_bytes(w, mark, any, bytes, err)) == PA_OK) {
        for (int c = 0; c < in->n_columns; c++)
            o->columns[c] = in->columns[c];
        pa_column *mc = &o->columns[op->n_cols - 1];
        mc->type = op->types[op->n_cols - 1];
        mc->data = mark;
        mc->length = in->length;
        o->length = in->length;
        *out = o;
        return PA_OK;
    }
    dv_chunk_release(o, w->stream);
    return rc;
}

int ex__join_pairs_start(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, dv_chunk **out, pa_err *err)
{
    ex__join *j = op->state;
    if (j->n_keys == 0 && !j->resid && j->type != EX_JOIN_INNER && j->type != EX_JOIN_LEFT)
        return decided(op, w, in, out, err);
    int64_t rows = in->length;
    int rc;
    if (j->n_keys) {
        pa_column pk[EX__JOIN_MAX_KEYS];
        for (int k = 0; k < j->n_keys; k++)
            pk[k] = in->columns[j->probe_keys[k]];
        if ((rc = ex__join_reserve(op, (void **)&pl->hashes, &pl->hashes_size, (size_t)rows * 8, err)) != PA_OK ||
            (rc = ex__join_reserve(op, &pl->scratch, &pl->scratch_size, kn_join_probe_scratch_size(&j->table, rows),
                                   err)) != PA_OK ||
            (rc = kn_hash_keys(&w->kn, pk, j->n_keys, rows, pl->hashes, err)) != PA_OK)
            return rc;
    }
    if (per_row(j) &&
        ((rc = ex__join_reserve(op, (void **)&pl->rstate, &pl->rstate_size, (size_t)rows, err)) != PA_OK ||
         (rc = fill_bytes(w, pl->rstate, 0, (size_t)rows, err)) != PA_OK))
        return rc;
    if (j->type == EX_JOIN_MARK && j->n_keys &&
        (rc = ex__join_reserve(op, (void **)&pl->unknown, &pl->unknown_size, (size_t)rows, err)) != PA_OK)
        return rc;
    if (j->resid && (rc = ex__join_reserve(op, &pl->escratch, &pl->escratch_size, kn_eval_scratch_size(j->resid),
                                           err)) != PA_OK)
        return rc;
    if ((rc = ex__join_cursor_reset(w, pl, err)) != PA_OK)
        return rc;
    pl->pairs = 0;
    pl->ph = EX__PH_CALL;
    return PA_OK;
}

/* EX__PH_CALL: the next batch of candidate pairs. */
static int batch_call(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    kn_join_cursor *cur = &pl->pin->cur;
    int64_t rows = in->length;
    int rc;
    if (j->n_keys) {
        pa_column pk[EX__JOIN_MAX_KEYS];
        for (int k = 0; k < j->n_keys; k++)
            pk[k] = in->columns[j->probe_keys[k]];
        if ((rc = ex__join_probe_capacity(op, w, pl, rows, err)) != PA_OK)
            return rc;
        rc = kn_join_probe(&w->kn, &j->table, KN_JOIN_INNER, pk, pl->hashes, rows, pl->scratch, pl->scratch_size,
                           cur, pl->capacity, pl->pidx, pl->bidx, NULL, NULL, err);
    } else {
        /* Batches of chunk rows pairs (at most EX__JOIN_CROSS_BATCH), or
         * one for a small cross product; never fewer than rows, so the
         * per-row result fits. */
        int64_t chunk_rows = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : rows;
        int64_t all = rows * j->build_rows, cap = chunk_rows < EX__JOIN_CROSS_BATCH ? chunk_rows : EX__JOIN_CROSS_BATCH;
        pl->capacity = all < cap ? all : cap;
        if (pl->capacity < rows)
            pl->capacity = rows;
        if ((rc = ex__join_reserve_idx(op, pl, err)) != PA_OK)
            return rc;
        rc = kn_join_cross(&w->kn, rows, j->build_rows, cur, pl->capacity, pl->pidx, pl->bidx, err);
        /* Its count is known here: the pairs in order, capacity at a time. */
        pl->n = all - pl->pairs < pl->capacity ? all - pl->pairs : pl->capacity;
        pl->pairs += pl->n;
        pl->ph = EX__PH_COUNT;
        return rc;
    }
    pl->wait = true;
    pl->ph = EX__PH_COUNT;
    return rc;
}

/* What follows a batch: the next one, the per-row result, or the next chunk. */
static ex__probe_phase after_batch(const ex__join *j, const probe_local *pl)
{
    return !pl->done ? EX__PH_CALL : per_row(j) ? EX__PH_FINISH : EX__PH_IDLE;
}

/* The n pairs of a batch that passed (all of them without a residual):
 * INNER and LEFT emit them. */
static int batch_emit(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, int64_t n, pa_err *err)
{
    ex__join *j = op->state;
    if (j->type != EX_JOIN_INNER && j->type != EX_JOIN_LEFT)
        n = 0;
    return ex__join_emit_sizes(op, w, pl, in, n, false, pl->once, after_batch(j, pl), err);
}

/* EX__PH_COUNT: the batch's pairs; with a residual, the string bytes of
 * the columns it reads are counted first. */
static int batch_count(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int P = j->n_probe_cols, rc = ex__join_check_single(op, err);
    if (rc != PA_OK)
        return rc;
    const kn_join_cursor *cur = &pl->pin->cur;
    int64_t n = j->n_keys ? cur->n_out : pl->n;
    pl->done = j->n_keys ? cur->done != 0 : pl->pairs == (int64_t)in->length * j->build_rows;
    if (j->n_keys)
        pl->unique = j->info->unique != 0;
    pl->once = pl->first && pl->done && (j->n_keys ? pl->unique == 1 : j->build_rows <= 1);
    pl->first = false;
    if (n == 0 || !j->resid)
        return batch_emit(op, w, pl, in, n, err);
    pl->n = n;
    pl->ident = ex__join_identity(pl, pl->pidx, n, in->length, pl->once);
    if (j->resid->n_text > 0 && !dv_host_visible(w->dev))
        pl->ident = false;   /* gathered, the columns' byte counts size the text area */
    for (int c = 0; c < j->n_pair_cols && rc == PA_OK; c++) {
        if (!j->pair_used[c] || (c < P && pl->ident))
            continue;
        rc = c < P ? ex__join_take_bytes(w, pl, &in->columns[c], pl->pidx, n, c, err)
                   : ex__join_take_bytes(w, pl, &j->build->cols[j->pair_bcol[c]], pl->bidx, n, c, err);
    }
    pl->ph = EX__PH_RESIDUAL;
    return rc;
}

/* EX__PH_RESIDUAL: evaluate the residual over the pl->n pairs in pl->pidx /
 * pl->bidx, keep the TRUE ones there (their number to pl->pin->count) and
 * update the row states. */
static int residual(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int P = j->n_probe_cols, rc;
    int64_t n = pl->n;
    dv_chunk *pc = NULL;
    if ((rc = ex_chunk_new(op, w, j->n_pair_cols, &pc, err)) != PA_OK)
        return rc;
    for (int c = 0; c < j->n_pair_cols && rc == PA_OK; c++) {
        if (!j->pair_used[c])
            continue;
        if (c < P && pl->ident)
            pc->columns[c] = in->columns[c];   /* a view: pc goes before in */
        else if (c < P)
            rc = ex__join_take(op, w, pl, pc, &in->columns[c], pl->pidx, n, false, c, &pc->columns[c], err);
        else
            rc = ex__join_take(op, w, pl, pc, &j->build->cols[j->pair_bcol[c]], pl->bidx, n, false, c,
                               &pc->columns[c], err);
    }
    pa_column res = {.type = kn_program_outputs(j->resid)[0].type, .length = n};
    if (rc == PA_OK)
        rc = ex_chunk_alloc(op, pc, (size_t)n, &res.data, err);
    if (rc == PA_OK && kn_eval_may_null(j->resid, 0, pc->columns, j->n_pair_cols))
        rc = ex_chunk_alloc(op, pc, ((size_t)n + 7) / 8, (void **)&res.validity, err);
    int64_t text = 0;
    if (rc == PA_OK && j->resid->n_text > 0) {
        if (dv_host_visible(w->dev))
            text = kn_eval_str_bound(j->resid, KN_EVAL_TEXT_AREA, pc->columns, j->n_pair_cols, n);
        else if (!kn_eval_text_area_known(j->resid, pc->columns, j->n_pair_cols, n, &text))
            rc = pa_error(err, PA_EINTERNAL, "%s: the residual's text area is of unknown size", op->label);
        if (rc == PA_OK)
            rc = ex_text_area_reserve(op, &pl->text, text, err);
    }
    if (rc == PA_OK)
        rc = kn_eval(&w->kn, j->resid, pc->columns, j->n_pair_cols, n, &res, pl->escratch, text ? pl->text.p : NULL,
                     text, err);
    if (rc == PA_OK)
        rc = kn_join_pairs_filter(&w->kn, &res, n, pl->pidx, pl->bidx, per_row(j) ? pl->rstate : NULL,
                                  &pl->pin->count, err);
    dv_chunk_release(pc, w->stream);   /* after the kernels that read it */
    pl->wait = true;
    pl->ph = EX__PH_FILTERED;
    return rc;
}

/* EX__PH_FINISH: every pair of in is done: the rows the per-row states give. */
static int finish(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int64_t rows = in->length;
    uint8_t *mark = NULL, *mark_valid = NULL;
    int rc = PA_OK;
    if (j->type == EX_JOIN_MARK) {
        if ((rc = ex_chunk_new(op, w, op->n_cols, &pl->out, err)) != PA_OK)
            return rc;
        if ((rc = ex_chunk_alloc(op, pl->out, (size_t)rows, (void **)&mark, err)) == PA_OK)
            rc = ex_chunk_alloc(op, pl->out, ((size_t)rows + 7) / 8, (void **)&mark_valid, err);
        if (rc == PA_OK && j->n_keys) {
            pa_column pk[EX__JOIN_MAX_KEYS];
            for (int k = 0; k < j->n_keys; k++)
                pk[k] = in->columns[j->probe_keys[k]];
            rc = kn_join_in_unknown(&w->kn, &j->table, pk, rows, pl->unknown, err);
        }
        pa_column *mc = &pl->out->columns[op->n_cols - 1];
        mc->type = op->types[op->n_cols - 1];
        mc->data = mark;
        mc->validity = mark_valid;   /* dropped when no mark is NULL */
    }
    if (rc == PA_OK)
        rc = kn_join_finish(&w->kn, (kn_join_kind)j->type, pl->rstate, j->n_keys ? pl->unknown : NULL, rows, pl->pidx,
                            pl->bidx, mark, mark_valid, &pl->pin->count, &pl->pin->n_null, err);
    pl->wait = true;
    pl->ph = EX__PH_FINISHED;
    return rc;
}

int ex__join_pairs_step(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    switch (pl->ph) {
    case EX__PH_CALL:
        return batch_call(op, w, pl, in, err);
    case EX__PH_COUNT:
        return batch_count(op, w, pl, in, err);
    case EX__PH_RESIDUAL:
        return residual(op, w, pl, in, err);
    case EX__PH_FILTERED:
        return batch_emit(op, w, pl, in, pl->pin->count, err);
    case EX__PH_FINISH:
        return finish(op, w, pl, in, err);
    case EX__PH_FINISHED:
        if (j->type == EX_JOIN_MARK && pl->pin->n_null == 0)
            pl->out->columns[op->n_cols - 1].validity = NULL;
        /* Each probe row at most once, over the whole chunk. */
        return ex__join_emit_sizes(op, w, pl, in, pl->pin->count, j->type == EX_JOIN_LEFT, true, EX__PH_IDLE, err);
    default:
        return pa_error(err, PA_EINTERNAL, "%s: probe phase %d", op->label, (int)pl->ph);
    }
}

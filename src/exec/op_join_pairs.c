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
 * call keeps a large cross product cancellable between batches. A join
 * without keys and without a residual decides SEMI, ANTI and MARK from
 * whether the build side is empty alone.
 */
#include "exec/expr_int.h"
#include "exec/op_join_int.h"

#include <string.h>

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
    int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
    if (rc == PA_OK && (rc = ex_chunk_alloc(op, o, (size_t)in->length, (void **)&mark, err)) == PA_OK &&
        (rc = dv_chunk_depend(o, in, err)) == PA_OK) {
        memset(mark, any, (size_t)in->length);
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
    dv_chunk_destroy(o);
    return rc;
}

/* Start chunk in: capacity, buffers, key hashes, zeroed states and cursor. */
static int pairs_start(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, pa_err *err)
{
    ex__join *j = op->state;
    int64_t rows = in->length;
    int64_t chunk_rows = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : rows;
    int64_t cap = chunk_rows;
    if (j->n_keys == 0 && rows * (j->build_rows ? j->build_rows : 1) < cap)
        cap = rows * (j->build_rows ? j->build_rows : 1);   /* a small cross product: one batch */
    pl->capacity = cap > rows ? cap : rows;                 /* >= rows: the per-row result fits */
    int rc = ex__join_reserve_idx(op, pl, err);
    if (rc != PA_OK)
        return rc;
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
    if (per_row(j)) {
        if ((rc = ex__join_reserve(op, (void **)&pl->rstate, &pl->rstate_size, (size_t)rows, err)) != PA_OK)
            return rc;
        memset(pl->rstate, 0, (size_t)rows);   /* cpu device: host-visible memory */
    }
    if (j->type == EX_JOIN_MARK && j->n_keys &&
        (rc = ex__join_reserve(op, (void **)&pl->unknown, &pl->unknown_size, (size_t)rows, err)) != PA_OK)
        return rc;
    if (j->resid && (rc = ex__join_reserve(op, &pl->escratch, &pl->escratch_size, kn_eval_scratch_size(j->resid),
                                           err)) != PA_OK)
        return rc;
    memset(&pl->pin->cur, 0, sizeof pl->pin->cur);
    pl->in = in;
    pl->active = true;
    pl->finishing = false;
    return PA_OK;
}

static bool identity(const int32_t *idx, int64_t n, int64_t rows)
{
    if (n != rows)
        return false;
    for (int64_t i = 0; i < n; i++)
        if (idx[i] != i)
            return false;
    return true;
}

/* Evaluate the residual over the n pairs in pl->pidx / pl->bidx, keep the
 * TRUE ones there (their number to pl->pin->count) and update the row states. */
static int filter_pairs(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, int64_t n, pa_err *err)
{
    ex__join *j = op->state;
    int P = j->n_probe_cols, rc;
    dv_chunk *pc = NULL;
    if ((rc = ex_chunk_new(op, w, j->n_pair_cols, &pc, err)) != PA_OK)
        return rc;
    int ident = -1;   /* the pairs' probe rows are in's rows in order: unknown yet */
    for (int c = 0; c < j->n_pair_cols && rc == PA_OK; c++) {
        if (!j->pair_used[c])
            continue;
        if (c < P) {
            if (ident < 0)
                ident = identity(pl->pidx, n, in->length);
            if (ident)
                pc->columns[c] = in->columns[c];   /* a view: pc goes before in */
            else
                rc = ex__join_take(op, w, pl, pc, &in->columns[c], pl->pidx, n, false, &pc->columns[c], err);
        } else {
            rc = ex__join_take(op, w, pl, pc, &j->build->cols[j->pair_bcol[c]], pl->bidx, n, false, &pc->columns[c],
                               err);
        }
    }
    pa_column res = {.type = kn_program_outputs(j->resid)[0].type, .length = n};
    if (rc == PA_OK)
        rc = ex_chunk_alloc(op, pc, (size_t)n, &res.data, err);
    if (rc == PA_OK && kn_eval_may_null(j->resid, 0, pc->columns, j->n_pair_cols))
        rc = ex_chunk_alloc(op, pc, ((size_t)n + 7) / 8, (void **)&res.validity, err);
    if (rc == PA_OK)
        rc = kn_eval(&w->kn, j->resid, pc->columns, j->n_pair_cols, n, &res, pl->escratch, err);
    if (rc == PA_OK)
        rc = kn_join_pairs_filter(&w->kn, &res, n, pl->pidx, pl->bidx, per_row(j) ? pl->rstate : NULL,
                                  &pl->pin->count, err);
    /* cpu device: the kernels have finished, the count in pinned memory is final. */
    dv_chunk_destroy(pc);
    return rc;
}

/* The next batch of candidate pairs; INNER and LEFT emit the matching ones. */
static int next_batch(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, dv_chunk **out, pa_err *err)
{
    ex__join *j = op->state;
    kn_join_cursor *cur = &pl->pin->cur;
    int64_t rows = in->length;
    int rc;
    if (j->n_keys) {
        pa_column pk[EX__JOIN_MAX_KEYS];
        for (int k = 0; k < j->n_keys; k++)
            pk[k] = in->columns[j->probe_keys[k]];
        rc = kn_join_probe(&w->kn, &j->table, KN_JOIN_INNER, pk, pl->hashes, rows, pl->scratch, pl->scratch_size,
                           cur, pl->capacity, pl->pidx, pl->bidx, NULL, NULL, err);
    } else {
        rc = kn_join_cross(&w->kn, rows, j->build_rows, cur, pl->capacity, pl->pidx, pl->bidx, err);
    }
    if (rc != PA_OK)
        return rc;
    int64_t n = cur->n_out;
    if (n > 0 && j->resid) {
        if ((rc = filter_pairs(op, w, pl, in, n, err)) != PA_OK)
            return rc;
        n = pl->pin->count;
    }
    if (n == 0 || (j->type != EX_JOIN_INNER && j->type != EX_JOIN_LEFT))
        return PA_OK;
    dv_chunk *o = NULL;
    if ((rc = ex_chunk_new(op, w, op->n_cols, &o, err)) == PA_OK &&
        (rc = ex__join_emit(op, w, pl, in, o, pl->pidx, pl->bidx, n, false, err)) == PA_OK) {
        *out = o;
        return PA_OK;
    }
    dv_chunk_destroy(o);
    return rc;
}

/* Every pair of in is done: the rows the per-row states give. */
static int finish(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, dv_chunk **out, pa_err *err)
{
    ex__join *j = op->state;
    int64_t rows = in->length;
    uint8_t *mark = NULL, *mark_valid = NULL;
    dv_chunk *o = NULL;
    int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
    if (rc == PA_OK && j->type == EX_JOIN_MARK) {
        if ((rc = ex_chunk_alloc(op, o, (size_t)rows, (void **)&mark, err)) == PA_OK)
            rc = ex_chunk_alloc(op, o, ((size_t)rows + 7) / 8, (void **)&mark_valid, err);
        if (rc == PA_OK && j->n_keys) {
            pa_column pk[EX__JOIN_MAX_KEYS];
            for (int k = 0; k < j->n_keys; k++)
                pk[k] = in->columns[j->probe_keys[k]];
            rc = kn_join_in_unknown(&w->kn, &j->table, pk, rows, pl->unknown, err);
        }
    }
    if (rc == PA_OK)
        rc = kn_join_finish(&w->kn, (kn_join_kind)j->type, pl->rstate, j->n_keys ? pl->unknown : NULL, rows, pl->pidx,
                            pl->bidx, mark, mark_valid, &pl->pin->count, &pl->pin->n_null, err);
    int64_t n = pl->pin->count;   /* cpu device: final once the kernel returned */
    if (rc == PA_OK && j->type == EX_JOIN_MARK) {
        pa_column *mc = &o->columns[op->n_cols - 1];
        mc->type = op->types[op->n_cols - 1];
        mc->data = mark;
        mc->validity = pl->pin->n_null > 0 ? mark_valid : NULL;
    }
    if (rc == PA_OK && n > 0 &&
        (rc = ex__join_emit(op, w, pl, in, o, pl->pidx, pl->bidx, n, j->type == EX_JOIN_LEFT, err)) == PA_OK) {
        *out = o;
        return PA_OK;
    }
    dv_chunk_destroy(o);
    return rc;
}

int ex__join_execute_pairs(ex_op *op, ex_worker *w, probe_local *pl, dv_chunk *in, dv_chunk **out, ex_state *st,
                           pa_err *err)
{
    ex__join *j = op->state;
    int rc;
    *out = NULL;
    *st = EX_NEED_INPUT;
    if (!pl->active || pl->in != in) {
        if (in->length == 0)
            return PA_OK;
        if (j->n_keys == 0 && !j->resid && j->type != EX_JOIN_INNER && j->type != EX_JOIN_LEFT)
            return decided(op, w, in, out, err);
        if ((rc = pairs_start(op, w, pl, in, err)) != PA_OK)
            goto fail;
    }
    if (!pl->finishing) {
        if ((rc = next_batch(op, w, pl, in, out, err)) != PA_OK)
            goto fail;
        if (!pl->pin->cur.done) {
            *st = EX_HAVE_OUTPUT;
            return PA_OK;
        }
        pl->finishing = true;
        if (!per_row(j)) {
            pl->active = false;
            pl->in = NULL;
            return PA_OK;
        }
        if (*out) {   /* one chunk per call: the per-row result comes next time */
            *st = EX_HAVE_OUTPUT;
            return PA_OK;
        }
    }
    rc = finish(op, w, pl, in, out, err);
fail:
    pl->active = false;
    pl->in = NULL;
    pl->finishing = false;
    return rc;
}

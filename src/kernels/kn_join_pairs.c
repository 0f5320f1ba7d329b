/*
 * kn_join_pairs.c - joins on candidate pairs (see kernels.h "joins on
 * candidate pairs"): enumerating every (probe, build) pair of a join
 * without keys, keeping the pairs whose residual is TRUE while recording
 * per probe row whether some pair was TRUE or NULL, and turning those
 * per-row states into the rows of LEFT, SEMI, ANTI and MARK.
 */
#include "kernels/kn_hash_int.h"

int kn__cpu_join_cross(const kn_ctx *ctx, int64_t rows, int64_t build_rows, kn_join_cursor *cur, int64_t capacity,
                       int32_t *probe_idx, int32_t *build_idx, pa_err *err)
{
    if (capacity < 1 || rows < 0 || rows > INT32_MAX || build_rows < 0 || build_rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "cross join of %lld x %lld rows with capacity %lld", (long long)rows,
                        (long long)build_rows, (long long)capacity);
    int64_t n = 0, i = cur->row, r = cur->chain > 0 ? cur->chain : 0;
    if (build_rows > 0) {
        for (; i < rows && n < capacity; i++, r = 0) {
            int64_t take = build_rows - r < capacity - n ? build_rows - r : capacity - n;
            for (int64_t k = 0; k < take; k++) {
                probe_idx[n + k] = (int32_t)i;
                build_idx[n + k] = (int32_t)(r + k);
            }
            n += take;
            r += take;
            if (r < build_rows)
                break;   /* the capacity ran out within row i */
        }
    } else {
        i = rows;
    }
    cur->n_out = n;
    cur->n_null = 0;
    if (i >= rows) {
        cur->row = rows;
        cur->chain = -1;
        cur->done = 1;
    } else {
        cur->row = i;
        cur->chain = (int32_t)r;
        cur->done = 0;
    }
    return PA_OK;
}

int kn__cpu_join_pairs_filter(const kn_ctx *ctx, const pa_column *pred, int64_t n, int32_t *probe_idx,
                              int32_t *build_idx, uint8_t *row_state, int64_t *count, pa_err *err)
{
    if (pred->type.id != PA_TYPE_BOOLEAN || n < 0)
        return pa_error(err, PA_EINVAL, "join pair filter on a %s column of %lld rows", pa_type_name(pred->type.id),
                        (long long)n);
    const uint8_t *v = pred->data, *valid = pred->validity;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        bool known = !valid || ((valid[i >> 3] >> (i & 7)) & 1);
        bool yes = known && v[i];
        int32_t p = probe_idx[i];
        if (row_state)
            row_state[p] |= (uint8_t)(yes ? KN_JOIN_ROW_TRUE : known ? 0 : KN_JOIN_ROW_NULL);
        probe_idx[k] = p;
        if (build_idx)
            build_idx[k] = build_idx[i];
        k += yes;
    }
    *count = k;
    return PA_OK;
}

int kn__cpu_join_finish(const kn_ctx *ctx, kn_join_kind kind, const uint8_t *row_state, const uint8_t *unknown,
                        int64_t rows, int32_t *probe_idx, int32_t *build_idx, uint8_t *mark, uint8_t *mark_valid,
                        int64_t *count, int64_t *n_null, pa_err *err)
{
    if (rows < 0 || rows > INT32_MAX || (kind == KN_JOIN_LEFT && !build_idx) ||
        (kind == KN_JOIN_MARK && (!mark || !mark_valid)) || kind == KN_JOIN_INNER || (unsigned)kind > KN_JOIN_MARK)
        return pa_error(err, PA_EINVAL, "join finish: kind %d, %lld rows, missing outputs", (int)kind,
                        (long long)rows);
    int64_t n = 0, nulls = 0;
    switch (kind) {
    case KN_JOIN_LEFT:
        for (int64_t i = 0; i < rows; i++) {
            probe_idx[n] = (int32_t)i;
            build_idx[n] = -1;
            n += !(row_state[i] & KN_JOIN_ROW_TRUE);
        }
        nulls = n;
        break;
    case KN_JOIN_SEMI:
    case KN_JOIN_ANTI: {
        uint8_t want = kind == KN_JOIN_SEMI ? KN_JOIN_ROW_TRUE : 0;
        for (int64_t i = 0; i < rows; i++) {
            probe_idx[n] = (int32_t)i;
            n += (row_state[i] & KN_JOIN_ROW_TRUE) == want;
        }
        break;
    }
    default:   /* MARK */
        memset(mark_valid, 0xff, (size_t)(rows + 7) / 8);
        for (int64_t i = 0; i < rows; i++) {
            uint8_t s = row_state[i];
            bool yes = s & KN_JOIN_ROW_TRUE;
            bool null = !yes && ((s & KN_JOIN_ROW_NULL) || (unknown && unknown[i]));
            mark[i] = yes;
            probe_idx[i] = (int32_t)i;
            if (null) {
                mark_valid[i >> 3] &= (uint8_t)~(1u << (i & 7));
                nulls++;
            }
        }
        n = rows;
        break;
    }
    *count = n;
    if (n_null)
        *n_null = nulls;
    return PA_OK;
}

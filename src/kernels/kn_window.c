/*
 * kn_window.c - window functions: the host checks both backends make, and
 * the cpu loops (kn_window_int.h has the per-row rules they share with
 * kn_gpu_window.cu). Bounds are one pass that remembers where the current
 * partition and peer group began, then a backward pass for their ends.
 */
#include "kernels/kn_window_int.h"

#include <string.h>

bool kn_window_takes(int kind)
{
    return kind == KN_WIN_SHIFT || kind == KN_WIN_FIRST_VALUE || kind == KN_WIN_LAST_VALUE ||
           kind == KN_WIN_NTH_VALUE || kind == KN_WIN_MIN || kind == KN_WIN_MAX;
}

bool kn_window_framed(int kind)
{
    return kind >= KN_WIN_FIRST_VALUE && kind <= KN_WIN_MAX;
}

static bool is_number(pa_type t)
{
    return t.id == PA_TYPE_INTEGER || t.id == PA_TYPE_BIGINT || t.id == PA_TYPE_DECIMAL || pa_type_is_float(t.id);
}

int kn_window_type(int kind, pa_type arg, pa_type *out, pa_err *err)
{
    switch (kind) {
    case KN_WIN_ROW_NUMBER:
    case KN_WIN_RANK:
    case KN_WIN_DENSE_RANK:
    case KN_WIN_NTILE:
    case KN_WIN_COUNT_STAR:
    case KN_WIN_COUNT: *out = (pa_type){PA_TYPE_BIGINT, 0, 0}; return PA_OK;
    case KN_WIN_PERCENT_RANK:
    case KN_WIN_CUME_DIST: *out = (pa_type){PA_TYPE_DOUBLE, 0, 0}; return PA_OK;
    case KN_WIN_SUM:
    case KN_WIN_AVG:
        if (!is_number(arg))
            return pa_error(err, PA_EINVAL, "%s of %s is not defined (it needs a number)",
                            kind == KN_WIN_SUM ? "SUM" : "AVG", pa_type_name(arg.id));
        if (kind == KN_WIN_AVG || pa_type_is_float(arg.id))
            *out = (pa_type){PA_TYPE_DOUBLE, 0, 0};
        else if (arg.id == PA_TYPE_DECIMAL)
            *out = (pa_type){PA_TYPE_DECIMAL, 38, arg.scale};
        else
            *out = (pa_type){PA_TYPE_BIGINT, 0, 0};
        return PA_OK;
    case KN_WIN_STRING_AGG:
        if (!pa_type_is_varlen(arg.id))
            return pa_error(err, PA_EINVAL, "string_agg of %s (it joins VARCHAR values)", pa_type_name(arg.id));
        *out = arg;
        return PA_OK;
    default:
        if (kind < 0 || kind > KN_WIN_STRING_AGG)
            return pa_error(err, PA_EINVAL, "window function kind %d", kind);
        *out = arg;
        return PA_OK;
    }
}

size_t kn_window_bounds_scratch(int64_t rows)
{
    return (size_t)(rows > 0 ? rows : 0) * 3 * sizeof(int32_t) + 64;
}

size_t kn_window_tree_bytes(int kind, int64_t rows)
{
    size_t m2 = 2 * (size_t)kn__win_leaves(rows);
    switch (kind) {
    case KN_WIN_COUNT: return m2 * sizeof(int64_t);
    case KN_WIN_MIN:
    case KN_WIN_MAX: return m2 * sizeof(int32_t);
    case KN_WIN_SUM:
    case KN_WIN_AVG: return m2 * sizeof(kn__win_sum);
    case KN_WIN_STRING_AGG: return 3 * (size_t)(rows + 1) * sizeof(int64_t);
    default: return 0;
    }
}

static int rows_ok(int64_t rows, pa_err *err)
{
    if (rows < 0 || rows >= INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "window functions over %lld rows (at most %d in one window)",
                        (long long)rows, INT32_MAX - 1);
    return PA_OK;
}

int kn__window_keys(const pa_column *keys, int n_part, int n_keys, int64_t rows, kn__win_keys *K, pa_err *err)
{
    int rc = rows_ok(rows, err);
    if (rc != PA_OK)
        return rc;
    if (n_part < 0 || n_keys < n_part || n_keys > KN_WINDOW_MAX_KEYS || (n_keys && !keys))
        return pa_error(err, PA_EINVAL, "window bounds: %d partition keys of %d (at most %d)", n_part, n_keys,
                        KN_WINDOW_MAX_KEYS);
    memset(K, 0, sizeof *K);
    K->n_part = n_part;
    K->n_keys = n_keys;
    for (int k = 0; k < n_keys; k++) {
        kn__kclass c = kn__key_class(keys[k].type);
        if (c == KN__KC_BAD)
            return pa_error(err, PA_EINVAL, "window bounds: key %d has type %s, which cannot be compared", k,
                            pa_type_name(keys[k].type.id));
        if (keys[k].length < rows)
            return pa_error(err, PA_EINVAL, "window bounds: key %d has %lld rows of %lld", k,
                            (long long)keys[k].length, (long long)rows);
        K->col[k] = keys[k];
        K->kc[k] = c;
        K->cmp[k] = kn__kc_is_int(c) ? KN__KC_I64 : c == KN__KC_IV ? KN__KC_I128 : c;
    }
    return PA_OK;
}

int kn__window_frames_check(const kn_window_frame *f, int64_t rows, const pa_column *order_key, pa_err *err)
{
    int rc = rows_ok(rows, err);
    if (rc != PA_OK)
        return rc;
    if (!f || f->start < KN_FB_UNBOUNDED_PRECEDING || f->start > KN_FB_UNBOUNDED_FOLLOWING ||
        f->end < KN_FB_UNBOUNDED_PRECEDING || f->end > KN_FB_UNBOUNDED_FOLLOWING || f->start_n < 0 || f->end_n < 0)
        return pa_error(err, PA_EINVAL, "window frames: bad frame");
    bool offset = f->start == KN_FB_PRECEDING || f->start == KN_FB_FOLLOWING || f->end == KN_FB_PRECEDING ||
                  f->end == KN_FB_FOLLOWING;
    if (!f->rows && offset) {
        if (!order_key)
            return pa_error(err, PA_EINVAL, "window frames: RANGE with an offset needs the ORDER BY key");
        kn__kclass c = kn__key_class(order_key->type);
        if (order_key->type.id == PA_TYPE_BOOLEAN || order_key->type.id == PA_TYPE_DATE ||
            pa_type_is_time64(order_key->type.id) ||
            !(kn__kc_is_int(c) || c == KN__KC_I128 || c == KN__KC_F64))
            return pa_error(err, PA_EUNSUPPORTED, "RANGE with an offset over an ORDER BY key of type %s (numbers only)",
                            pa_type_name(order_key->type.id));
        if (order_key->length < rows)
            return pa_error(err, PA_EINVAL, "window frames: the ORDER BY key has %lld rows of %lld",
                            (long long)order_key->length, (long long)rows);
        if (c == KN__KC_F64 && (!(f->start_d >= 0) || !(f->end_d >= 0)))
            return pa_error(err, PA_EINVAL, "window frames: negative or NaN offset");
    }
    return PA_OK;
}

static bool needs_arg(int kind)
{
    return kind != KN_WIN_ROW_NUMBER && kind != KN_WIN_RANK && kind != KN_WIN_DENSE_RANK && kind != KN_WIN_NTILE &&
           kind != KN_WIN_PERCENT_RANK && kind != KN_WIN_CUME_DIST && kind != KN_WIN_COUNT_STAR;
}

int kn__window_tree_check(const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds, int64_t rows,
                          size_t tree_bytes, pa_err *err)
{
    int rc = rows_ok(rows, err);
    if (rc != PA_OK)
        return rc;
    size_t need = kn_window_tree_bytes(fn->kind, rows);
    if (!need)
        return pa_error(err, PA_EINVAL, "window tree: function kind %d has none", fn->kind);
    if (tree_bytes < need)
        return pa_error(err, PA_EINVAL, "window tree: %zu bytes for %zu", tree_bytes, need);
    if (arg && arg->type.id == PA_TYPE_INTERVAL)
        return pa_error(err, PA_EUNSUPPORTED, "window tree: INTERVAL arguments are not supported");
    if (!arg || arg->length < rows || kn__key_class(arg->type) == KN__KC_BAD)
        return pa_error(err, PA_EINVAL, "window tree: bad argument column");
    if (fn->kind == KN_WIN_STRING_AGG && (!bounds || fn->sep_len < 0 || fn->sep_len > KN_WINDOW_SEP_MAX))
        return pa_error(err, PA_EINVAL, "window tree: string_agg needs the bounds and a separator of at most %d bytes",
                        KN_WINDOW_SEP_MAX);
    pa_type t;
    return kn_window_type(fn->kind, arg->type, &t, err);
}

int kn__window_eval_check(const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds, const int32_t *frames,
                          const void *tree,
                          int64_t rows, int64_t first, int64_t n, const pa_column *out, const int32_t *idx,
                          pa_err *err)
{
    int rc = rows_ok(rows, err);
    if (rc != PA_OK)
        return rc;
    if (first < 0 || n < 0 || first + n > rows)
        return pa_error(err, PA_EINVAL, "window eval: rows %lld+%lld of %lld", (long long)first, (long long)n,
                        (long long)rows);
    int k = fn->kind;
    if (k < 0 || k > KN_WIN_STRING_AGG)
        return pa_error(err, PA_EINVAL, "window eval: function kind %d", k);
    if ((k == KN_WIN_NTILE || k == KN_WIN_NTH_VALUE) && fn->n < 1)
        return pa_error(err, PA_EINVAL, "argument of %s must be greater than zero",
                        k == KN_WIN_NTILE ? "ntile" : "nth_value");
    if (needs_arg(k) && (!arg || arg->length < rows))
        return pa_error(err, PA_EINVAL, "window eval: the function needs its argument column");
    if (kn_window_framed(k) && !frames)
        return pa_error(err, PA_EINVAL, "window eval: the function needs the frames");
    if (kn_window_tree_bytes(k, rows) && !tree)
        return pa_error(err, PA_EINVAL, "window eval: the function needs its tree");
    if (kn_window_takes(k))
        return idx || n == 0 ? PA_OK : pa_error(err, PA_EINVAL, "window eval: positions output missing");
    pa_type t;
    if ((rc = kn_window_type(k, arg ? arg->type : (pa_type){PA_TYPE_BIGINT, 0, 0}, &t, err)) != PA_OK)
        return rc;
    if (!out || out->type.id != t.id || (t.id == PA_TYPE_DECIMAL && out->type.precision != t.precision))
        return pa_error(err, PA_EINVAL, "window eval: the output is not of the function's type %s",
                        pa_type_name(t.id));
    if ((k == KN_WIN_SUM || k == KN_WIN_AVG || k == KN_WIN_STRING_AGG) && !out->validity && n > 0)
        return pa_error(err, PA_EINVAL, "window eval: SUM, AVG and STRING_AGG need an output validity bitmap");
    if (k == KN_WIN_STRING_AGG && (!out->offsets || (!out->data && n > 0) || fn->sep_len < 0 ||
                                   fn->sep_len > KN_WINDOW_SEP_MAX || !bounds))
        return pa_error(err, PA_EINVAL, "window eval: string_agg needs the bounds, offsets, bytes and a separator");
    return PA_OK;
}

int kn__window_text_bytes_check(const kn_window_fn *fn, const int32_t *bounds, const void *tree, int64_t rows,
                                int64_t first, int64_t n, const int64_t *bytes, pa_err *err)
{
    int rc = rows_ok(rows, err);
    if (rc != PA_OK)
        return rc;
    if (fn->kind != KN_WIN_STRING_AGG || !bounds || !tree || !bytes || first < 0 || n < 0 || first + n > rows)
        return pa_error(err, PA_EINVAL, "window text bytes: string_agg's rows %lld+%lld of %lld", (long long)first,
                        (long long)n, (long long)rows);
    return PA_OK;
}

/* ------------------------------------------------------------ cpu loops */

int kn__cpu_window_bounds(const kn_ctx *ctx, const pa_column *keys, int n_part, int n_keys, int64_t rows,
                          int32_t *bounds, void *scratch, size_t scratch_bytes, pa_err *err)
{
    (void)ctx, (void)scratch, (void)scratch_bytes;
    kn__win_keys k_, *K = &k_;
    int rc = kn__window_keys(keys, n_part, n_keys, rows, K, err);
    if (rc != PA_OK)
        return rc;
    int32_t *ps = bounds, *pe = bounds + rows, *qs = bounds + 2 * rows, *qe = bounds + 3 * rows,
            *g = bounds + 4 * rows;
    int32_t p0 = 0, q0 = 0, groups = -1;
    for (int64_t i = 0; i < rows; i++) {
        if (kn__win_new_part(K, i))
            p0 = (int32_t)i;
        if (kn__win_new_peer(K, i)) {
            q0 = (int32_t)i;
            groups++;
        }
        ps[i] = p0;
        qs[i] = q0;
        g[i] = groups;
    }
    int32_t p1 = (int32_t)rows, q1 = (int32_t)rows;
    for (int64_t i = rows - 1; i >= 0; i--) {
        pe[i] = p1;
        qe[i] = q1;
        if (ps[i] == i)
            p1 = (int32_t)i;
        if (qs[i] == i)
            q1 = (int32_t)i;
    }
    return PA_OK;
}

int kn__cpu_window_frames(const kn_ctx *ctx, const kn_window_frame *f, const int32_t *bounds, int64_t rows,
                          const pa_column *order_key, int32_t *frames, pa_err *err)
{
    (void)ctx;
    int rc = kn__window_frames_check(f, rows, order_key, err);
    if (rc != PA_OK)
        return rc;
    for (int64_t i = 0; i < rows; i++)
        kn__win_frame_row(f, bounds, rows, order_key, i, &frames[i], &frames[rows + i]);
    return PA_OK;
}

int kn__cpu_window_tree(const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds,
                        int64_t rows, void *tree, size_t tree_bytes, pa_err *err)
{
    (void)ctx;
    int rc = kn__window_tree_check(fn, arg, bounds, rows, tree_bytes, err);
    if (rc != PA_OK)
        return rc;
    if (fn->kind == KN_WIN_STRING_AGG) {
        int64_t *T = tree;
        for (int w = 0; w < 3; w++) {
            int64_t *P = T + (int64_t)w * (rows + 1);
            P[0] = 0;
            for (int64_t i = 0; i < rows; i++)
                P[i + 1] = P[i] + kn__win_sa_term(w, arg, bounds, T, rows, i);
        }
        return PA_OK;
    }
    int64_t m = kn__win_leaves(rows);
    for (int64_t i = 0; i < m; i++)
        kn__win_leaf(fn->kind, arg, rows, tree, m, i);
    for (int64_t j = m - 1; j >= 1; j--)
        kn__win_node(fn->kind, arg, tree, j);
    return PA_OK;
}

static long double pow10l_(int k)
{
    long double p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

int kn__cpu_window_text_bytes(const kn_ctx *ctx, const kn_window_fn *fn, const int32_t *bounds, const void *tree,
                              int64_t rows, int64_t first, int64_t n, int64_t *bytes, pa_err *err)
{
    (void)ctx;
    int rc = kn__window_text_bytes_check(fn, bounds, tree, rows, first, n, bytes, err);
    if (rc == PA_OK)
        *bytes = kn__win_sa_offset(fn, bounds, tree, rows, first, n);
    return rc;
}

int kn__cpu_window_eval(const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds,
                        const int32_t *frames, const void *tree, int64_t rows, int64_t first, int64_t n,
                        pa_column *out, int32_t *idx, pa_err *err)
{
    (void)ctx;
    int rc = kn__window_eval_check(fn, arg, bounds, frames, tree, rows, first, n, out, idx, err);
    if (rc != PA_OK)
        return rc;
    int k = fn->kind;
    if (k == KN_WIN_STRING_AGG) {
        out->length = n;
        if (n == 0) {
            out->offsets[0] = 0;
            return PA_OK;
        }
        memset(out->validity, 0, (size_t)(n + 7) / 8);
        for (int64_t r = 0; r <= n; r++)
            out->offsets[r] = (int32_t)kn__win_sa_offset(fn, bounds, tree, rows, first, r);
        for (int64_t r = 0; r < n; r++)
            if (kn__win_sa_valid(bounds, tree, rows, first + r))
                out->validity[r >> 3] |= (uint8_t)(1u << (r & 7));
        int64_t s0 = kn__win_sa_start(bounds, rows, first), s1 = kn__win_sa_start(bounds, rows, first + n);
        for (int64_t i = s0; i < s1; i++)
            kn__win_sa_piece(fn, arg, bounds, tree, rows, s0, i, out->data);
        return PA_OK;
    }
    if (kn_window_takes(k)) {
        for (int64_t r = 0; r < n; r++)
            idx[r] = kn__win_pos_row(fn, arg, bounds, frames, tree, rows, first + r);
        return PA_OK;
    }
    if (out)
        out->length = n;
    if (out && out->validity && k != KN_WIN_SUM && k != KN_WIN_AVG && n > 0) {
        memset(out->validity, 0xff, (size_t)(n + 7) / 8);
        if (n & 7)
            out->validity[n >> 3] = (uint8_t)((1u << (n & 7)) - 1);
    }
    if (k == KN_WIN_PERCENT_RANK || k == KN_WIN_CUME_DIST) {
        for (int64_t r = 0; r < n; r++)
            ((double *)out->data)[r] = kn__win_dbl_row(fn, bounds, rows, first + r);
        return PA_OK;
    }
    if (k != KN_WIN_SUM && k != KN_WIN_AVG) {
        for (int64_t r = 0; r < n; r++)
            ((int64_t *)out->data)[r] = kn__win_int_row(fn, bounds, frames, tree, rows, first + r);
        return PA_OK;
    }
    bool dbl = pa_type_is_float(arg->type.id);
    int64_t m = kn__win_leaves(rows);
    long double scale = arg->type.id == PA_TYPE_DECIMAL ? pow10l_(arg->type.scale) : 1;
    const __int128 lim = (__int128)100000000000000000LL * (__int128)100000000000000000LL * 10000;
    memset(out->validity, 0, (size_t)(n + 7) / 8);
    for (int64_t r = 0; r < n; r++) {
        int64_t i = first + r;
        kn__win_sum s = kn__win_q_sum((const kn__win_sum *)tree, dbl, m, frames[i], frames[rows + i]);
        if (s.n > 0)
            out->validity[r >> 3] |= (uint8_t)(1u << (r & 7));
        if (dbl) {
            ((double *)out->data)[r] = s.n == 0 ? 0 : k == KN_WIN_SUM ? s.s.d : s.s.d / (double)s.n;
            continue;
        }
        if (s.s.i == KN__WIN_OVF)
            return pa_error(err, PA_EOVERFLOW, "%s overflows: the sum of its values passes 128 bits",
                            k == KN_WIN_SUM ? "SUM" : "AVG");
        if (k == KN_WIN_AVG)
            ((double *)out->data)[r] = s.n == 0 ? 0 : (double)((long double)s.s.i / ((long double)s.n * scale));
        else if (out->type.id == PA_TYPE_BIGINT) {
            if (s.s.i > INT64_MAX || s.s.i < INT64_MIN)
                return pa_error(err, PA_EOVERFLOW, "SUM overflows BIGINT");
            ((int64_t *)out->data)[r] = (int64_t)s.s.i;
        } else {
            if (s.s.i >= lim || s.s.i <= -lim)
                return pa_error(err, PA_EOVERFLOW, "SUM overflows DECIMAL(38)");
            ((__int128 *)out->data)[r] = s.s.i;
        }
    }
    return PA_OK;
}

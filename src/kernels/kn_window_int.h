/*
 * kn_window_int.h - what the window-function kernels' cpu loops
 * (kn_window.c) and CUDA sources (kn_gpu_window.cu) share: the per-row
 * rules (key equality of neighbours, frame bounds, each function's value)
 * and the segment tree, as inline host/device functions, so both backends
 * compute every row the same way.
 *
 * Design notes
 * - Positions are int32: the caller keeps a window's rows under INT32_MAX.
 * - The segment tree is the classic bottom-up one over M leaves, M the
 *   smallest power of two >= rows (at least 1): node k has children 2k and
 *   2k+1, leaf i is node M + i, padding leaves hold the identity. A frame
 *   [l, r) is combined from O(log M) nodes. Node kinds: COUNT an int64
 *   count; SUM/AVG a 128-bit integer sum (or a double) and a count of
 *   values; MIN/MAX the position of the best value (-1: none), compared by
 *   the argument's type (NaN above every number, strings bytewise then by
 *   length, as the sort orders them).
 * - A 128-bit sum that overflows becomes KN__WIN_OVF and stays so; the
 *   value then fails with PA_EOVERFLOW as the group-by SUM does.
 */
#ifndef PISTA_KN_WINDOW_INT_H
#define PISTA_KN_WINDOW_INT_H

#include "kernels/kn_hash_int.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KN__WIN_OVF ((__int128)((unsigned __int128)1 << 127))

typedef struct kn__win_sum {
    union {
        __int128 i;
        double d;
    } s;
    int64_t n;
    int64_t pad_;
} kn__win_sum;

/* The keys of a bounds call, as one struct the GPU reads from device memory. */
typedef struct kn__win_keys {
    pa_column col[KN_WINDOW_MAX_KEYS];
    int32_t cmp[KN_WINDOW_MAX_KEYS];   /* kn__kclass of the comparison (I64 for the small ones) */
    int32_t kc[KN_WINDOW_MAX_KEYS];    /* kn__kclass of the column */
    int n_part, n_keys;
} kn__win_keys;

static inline PA_HD bool kn__win_valid(const pa_column *c, int64_t i)
{
    return !c->validity || ((c->validity[i >> 3] >> (i & 7)) & 1);
}

static inline PA_HD int64_t kn__win_leaves(int64_t rows)
{
    int64_t m = 1;
    while (m < rows)
        m <<= 1;
    return m;
}

/* Rows a and b equal on keys [k0, k1). */
static inline PA_HD bool kn__win_eq(const kn__win_keys *K, int k0, int k1, int64_t a, int64_t b)
{
    for (int k = k0; k < k1; k++) {
        const pa_column *c = &K->col[k];
        bool va = kn__win_valid(c, a), vb = kn__win_valid(c, b);
        if (va != vb)
            return false;
        if (!va)
            continue;
        kn__keypair kp = {c, c, (kn__kclass)K->kc[k], (kn__kclass)K->kc[k], K->cmp[k]};
        if (!kn__key_eq1(&kp, a, b))
            return false;
    }
    return true;
}

/* Row i starts a partition (0) or a peer group (1). */
static inline PA_HD int kn__win_new_part(const kn__win_keys *K, int64_t i)
{
    return i == 0 || !kn__win_eq(K, 0, K->n_part, i, i - 1);
}
static inline PA_HD int kn__win_new_peer(const kn__win_keys *K, int64_t i)
{
    return i == 0 || !kn__win_eq(K, 0, K->n_keys, i, i - 1);
}

/* ------------------------------------------------------------- frames */

/* The order key at j as a number: 128-bit for integer-like keys and DECIMALs. */
static inline PA_HD __int128 kn__win_key_i(const pa_column *k, int64_t j)
{
    return kn__ld_i128(k, kn__key_class(k->type), j);
}

/* First j in [lo, hi) where the key is past t (strict) or reaches it, in
 * the key's order (ascending: >= t / > t; descending: <= t / < t). */
static inline PA_HD int64_t kn__win_search(const pa_column *k, bool desc, bool strict, bool dbl, __int128 ti, double td,
                                           int64_t lo, int64_t hi)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c;   /* key(mid) compared with t */
        if (dbl) {
            double v = ((const double *)k->data)[mid];
            c = isnan(v) ? (isnan(td) ? 0 : 1) : isnan(td) ? -1 : v < td ? -1 : v > td ? 1 : 0;
        } else {
            __int128 v = kn__win_key_i(k, mid);
            c = v < ti ? -1 : v > ti ? 1 : 0;
        }
        if (desc)
            c = -c;
        bool before = strict ? c <= 0 : c < 0;   /* mid is before the answer */
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One RANGE offset bound of row i: the frame start (end = false) or end.
 * preceding: the offset is PRECEDING. */
static inline PA_HD int64_t kn__win_range_bound(const kn_window_frame *f, const int32_t *B, int64_t rows,
                                                const pa_column *k, int64_t i, bool end, bool preceding)
{
    const int32_t *ps = B, *pe = B + rows, *qs = B + 2 * rows, *qe = B + 3 * rows;
    if (!kn__win_valid(k, i))
        return end ? qe[i] : qs[i];
    int64_t lo = ps[i], hi = pe[i];
    if (!kn__win_valid(k, lo))
        lo = qe[lo];
    if (!kn__win_valid(k, hi - 1))
        hi = qs[hi - 1];
    bool desc = f->descending != 0, dbl = pa_type_is_float(k->type.id);
    /* Toward smaller keys: PRECEDING ascending, FOLLOWING descending. */
    bool down = preceding != desc;
    __int128 ti = 0;
    double td = 0;
    if (dbl) {
        double v = ((const double *)k->data)[i], d = end ? f->end_d : f->start_d;
        td = down ? v - d : v + d;
    } else {
        __int128 v = kn__win_key_i(k, i), d = end ? f->end_n : f->start_n;
        ti = down ? v - d : v + d;
    }
    return kn__win_search(k, desc, end, dbl, ti, td, lo, hi);
}

/* Row i's frame [*fs, *fe), clamped to its partition. */
static inline PA_HD void kn__win_frame_row(const kn_window_frame *f, const int32_t *B, int64_t rows,
                                           const pa_column *k, int64_t i, int32_t *fs, int32_t *fe)
{
    int64_t ps = B[i], pe = B[rows + i], qs = B[2 * rows + i], qe = B[3 * rows + i];
    int64_t sn = f->start_n < rows ? f->start_n : rows, en = f->end_n < rows ? f->end_n : rows;
    int64_t s, e;
    switch (f->start) {
    case KN_FB_UNBOUNDED_PRECEDING: s = ps; break;
    case KN_FB_PRECEDING: s = f->rows ? i - sn : kn__win_range_bound(f, B, rows, k, i, false, true); break;
    case KN_FB_CURRENT_ROW: s = f->rows ? i : qs; break;
    case KN_FB_FOLLOWING: s = f->rows ? i + sn : kn__win_range_bound(f, B, rows, k, i, false, false); break;
    default: s = pe; break;
    }
    switch (f->end) {
    case KN_FB_UNBOUNDED_PRECEDING: e = ps; break;
    case KN_FB_PRECEDING: e = f->rows ? i - en + 1 : kn__win_range_bound(f, B, rows, k, i, true, true); break;
    case KN_FB_CURRENT_ROW: e = f->rows ? i + 1 : qe; break;
    case KN_FB_FOLLOWING: e = f->rows ? i + en + 1 : kn__win_range_bound(f, B, rows, k, i, true, false); break;
    default: e = pe; break;
    }
    s = s < ps ? ps : s > pe ? pe : s;
    e = e < ps ? ps : e > pe ? pe : e;
    *fs = (int32_t)s;
    *fe = (int32_t)(e < s ? s : e);
}

/* --------------------------------------------------------- the tree */

/* Value a compared with value b of column c (both valid). */
static inline PA_HD int kn__win_cmp(const pa_column *c, int64_t a, int64_t b)
{
    kn__kclass k = kn__key_class(c->type);
    switch (k) {
    case KN__KC_F64: {
        double x = ((const double *)c->data)[a], y = ((const double *)c->data)[b];
        if (isnan(x) || isnan(y))
            return isnan(x) ? (isnan(y) ? 0 : 1) : -1;
        return x < y ? -1 : x > y ? 1 : 0;
    }
    case KN__KC_I128:
    case KN__KC_IV: {
        __int128 x = kn__ld_i128(c, k, a), y = kn__ld_i128(c, k, b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    case KN__KC_STR: {
        const int32_t *o = c->offsets;
        int32_t la = o[a + 1] - o[a], lb = o[b + 1] - o[b], n = la < lb ? la : lb;
        const uint8_t *x = (const uint8_t *)c->data + o[a], *y = (const uint8_t *)c->data + o[b];
        for (int32_t j = 0; j < n; j++)
            if (x[j] != y[j])
                return x[j] < y[j] ? -1 : 1;
        return la < lb ? -1 : la > lb ? 1 : 0;
    }
    default: {
        int64_t x = kn__ld_int(c, k, a), y = kn__ld_int(c, k, b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    }
}

static inline PA_HD int32_t kn__win_best(const pa_column *c, bool max, int32_t a, int32_t b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    int r = kn__win_cmp(c, a, b);
    return (max ? r >= 0 : r <= 0) ? a : b;
}

static inline PA_HD __int128 kn__win_add128(__int128 a, __int128 b)
{
    if (a == KN__WIN_OVF || b == KN__WIN_OVF)
        return KN__WIN_OVF;
    __int128 r = (__int128)((unsigned __int128)a + (unsigned __int128)b);
    if ((a < 0) == (b < 0) && (r < 0) != (a < 0))
        return KN__WIN_OVF;
    return r;
}

static inline PA_HD kn__win_sum kn__win_sum_add(kn__win_sum a, kn__win_sum b, bool dbl)
{
    kn__win_sum r;
    r.pad_ = 0;
    r.n = a.n + b.n;
    if (dbl) {
        r.s.i = 0;
        r.s.d = a.s.d + b.s.d;
    } else
        r.s.i = kn__win_add128(a.s.i, b.s.i);
    return r;
}

/* Leaf i of fn's tree (i >= rows: the identity), written at node m + i. */
static inline PA_HD void kn__win_leaf(int kind, const pa_column *arg, int64_t rows, void *tree, int64_t m, int64_t i)
{
    bool v = i < rows && kn__win_valid(arg, i);
    switch (kind) {
    case KN_WIN_COUNT: ((int64_t *)tree)[m + i] = v; return;
    case KN_WIN_MIN:
    case KN_WIN_MAX: ((int32_t *)tree)[m + i] = v ? (int32_t)i : -1; return;
    default: {
        kn__win_sum s;
        s.s.i = 0;
        s.n = v;
        s.pad_ = 0;
        if (v) {
            kn__kclass k = kn__key_class(arg->type);
            if (k == KN__KC_F64)
                s.s.d = ((const double *)arg->data)[i];
            else
                s.s.i = kn__ld_i128(arg, k, i);
        }
        ((kn__win_sum *)tree)[m + i] = s;
        return;
    }
    }
}

/* Host checks shared by both backends (kn_window.c). */
int kn__window_keys(const pa_column *keys, int n_part, int n_keys, int64_t rows, kn__win_keys *K, pa_err *err);
int kn__window_frames_check(const kn_window_frame *f, int64_t rows, const pa_column *order_key, pa_err *err);
int kn__window_tree_check(const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds, int64_t rows,
                          size_t tree_bytes, pa_err *err);
int kn__window_eval_check(const kn_window_fn *fn, const pa_column *arg, const int32_t *bounds, const int32_t *frames,
                          const void *tree, int64_t rows, int64_t first, int64_t n, const pa_column *out,
                          const int32_t *idx, pa_err *err);
int kn__window_text_bytes_check(const kn_window_fn *fn, const int32_t *bounds, const void *tree, int64_t rows,
                                int64_t first, int64_t n, const int64_t *bytes, pa_err *err);

/* Inner node j from its children. */
static inline PA_HD void kn__win_node(int kind, const pa_column *arg, void *tree, int64_t j)
{
    switch (kind) {
    case KN_WIN_COUNT: {
        int64_t *t = (int64_t *)tree;
        t[j] = t[2 * j] + t[2 * j + 1];
        return;
    }
    case KN_WIN_MIN:
    case KN_WIN_MAX: {
        int32_t *t = (int32_t *)tree;
        t[j] = kn__win_best(arg, kind == KN_WIN_MAX, t[2 * j], t[2 * j + 1]);
        return;
    }
    default: {
        kn__win_sum *t = (kn__win_sum *)tree;
        t[j] = kn__win_sum_add(t[2 * j], t[2 * j + 1], pa_type_is_float(arg->type.id));
        return;
    }
    }
}

/* The combination over positions [l, r) of a tree of m leaves. */
static inline PA_HD int64_t kn__win_q_count(const int64_t *t, int64_t m, int64_t l, int64_t r)
{
    int64_t s = 0;
    for (l += m, r += m; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
            s += t[l++];
        if (r & 1)
            s += t[--r];
    }
    return s;
}

static inline PA_HD int32_t kn__win_q_best(const int32_t *t, const pa_column *arg, bool max, int64_t m, int64_t l,
                                           int64_t r)
{
    int32_t b = -1;
    for (l += m, r += m; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
            b = kn__win_best(arg, max, b, t[l++]);
        if (r & 1)
            b = kn__win_best(arg, max, b, t[--r]);
    }
    return b;
}

static inline PA_HD kn__win_sum kn__win_q_sum(const kn__win_sum *t, bool dbl, int64_t m, int64_t l, int64_t r)
{
    kn__win_sum s;
    s.s.i = 0;   /* also 0.0 */
    s.n = 0;
    s.pad_ = 0;
    for (l += m, r += m; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
            s = kn__win_sum_add(s, t[l++], dbl);
        if (r & 1)
            s = kn__win_sum_add(s, t[--r], dbl);
    }
    return s;
}

/* ------------------------------------------------------- row values */

/* The integer value of the rank-like functions, COUNT(*) and COUNT at row i. */
static inline PA_HD int64_t kn__win_int_row(const kn_window_fn *fn, const int32_t *B, const int32_t *F,
                                            const void *tree, int64_t rows, int64_t i)
{
    int64_t ps = B[i], pe = B[rows + i], qs = B[2 * rows + i];
    switch (fn->kind) {
    case KN_WIN_ROW_NUMBER: return i - ps + 1;
    case KN_WIN_RANK: return qs - ps + 1;
    case KN_WIN_DENSE_RANK: return (int64_t)B[4 * rows + i] - B[4 * rows + ps] + 1;
    case KN_WIN_NTILE: {
        int64_t size = pe - ps, r = i - ps, q = size / fn->n, rem = size % fn->n;
        if (r < rem * (q + 1))
            return r / (q + 1) + 1;
        return rem + (r - rem * (q + 1)) / q + 1;
    }
    case KN_WIN_COUNT_STAR: return F[rows + i] - F[i];
    default: return kn__win_q_count((const int64_t *)tree, kn__win_leaves(rows), F[i], F[rows + i]);
    }
}

static inline PA_HD double kn__win_dbl_row(const kn_window_fn *fn, const int32_t *B, int64_t rows, int64_t i)
{
    int64_t ps = B[i], pe = B[rows + i], qs = B[2 * rows + i], qe = B[3 * rows + i];
    if (fn->kind == KN_WIN_PERCENT_RANK)
        return pe - ps > 1 ? (double)(qs - ps) / (double)(pe - ps - 1) : 0.0;
    return (double)(qe - ps) / (double)(pe - ps);   /* CUME_DIST */
}

/* The position whose argument value a taking function gives at row i (-1: NULL). */
static inline PA_HD int32_t kn__win_pos_row(const kn_window_fn *fn, const pa_column *arg, const int32_t *B,
                                            const int32_t *F, const void *tree, int64_t rows, int64_t i)
{
    switch (fn->kind) {
    case KN_WIN_SHIFT: {
        int64_t ps = B[i], pe = B[rows + i], n = fn->n;
        if (n > rows || n < -rows)
            return -1;
        int64_t j = i - n;
        return j >= ps && j < pe ? (int32_t)j : -1;
    }
    case KN_WIN_FIRST_VALUE: return F[i] < F[rows + i] ? F[i] : -1;
    case KN_WIN_LAST_VALUE: return F[i] < F[rows + i] ? F[rows + i] - 1 : -1;
    case KN_WIN_NTH_VALUE: return fn->n <= (int64_t)F[rows + i] - F[i] ? (int32_t)(F[i] + fn->n - 1) : -1;
    default:
        return kn__win_q_best((const int32_t *)tree, arg, fn->kind == KN_WIN_MAX, kn__win_leaves(rows), F[i],
                              F[rows + i]);
    }
}

/* ------------------------------------------------------------ STRING_AGG
 * The prefix sums (tree): T[0 .. rows] the bytes of the non-NULL values
 * before row i, T[rows + 1 ..] their count, T[2 (rows + 1) ..] the
 * partitions before row i holding one. Every place then follows in O(1):
 * the partitions before partition start g hold kn__win_sa_at(g) bytes
 * (values, and a separator between two values of one partition), so a
 * chunk's strings and every value's place in them are found by one thread
 * each, without a scan per chunk. */
static inline PA_HD int64_t kn__win_sa_at(const int64_t *T, int64_t rows, int64_t sep, int64_t g)
{
    return T[g] + sep * (T[rows + 1 + g] - T[2 * (rows + 1) + g]);
}

/* The first partition start at or after row x (rows past the end). */
static inline PA_HD int64_t kn__win_sa_start(const int32_t *B, int64_t rows, int64_t x)
{
    return x >= rows ? rows : B[x] == x ? x : B[rows + x];
}

/* Row i's term of prefix sum `which` (0 bytes, 1 values, 2 partitions). */
static inline PA_HD int64_t kn__win_sa_term(int which, const pa_column *arg, const int32_t *B, const int64_t *T,
                                           int64_t rows, int64_t i)
{
    if (which == 2) {   /* reads the count sums: run after them */
        const int64_t *V = T + rows + 1;
        return B[i] == i && V[B[rows + i]] - V[i] > 0;
    }
    if (!kn__win_valid(arg, i))
        return 0;
    return which == 1 ? 1 : (int64_t)(arg->offsets[i + 1] - arg->offsets[i]);
}

/* Output row r (row first + r of the window) of a chunk of rows [first,
 * first + n): its offset in the chunk's text, and whether it is a value. */
static inline PA_HD int64_t kn__win_sa_offset(const kn_window_fn *fn, const int32_t *B, const int64_t *T,
                                             int64_t rows, int64_t first, int64_t r)
{
    int64_t base = kn__win_sa_at(T, rows, fn->sep_len, kn__win_sa_start(B, rows, first));
    return kn__win_sa_at(T, rows, fn->sep_len, kn__win_sa_start(B, rows, first + r)) - base;
}
static inline PA_HD bool kn__win_sa_valid(const int32_t *B, const int64_t *T, int64_t rows, int64_t g)
{
    const int64_t *V = T + rows + 1;
    return B[g] == g && V[B[rows + g]] - V[g] > 0;
}

/* Row i's value (when not NULL) into the chunk's text at out (its first
 * partition start is at s0): after a separator unless it is its
 * partition's first value. */
static inline PA_HD void kn__win_sa_piece(const kn_window_fn *fn, const pa_column *arg, const int32_t *B,
                                         const int64_t *T, int64_t rows, int64_t s0, int64_t i, char *out)
{
    if (!kn__win_valid(arg, i))
        return;
    int64_t ps = B[i], sep = fn->sep_len, k = T[rows + 1 + i] - T[rows + 1 + ps];
    int64_t at = kn__win_sa_at(T, rows, sep, ps) - kn__win_sa_at(T, rows, sep, s0) + (T[i] - T[ps]) +
                 (k > 0 ? sep * (k - 1) : 0);
    char *d = out + at;
    if (k > 0)
        for (int64_t j = 0; j < sep; j++)
            *d++ = fn->sep[j];
    const char *v = (const char *)arg->data + arg->offsets[i];
    for (int64_t j = 0, m = (int64_t)(arg->offsets[i + 1] - arg->offsets[i]); j < m; j++)
        d[j] = v[j];
}

#ifdef __cplusplus
}
#endif

#endif /* PISTA_KN_WINDOW_INT_H */

/*
 * kn_gpu_rows.cu - CUDA kernels that move rows: selection from a BOOLEAN
 * column, gather by selection or range, take by index (-1 = NULL), append
 * and concatenation of chunks, string byte counts, and validity bits moved
 * to bit 0. See kn_gpu.h for how entries, scans and errors work.
 *
 * - Validity is written one output byte per thread: the thread assembles
 *   the byte's bits from the source and keeps the bits outside the range,
 *   so no two threads write one byte and no atomics are needed.
 * - Strings: lengths are scanned into the output offsets (starting from
 *   the offset already at the output position), then one thread per row
 *   copies its bytes.
 */
#include "kernels/kn_gpu.h"

using namespace kn_gpu;

namespace {

/* ------------------------------------------------------------- validity */

/* Output bits [out_at, out_at + n) of out = validity of the source rows
 * src(k), k = 0..n-1; bits outside the range are kept. S: functor giving
 * (validity bit of row k). One thread per output byte. */
template <class S>
__global__ void bits_k(S src, int64_t out_at, int64_t n, uint8_t *out)
{
    int64_t first = out_at >> 3, last = (out_at + n - 1) >> 3;
    KN_GPU_FOR(j, last - first + 1)
    {
        int64_t byte = first + j;
        unsigned v = out[byte];
        for (int b = 0; b < 8; b++) {
            int64_t o = byte * 8 + b;
            if (o < out_at || o >= out_at + n)
                continue;
            v = src(o - out_at) ? v | (1u << b) : v & ~(1u << b);
        }
        out[byte] = (uint8_t)v;
    }
}

template <class S>
int write_bits(const kn_ctx *ctx, S src, int64_t out_at, int64_t n, uint8_t *out, pa_err *err)
{
    if (n <= 0)
        return PA_OK;
    int64_t bytes = ((out_at + n - 1) >> 3) - (out_at >> 3) + 1;
    return SIMT_LAUNCH(bits_k<S>, blocks_for(bytes), THREADS, 0, ctx->stream, err, src, out_at, n, out);
}

/* Validity of row sel[k] (or in_at + k) of a column. */
struct sel_valid {
    const uint8_t *bits;
    const int32_t *sel;
    int64_t in_at;
    __device__ bool operator()(int64_t k) const { return bit(bits, sel ? sel[k] : in_at + k); }
};

/* Validity of row idx[k] of a column (k < n); -1 is NULL. */
struct idx_valid {
    const uint8_t *bits;
    const int32_t *idx;
    int64_t n;
    __device__ bool operator()(int64_t k) const { return k < n && idx[k] >= 0 && bit(bits, idx[k]); }
};

/* --------------------------------------------------------------- select */

struct pred_true {
    const uint8_t *v, *valid;
    __device__ int64_t operator()(int64_t i) const { return v[i] != 0 && bit(valid, i); }
};

struct write_row {
    int32_t *sel;
    __device__ void operator()(int64_t i, int64_t at, int64_t keep) const
    {
        if (keep)
            sel[at] = (int32_t)i;
    }
};
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_select)(const kn_ctx *ctx, const pa_column *pred, int64_t rows, int32_t *sel,
                                         int64_t *count, pa_err *err)
{
    if (pred->type.id != PA_TYPE_BOOLEAN)
        return pa_error(err, PA_EINVAL, "selection from a %s column", pa_type_name(pred->type.id));
    if (rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "selection over %lld rows: at most INT32_MAX", (long long)rows);
    KN__POISON(ctx, count);
    pred_true f = {(const uint8_t *)pred->data, pred->validity};
    return scan(ctx, rows, f, write_row{sel}, NULL, count, err);
}

namespace {

/* ------------------------------------------------------- string lengths */

/* Length of row sel[k] (or in_at + k), or of row idx[k] (0 when -1). */
struct sel_len {
    const int32_t *off, *sel;
    int64_t in_at;
    __device__ int64_t operator()(int64_t k) const
    {
        int64_t r = sel ? sel[k] : in_at + k;
        return (int64_t)off[r + 1] - off[r];
    }
};

struct idx_len {
    const int32_t *off, *idx;
    __device__ int64_t operator()(int64_t k) const
    {
        int32_t r = idx[k];
        return r >= 0 ? (int64_t)off[r + 1] - off[r] : 0;
    }
};

/* out[k + 1] = offset after row k (offsets start where out[0] says). */
struct write_end {
    int32_t *out;
    fault_t too_big;
    __device__ void operator()(int64_t k, int64_t at, int64_t len) const
    {
        if (at + len > INT32_MAX)
            too_big.raise();
        else
            out[k + 1] = (int32_t)(at + len);
    }
};

const char STRINGS_2G[] = "more than 2 GiB of strings in one column";

/* Copy the bytes of row r(k) to out_data + out_off[k] (nothing after a
 * fault: the offsets may not be written). */
template <class R>
__global__ void copy_strings_k(R r, int64_t n, const int32_t *off, const uint8_t *data, const int32_t *out_off,
                                      uint8_t *out_data, const int64_t *fault)
{
    if (*(volatile const int64_t *)fault)
        return;
    KN_GPU_FOR(k, n)
    {
        int64_t row = r(k);
        if (row < 0)
            continue;
        const uint8_t *s = data + off[row];
        uint8_t *d = out_data + out_off[k];
        int32_t len = off[row + 1] - off[row];
        for (int32_t b = 0; b < len; b++)
            d[b] = s[b];
    }
}

struct sel_row {
    const int32_t *sel;
    int64_t in_at;
    __device__ int64_t operator()(int64_t k) const { return sel ? sel[k] : in_at + k; }
};

struct idx_row {
    const int32_t *idx;
    __device__ int64_t operator()(int64_t k) const { return idx[k]; }
};

/* -------------------------------------------------------------- gather */

/* D[k] = S[row(k)] for fixed-width values of type T. */
template <class T, class R>
__global__ void move_k(R r, int64_t n, const T *src, T *dst)
{
    KN_GPU_FOR(k, n)
    {
        int64_t row = r(k);
        dst[k] = row >= 0 ? src[row] : T{};
    }
}

template <class R>
int move_values(const kn_ctx *ctx, R r, int64_t n, int width, const void *src, void *dst, pa_err *err)
{
    if (n <= 0)
        return PA_OK;
    unsigned nb = blocks_for(n);
    switch (width) {
    case 1: return SIMT_LAUNCH((move_k<uint8_t, R>), nb, THREADS, 0, ctx->stream, err, r, n, (const uint8_t *)src, (uint8_t *)dst);
    case 4: return SIMT_LAUNCH((move_k<uint32_t, R>), nb, THREADS, 0, ctx->stream, err, r, n, (const uint32_t *)src, (uint32_t *)dst);
    case 8: return SIMT_LAUNCH((move_k<uint64_t, R>), nb, THREADS, 0, ctx->stream, err, r, n, (const uint64_t *)src, (uint64_t *)dst);
    case 16: return SIMT_LAUNCH((move_k<v16, R>), nb, THREADS, 0, ctx->stream, err, r, n, (const v16 *)src, (v16 *)dst);
    default: return pa_error(err, PA_EINVAL, "moving %d-byte values", width);
    }
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_gather_str_bytes)(const kn_ctx *ctx, const pa_column *in, const int32_t *sel,
                                                   int64_t in_at, int64_t n, int64_t *bytes, pa_err *err)
{
    int rc = kn__gather_rows_check(in, sel, in_at, n, err);
    if (rc != PA_OK)
        return rc;
    if (!pa_type_is_varlen(in->type.id))
        return pa_error(err, PA_EINVAL, "string bytes of a %s column", pa_type_name(in->type.id));
    KN__POISON(ctx, bytes);
    return scan(ctx, n, sel_len{in->offsets, sel, in_at}, no_write{}, NULL, bytes, err);
}

extern "C" int SIMT_NAME(kn__gpu_gather)(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at,
                                         int64_t n, pa_column *out, int64_t out_at, pa_err *err)
{
    int rc = kn__gather_check(in, sel, in_at, n, out, err);
    if (rc != PA_OK)
        return rc;
    if (n == 0)
        return PA_OK;
    if (out->validity && (rc = write_bits(ctx, sel_valid{in->validity, sel, in_at}, out_at, n, out->validity, err)))
        return rc;
    if (pa_type_is_varlen(in->type.id)) {
        int32_t *oo = out->offsets + out_at;
        write_end w = {oo, fault_of(ctx, PA_EUNSUPPORTED, STRINGS_2G)};
        if ((rc = scan(ctx, n, sel_len{in->offsets, sel, in_at}, w, oo, NULL, err)) != PA_OK)
            return rc;
        return SIMT_LAUNCH(copy_strings_k<sel_row>, blocks_for(n), THREADS, 0, ctx->stream, err,
                           sel_row{sel, in_at}, n, (const int32_t *)in->offsets, (const uint8_t *)in->data,
                           (const int32_t *)oo, (uint8_t *)out->data, (const int64_t *)w.too_big.words);
    }
    int w = pa_type_bytes(in->type);
    return move_values(ctx, sel_row{sel, in_at}, n, w, in->data, (uint8_t *)out->data + out_at * w, err);
}

namespace {

/* ---------------------------------------------------------------- take */
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_take_string_bytes)(const kn_ctx *ctx, const pa_column *src, const int32_t *idx,
                                                    int64_t n, int64_t *bytes, pa_err *err)
{
    KN__POISON(ctx, bytes);
    if (!pa_type_is_varlen(src->type.id))
        return SIMT_LAUNCH(store_k<int64_t>, 1, 1, 0, ctx->stream, err, bytes, (int64_t)0);
    return scan(ctx, n, idx_len{src->offsets, idx}, no_write{}, NULL, bytes, err);
}

namespace {

/* A fault when a row is NULL (idx -1) and the output has no validity. */
__global__ void no_null_rows_k(const int32_t *idx, int64_t n, fault_t f)
{
    KN_GPU_FOR(k, n)
    {
        if (idx[k] < 0)
            f.raise();
    }
}

const char TAKE_NULL[] = "take: a NULL row (index -1) for an output without validity";
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_take)(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n,
                                       pa_column *dst, pa_err *err)
{
    int rc;
    if (!dst->validity) {
        if (src->validity)
            return pa_error(err, PA_EINVAL, "take: the source has NULLs but the output has no validity");
        if (n > 0 && (rc = SIMT_LAUNCH(no_null_rows_k, blocks_for(n), THREADS, 0, ctx->stream, err, idx, n,
                                       fault_of(ctx, PA_EINVAL, TAKE_NULL))))
            return rc;
    }
    int w = pa_type_bytes(src->type);
    if (!pa_type_is_varlen(src->type.id) && w != 1 && w != 4 && w != 8 && w != 16)
        return pa_error(err, PA_EINVAL, "take: column type %s", pa_type_name(src->type.id));
    dst->type = src->type;
    dst->length = n;
    if (pa_type_is_varlen(src->type.id)) {
        write_end w = {dst->offsets, fault_of(ctx, PA_EUNSUPPORTED, STRINGS_2G)};
        if ((rc = SIMT_LAUNCH(store_k<int32_t>, 1, 1, 0, ctx->stream, err, dst->offsets, (int32_t)0)) != PA_OK ||
            (rc = scan(ctx, n, idx_len{src->offsets, idx}, w, dst->offsets, NULL, err)) != PA_OK)
            return rc;
        if (n > 0 &&
            (rc = SIMT_LAUNCH(copy_strings_k<idx_row>, blocks_for(n), THREADS, 0, ctx->stream, err, idx_row{idx}, n,
                              (const int32_t *)src->offsets, (const uint8_t *)src->data,
                              (const int32_t *)dst->offsets, (uint8_t *)dst->data,
                              (const int64_t *)w.too_big.words)) != PA_OK)
            return rc;
    } else if ((rc = move_values(ctx, idx_row{idx}, n, w, src->data, dst->data, err)) != PA_OK) {
        return rc;
    }
    if (dst->validity && n > 0) {
        /* Whole bytes from bit 0: the last byte's bits past n come out 0. */
        int64_t whole = (n + 7) & ~(int64_t)7;
        return write_bits(ctx, idx_valid{src->validity, idx, n}, 0, whole, dst->validity, err);
    }
    return PA_OK;
}

namespace {

/* ----------------------------------------------------------- copy bits */

__global__ void copy_bits_k(const uint8_t *src, int64_t src_at, int64_t n, uint8_t *dst)
{
    const uint8_t *s = src + (src_at >> 3);
    int sh = (int)(src_at & 7);
    int64_t nbytes = (n + 7) >> 3, spanned = (sh + n + 7) >> 3;
    KN_GPU_FOR(i, nbytes)
    {
        unsigned v = (unsigned)s[i] >> sh;
        if (sh && i + 1 < spanned)
            v |= (unsigned)s[i + 1] << (8 - sh);
        if (i == nbytes - 1 && (n & 7))
            v &= (1u << (n & 7)) - 1;
        dst[i] = (uint8_t)v;
    }
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_copy_bits)(const kn_ctx *ctx, const uint8_t *src, int64_t src_at, int64_t n,
                                            uint8_t *dst, pa_err *err)
{
    if (n < 0 || src_at < 0)
        return pa_error(err, PA_EINVAL, "kn_copy_bits: bits [%lld, +%lld)", (long long)src_at, (long long)n);
    if (n == 0)
        return PA_OK;
    return SIMT_LAUNCH(copy_bits_k, blocks_for((n + 7) >> 3), THREADS, 0, ctx->stream, err, src, src_at, n, dst);
}

namespace {

/* ------------------------------------------------------ append, concat */

/* Strings of src appended at row `at` of dst: bytes after dst's offset at
 * row at (0 when at is 0, which also writes offsets[0]), offsets rebased. */
__global__ void append_strings_k(pa_column src, pa_column dst, int64_t at, fault_t too_big)
{
    const int32_t *so = src.offsets;
    int64_t n = src.length, first = so[0], bytes = (int64_t)so[n] - first;
    int64_t base = at == 0 ? 0 : dst.offsets[at];
    if (base + bytes > INT32_MAX) {
        too_big.raise();
        return;
    }
    const uint8_t *s = (const uint8_t *)src.data + first;
    uint8_t *d = (uint8_t *)dst.data + base;
    KN_GPU_FOR(i, bytes)
    d[i] = s[i];
    KN_GPU_FOR(i, n + 1)
    {
        if (i > 0 || at == 0)
            dst.offsets[at + i] = (int32_t)(base + so[i] - first);
    }
}

int append(const kn_ctx *ctx, const pa_column *src, pa_column *dst, int64_t at, pa_err *err)
{
    int64_t n = src->length;
    int rc;
    if (pa_type_is_varlen(src->type.id)) {
        /* The grid covers the byte copy when the host knows the bytes. */
        int64_t bytes = 0, span = n;
        if (pa_column_bytes(src, &bytes) && bytes > span)
            span = bytes;
        rc = SIMT_LAUNCH(append_strings_k, blocks_for(span), THREADS, 0, ctx->stream, err, *src, *dst, at,
                         fault_of(ctx, PA_EOVERFLOW, STRINGS_2G));
    } else {
        int w = pa_type_bytes(src->type);
        rc = move_values(ctx, sel_row{NULL, 0}, n, w, src->data, (uint8_t *)dst->data + at * w, err);
    }
    if (rc == PA_OK && dst->validity)
        rc = write_bits(ctx, sel_valid{src->validity, NULL, 0}, at, n, dst->validity, err);
    return rc;
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_append_column)(const kn_ctx *ctx, const pa_column *src, pa_column *dst, int64_t at,
                                                pa_err *err)
{
    if (src->length == 0 && !(pa_type_is_varlen(src->type.id) && at == 0))
        return PA_OK;
    return append(ctx, src, dst, at, err);
}

namespace {

__global__ void zero_bytes_k(uint8_t *p, int64_t n)
{
    KN_GPU_FOR(i, n)
    p[i] = 0;
}

/* Up to 16 sources' string bytes added to *bytes (set when first). */
struct src_group {
    pa_column c[16];
    int n;
};

__global__ void concat_bytes_k(src_group g, int first, int64_t *bytes)
{
    int64_t sum = 0;
    for (int i = 0; i < g.n; i++)
        if (g.c[i].length > 0)
            sum += (int64_t)g.c[i].offsets[g.c[i].length] - g.c[i].offsets[0];
    *bytes = first ? sum : *bytes + sum;
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_concat_bytes)(const kn_ctx *ctx, const pa_column *srcs, int n, int64_t *bytes,
                                               pa_err *err)
{
    for (int i = 0; i < n; i++)
        if (!pa_type_is_varlen(srcs[i].type.id))
            return pa_error(err, PA_EINVAL, "kn_concat_bytes: column %d is not VARCHAR", i);
    KN__POISON(ctx, bytes);
    int at = 0;
    do {
        src_group g;
        memset(&g, 0, sizeof g);
        g.n = n - at < 16 ? n - at : 16;
        memcpy(g.c, srcs + at, (size_t)g.n * sizeof *srcs);
        int rc = SIMT_LAUNCH(concat_bytes_k, 1, 1, 0, ctx->stream, err, g, at == 0, bytes);
        if (rc != PA_OK)
            return rc;
        at += g.n;
    } while (at < n);
    return PA_OK;
}

extern "C" int SIMT_NAME(kn__gpu_concat)(const kn_ctx *ctx, const pa_column *srcs, int n, pa_column *dst,
                                         pa_err *err)
{
    int64_t rows = 0;
    for (int i = 0; i < n; i++) {
        if (srcs[i].type.id != dst->type.id || pa_type_bytes(srcs[i].type) != pa_type_bytes(dst->type))
            return pa_error(err, PA_EINVAL, "kn_concat: source %d has another type than the output", i);
        rows += srcs[i].length;
    }
    if (rows != dst->length)
        return pa_error(err, PA_EINVAL, "kn_concat: %lld source rows for an output of %lld", (long long)rows,
                        (long long)dst->length);
    int rc;
    /* Validity starts clear, so bits past the last row stay 0. */
    if (dst->validity && rows > 0 &&
        (rc = SIMT_LAUNCH(zero_bytes_k, blocks_for((rows + 7) >> 3), THREADS, 0, ctx->stream, err, dst->validity,
                          (rows + 7) >> 3)))
        return rc;
    if (pa_type_is_varlen(dst->type.id) && (rc = SIMT_LAUNCH(store_k<int32_t>, 1, 1, 0, ctx->stream, err, dst->offsets, (int32_t)0)))
        return rc;
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        if (srcs[i].length == 0)
            continue;
        if ((rc = append(ctx, &srcs[i], dst, at, err)) != PA_OK)
            return rc;
        at += srcs[i].length;
    }
    return PA_OK;
}


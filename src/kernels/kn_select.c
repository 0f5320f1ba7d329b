/*
 * kn_select.c - selection from a BOOLEAN column, and gather of a column by
 * a selection (or a contiguous range) into another column at a row offset,
 * which is also how chunks are concatenated (rechunk, join build sides).
 * Fixed-width values move with typed loops; validity bits are assembled a
 * byte at a time when the output position is byte aligned; strings take two
 * passes (bytes first, so the caller can size the output).
 */
#include "kernels/kn_expr_int.h"

int kn__cpu_select(const kn_ctx *ctx, const pa_column *pred, int64_t rows, int32_t *sel, int64_t *count, pa_err *err)
{
    if (pred->type.id != PA_TYPE_BOOLEAN)
        return pa_error(err, PA_EINVAL, "selection from a %s column", pa_type_name(pred->type.id));
    if (rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "selection over %lld rows: at most INT32_MAX", (long long)rows);
    const uint8_t *v = pred->data;
    int64_t k = 0;
    if (!pred->validity) {
        for (int64_t i = 0; i < rows; i++) {
            sel[k] = (int32_t)i;
            k += v[i] != 0;
        }
    } else {
        for (int64_t i = 0; i < rows; i++) {
            sel[k] = (int32_t)i;
            k += (v[i] != 0) & ((pred->validity[i >> 3] >> (i & 7)) & 1);
        }
    }
    *count = k;
    return PA_OK;
}

static inline int64_t src_row(const int32_t *sel, int64_t in_at, int64_t k) { return sel ? sel[k] : in_at + k; }

int kn__gather_rows_check(const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, pa_err *err)
{
    if (n < 0 || in_at < 0 || (!sel && in_at + n > in->length))
        return pa_error(err, PA_EINVAL, "gather of rows [%lld, +%lld) from a column of %lld", (long long)in_at,
                        (long long)n, (long long)in->length);
    return PA_OK;
}

int kn__cpu_gather_str_bytes(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n,
                             int64_t *bytes, pa_err *err)
{
    int rc = kn__gather_rows_check(in, sel, in_at, n, err);
    if (rc != PA_OK)
        return rc;
    if (!pa_type_is_varlen(in->type.id))
        return pa_error(err, PA_EINVAL, "string bytes of a %s column", pa_type_name(in->type.id));
    const int32_t *off = in->offsets;
    int64_t total = 0;
    if (!sel) {
        total = n ? (int64_t)off[in_at + n] - off[in_at] : 0;
    } else {
        for (int64_t k = 0; k < n; k++)
            total += off[sel[k] + 1] - off[sel[k]];
    }
    *bytes = total;
    return PA_OK;
}

static void gather_validity(const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, uint8_t *out,
                            int64_t out_at)
{
    const uint8_t *iv = in->validity;
    int64_t k = 0;
    /* Unaligned head, one bit at a time. */
    for (; k < n && ((out_at + k) & 7); k++) {
        int64_t r = src_row(sel, in_at, k), o = out_at + k;
        bool b = !iv || ((iv[r >> 3] >> (r & 7)) & 1);
        out[o >> 3] = (uint8_t)(b ? out[o >> 3] | (1u << (o & 7)) : out[o >> 3] & ~(1u << (o & 7)));
    }
    if (!iv) {
        int64_t full = (n - k) / 8;
        memset(out + ((out_at + k) >> 3), 0xff, (size_t)full);
        k += full * 8;
    } else {
        for (; k + 8 <= n; k += 8) {
            uint8_t byte = 0;
            for (int j = 0; j < 8; j++) {
                int64_t r = src_row(sel, in_at, k + j);
                byte |= (uint8_t)(((iv[r >> 3] >> (r & 7)) & 1) << j);
            }
            out[(out_at + k) >> 3] = byte;
        }
    }
    for (; k < n; k++) {
        int64_t r = src_row(sel, in_at, k), o = out_at + k;
        bool b = !iv || ((iv[r >> 3] >> (r & 7)) & 1);
        out[o >> 3] = (uint8_t)(b ? out[o >> 3] | (1u << (o & 7)) : out[o >> 3] & ~(1u << (o & 7)));
    }
}

int kn__gather_check(const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, const pa_column *out,
                     pa_err *err)
{
    int rc = kn__gather_rows_check(in, sel, in_at, n, err);
    if (rc != PA_OK)
        return rc;
    if (in->type.id != out->type.id || pa_type_bytes(in->type) != pa_type_bytes(out->type))
        return pa_error(err, PA_EINVAL, "gather from %s into %s", pa_type_name(in->type.id),
                        pa_type_name(out->type.id));
    if (in->validity && !out->validity)
        return pa_error(err, PA_EINVAL, "gather of a column with NULLs into one without validity");
    return PA_OK;
}

int kn__cpu_gather(const kn_ctx *ctx, const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, pa_column *out,
                   int64_t out_at, pa_err *err)
{
    int rc = kn__gather_check(in, sel, in_at, n, out, err);
    if (rc != PA_OK)
        return rc;
    if (out->validity && n > 0)
        gather_validity(in, sel, in_at, n, out->validity, out_at);
    if (pa_type_is_varlen(in->type.id)) {
        const int32_t *off = in->offsets;
        const char *src = in->data;
        char *dst = out->data;
        int32_t *oo = out->offsets + out_at;
        int64_t at = oo[0];
        for (int64_t k = 0; k < n; k++) {
            int64_t r = src_row(sel, in_at, k);
            int64_t len = off[r + 1] - off[r];
            if (at + len > INT32_MAX)
                return pa_error(err, PA_EUNSUPPORTED, "gathered strings exceed %d bytes", INT32_MAX);
            memcpy(dst + at, src + off[r], (size_t)len);
            at += len;
            oo[k + 1] = (int32_t)at;
        }
        return PA_OK;
    }
    const int w = pa_type_bytes(in->type);
    char *dst = (char *)out->data + out_at * w;
    if (!sel) {
        if (n)
            memcpy(dst, (const char *)in->data + in_at * w, (size_t)(n * w));
        return PA_OK;
    }
    switch (w) {
#define G(T)                                                                  \
    {                                                                         \
        const T *S = in->data;                                                \
        T *D = (T *)dst;                                                      \
        for (int64_t k = 0; k < n; k++)                                       \
            D[k] = S[sel[k]];                                                 \
    }                                                                         \
    break;
    case 1: G(uint8_t)
    case 4: G(int32_t)
    case 8: G(int64_t)
    case 16: G(__int128)
#undef G
    default: return pa_error(err, PA_EINVAL, "gather of %d-byte values", w);
    }
    return PA_OK;
}

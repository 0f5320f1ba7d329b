/*
 * kn_concat.c - concatenation of columns (RECHUNK's "dynamic buffering":
 * many small chunks gathered into one). CPU implementation; on a GPU each
 * source is one copy kernel (values, rebased offsets, shifted validity
 * bits) into disjoint output ranges, so the sources can run in parallel.
 */
#include "kernels/kn_ops_int.h"

#include <string.h>

int kn__cpu_concat_bytes(const kn_ctx *ctx, const pa_column *srcs, int n, int64_t *bytes, pa_err *err)
{
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        const pa_column *c = &srcs[i];
        if (!pa_type_is_varlen(c->type.id))
            return pa_error(err, PA_EINVAL, "kn_concat_bytes: column %d is not VARCHAR", i);
        if (c->length > 0)
            total += (int64_t)c->offsets[c->length] - c->offsets[0];
    }
    *bytes = total;
    return PA_OK;
}

/* OR the `len` validity bits of src (all valid when src_bits is NULL) into
 * dst at bit `at`; dst bits there are zero. */
static void or_bits(uint8_t *dst, int64_t at, const uint8_t *src_bits, int64_t len)
{
    int64_t nbytes = (len + 7) >> 3;
    int sh = (int)(at & 7);
    uint8_t *d = dst + (at >> 3);
    for (int64_t i = 0; i < nbytes; i++) {
        unsigned v = src_bits ? src_bits[i] : 0xffu;
        if (i == nbytes - 1 && (len & 7))
            v &= (1u << (len & 7)) - 1;
        d[i] |= (uint8_t)(v << sh);
        if (sh && (v >> (8 - sh)))
            d[i + 1] |= (uint8_t)(v >> (8 - sh));
    }
}

int kn__cpu_concat(const kn_ctx *ctx, const pa_column *srcs, int n, pa_column *dst, pa_err *err)
{
    int64_t rows = 0;
    for (int i = 0; i < n; i++) {
        if (srcs[i].type.id != dst->type.id || pa_type_bytes(srcs[i].type) != pa_type_bytes(dst->type))
            return pa_error(err, PA_EINVAL, "kn_concat: source %d has another type than the output", i);
        rows += srcs[i].length;
    }
    if (rows != dst->length)
        return pa_error(err, PA_EINVAL, "kn_concat: %lld source rows for an output of %lld",
                        (long long)rows, (long long)dst->length);
    if (dst->validity)
        memset(dst->validity, 0, (size_t)((rows + 7) >> 3));
    int64_t at = 0;
    if (pa_type_is_varlen(dst->type.id)) {
        int64_t pos = 0;
        dst->offsets[0] = 0;
        for (int i = 0; i < n; i++) {
            const pa_column *s = &srcs[i];
            if (s->length == 0)
                continue;
            int64_t b0 = s->offsets[0], len = (int64_t)s->offsets[s->length] - b0;
            if (pos + len > INT32_MAX)
                return pa_error(err, PA_EOVERFLOW, "kn_concat: more than 2 GiB of strings in one column");
            memcpy((uint8_t *)dst->data + pos, (const uint8_t *)s->data + b0, (size_t)len);
            int32_t delta = (int32_t)(pos - b0);
            for (int64_t j = 1; j <= s->length; j++)
                dst->offsets[at + j] = s->offsets[j] + delta;
            if (dst->validity)
                or_bits(dst->validity, at, s->validity, s->length);
            pos += len;
            at += s->length;
        }
        return PA_OK;
    }
    size_t w = (size_t)pa_type_bytes(dst->type);
    for (int i = 0; i < n; i++) {
        const pa_column *s = &srcs[i];
        if (s->length == 0)
            continue;
        memcpy((uint8_t *)dst->data + (size_t)at * w, s->data, (size_t)s->length * w);
        if (dst->validity)
            or_bits(dst->validity, at, s->validity, s->length);
        at += s->length;
    }
    return PA_OK;
}

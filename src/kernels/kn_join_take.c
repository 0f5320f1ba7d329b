/*
 * kn_join_take.c - moving rows for the hash join and the partitioner:
 * kn_take gathers rows by index with -1 meaning NULL (the build side of a
 * LEFT join's unmatched rows, which a plain gather has no notion of), and
 * kn_append_column concatenates chunks into one columnar buffer (a hash
 * join's build side). Strings are sized first (kn_take_string_bytes).
 */
#include "kernels/kn_hash_int.h"

static inline bool bit_get(const uint8_t *v, int64_t i) { return (v[i >> 3] >> (i & 7)) & 1; }

static inline void bit_put(uint8_t *v, int64_t i, bool on)
{
    uint8_t m = (uint8_t)(1u << (i & 7));
    v[i >> 3] = on ? (uint8_t)(v[i >> 3] | m) : (uint8_t)(v[i >> 3] & ~m);
}

int kn__cpu_take_string_bytes(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n,
                              int64_t *bytes, pa_err *err)
{
    if (!pa_type_is_varlen(src->type.id)) {
        *bytes = 0;
        return PA_OK;
    }
    const int32_t *o = src->offsets;
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t r = idx[i];
        if (r >= 0)
            sum += o[r + 1] - o[r];
    }
    *bytes = sum;
    return PA_OK;
}

/* dst validity: bit i = idx[i] >= 0 and src row idx[i] valid; 8 rows per
 * output byte. */
static void take_validity(const pa_column *src, const int32_t *idx, int64_t n, uint8_t *dv)
{
    const uint8_t *sv = src->validity;
    for (int64_t b = 0; b < (n + 7) / 8; b++) {
        uint8_t byte = 0;
        int64_t end = b * 8 + 8 < n ? b * 8 + 8 : n;
        for (int64_t i = b * 8; i < end; i++) {
            int32_t r = idx[i];
            bool ok = r >= 0 && (!sv || bit_get(sv, r));
            byte |= (uint8_t)(ok << (i & 7));
        }
        dv[b] = byte;
    }
}

#define KN__TAKE_FIXED(T)                                                     \
    do {                                                                      \
        const T *s = src->data;                                               \
        T *d = dst->data;                                                     \
        for (int64_t i = 0; i < n; i++) {                                     \
            int32_t r = idx[i];                                               \
            d[i] = r >= 0 ? s[r] : (T)0;                                      \
        }                                                                     \
    } while (0)

int kn__cpu_take(const kn_ctx *ctx, const pa_column *src, const int32_t *idx, int64_t n, pa_column *dst,
                 pa_err *err)
{
    if (!dst->validity) {
        if (src->validity)
            return pa_error(err, PA_EINVAL, "take: the source has NULLs but the output has no validity");
        for (int64_t i = 0; i < n; i++)
            if (idx[i] < 0)
                return pa_error(err, PA_EINVAL, "take: row %lld is NULL but the output has no validity",
                                (long long)i);
    }
    dst->type = src->type;
    dst->length = n;
    if (pa_type_is_varlen(src->type.id)) {
        const int32_t *so = src->offsets;
        const uint8_t *sb = src->data;
        uint8_t *db = dst->data;
        int32_t *d_o = dst->offsets;
        int64_t pos = 0;
        d_o[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            int32_t r = idx[i];
            if (r >= 0) {
                int32_t len = so[r + 1] - so[r];
                if (pos + len > INT32_MAX)
                    return pa_error(err, PA_EUNSUPPORTED, "take: more than 2 GiB of strings in one column");
                memcpy(db + pos, sb + so[r], (size_t)len);
                pos += len;
            }
            d_o[i + 1] = (int32_t)pos;
        }
    } else {
        switch (pa_type_bytes(src->type)) {
        case 1: KN__TAKE_FIXED(uint8_t); break;
        case 4: KN__TAKE_FIXED(uint32_t); break;
        case 8: KN__TAKE_FIXED(uint64_t); break;
        case 16: KN__TAKE_FIXED(__int128); break;
        default: return pa_error(err, PA_EINVAL, "take: column type %s", pa_type_name(src->type.id));
        }
    }
    if (dst->validity)
        take_validity(src, idx, n, dst->validity);
    return PA_OK;
}

int kn__cpu_append_column(const kn_ctx *ctx, const pa_column *src, pa_column *dst, int64_t at, pa_err *err)
{
    int64_t n = src->length;
    if (pa_type_is_varlen(src->type.id)) {
        const int32_t *so = src->offsets;
        if (at == 0)
            dst->offsets[0] = 0;
        int64_t base = dst->offsets[at], first = so[0], bytes = (int64_t)so[n] - first;
        if (base + bytes > INT32_MAX)
            return pa_error(err, PA_EUNSUPPORTED, "append: more than 2 GiB of strings in one column");
        memcpy((uint8_t *)dst->data + base, (const uint8_t *)src->data + first, (size_t)bytes);
        for (int64_t i = 0; i < n; i++)
            dst->offsets[at + i + 1] = (int32_t)(base + so[i + 1] - first);
    } else {
        size_t w = (size_t)pa_type_bytes(src->type);
        memcpy((uint8_t *)dst->data + (size_t)at * w, src->data, (size_t)n * w);
    }
    if (dst->validity) {
        if (at % 8 == 0) {
            if (src->validity)
                memcpy(dst->validity + at / 8, src->validity, (size_t)(n + 7) / 8);
            else
                memset(dst->validity + at / 8, 0xff, (size_t)(n + 7) / 8);
        } else {
            for (int64_t i = 0; i < n; i++)
                bit_put(dst->validity, at + i, !src->validity || bit_get(src->validity, i));
        }
    }
    return PA_OK;
}

/*
 * kn_encode.c - value encoders for the Parquet writer: PLAIN, RLE booleans,
 * DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and
 * BYTE_STREAM_SPLIT, from engine representation (plus an optional row
 * selection) to page bytes. The caller sizes dst with kn_encode_bound.
 */
#include "kernels/kernels_int.h"

typedef struct src {
    const kn__colinfo *ci;
    const kn_values *in;
    const uint32_t *sel;
} src;

static inline uint64_t row_of(const src *s, size_t i) { return s->sel ? s->sel[i] : i; }

static inline uint64_t str_len(const kn_values *in, uint64_t r)
{
    return (uint64_t)(in->offsets[r + 1] - in->offsets[r]);
}

static uint64_t sum_lengths(const src *s, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += str_len(s->in, row_of(s, i));
    return t;
}

size_t kn_encode_bound(int encoding, const kn_column *col, const kn_values *in,
                       const uint32_t *sel, size_t n)
{
    kn__colinfo ci;
    if (kn__colinfo_get(col, &ci, NULL) != PA_OK)
        return 0;
    src s = {&ci, in, sel};
    bool is_int = ci.conv == KN__CV_I32 || ci.conv == KN__CV_I32_I64 || ci.conv == KN__CV_I64;
    switch (encoding) {
    case KN_ENC_PLAIN:
        switch (ci.conv) {
        case KN__CV_BOOL: return (n + 7) / 8;
        case KN__CV_BA_STR: return 4 * n + sum_lengths(&s, n);
        case KN__CV_BA_DEC: return 12 * n;
        default: return n * (size_t)ci.phys_width;
        }
    case KN_ENC_RLE:
        return ci.conv == KN__CV_BOOL ? 4 + kn_rle_encode_bound(n, 1) : 0;
    case KN_ENC_DELTA_BINARY_PACKED:
        return is_int ? kn__dbp_bound(n, ci.phys_width * 8) : 0;
    case KN_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return ci.conv == KN__CV_BA_STR ? kn__dbp_bound(n, 32) + sum_lengths(&s, n) : 0;
    case KN_ENC_DELTA_BYTE_ARRAY:
        return ci.conv == KN__CV_BA_STR || ci.conv == KN__CV_FLBA_STR
                   ? 2 * kn__dbp_bound(n, 32) + sum_lengths(&s, n) : 0;
    case KN_ENC_BYTE_STREAM_SPLIT:
        return ci.phys_width > 0 && ci.conv != KN__CV_BOOL ? n * (size_t)ci.phys_width : 0;
    default:
        return 0;
    }
}

static int overflow(pa_err *err, const kn_column *col, int64_t v)
{
    return pa_error(err, PA_EOVERFLOW, "value %lld does not fit a %s column", (long long)v,
                    kn_ptype_name(col->ptype));
}

/* Physical little-endian (or FLBA big-endian) bytes of fixed-width row r. */
static int to_phys(const kn__colinfo *ci, const kn_column *col, const kn_values *in, uint64_t r,
                   uint8_t *b, pa_err *err)
{
    const uint8_t *v = (const uint8_t *)in->values + r * (uint64_t)ci->out_width;
    switch (ci->conv) {
    case KN__CV_I32:
        memcpy(b, v, 4);
        return PA_OK;
    case KN__CV_I64:
    case KN__CV_F64:
        memcpy(b, v, 8);
        return PA_OK;
    case KN__CV_I32_I64: {
        int64_t x;
        memcpy(&x, v, 8);
        if (x < INT32_MIN || x > INT32_MAX)
            return overflow(err, col, x);
        kn__st32(b, (uint32_t)(int32_t)x);
        return PA_OK;
    }
    case KN__CV_F32_F64: {
        double d;
        memcpy(&d, v, 8);
        float f = (float)d;
        memcpy(b, &f, 4);
        return PA_OK;
    }
    case KN__CV_FLBA_DEC: {
        if (ci->out_width == 16) {   /* DECIMAL(19..38): the low phys_width bytes, if they hold it */
            __int128 x;
            memcpy(&x, v, 16);
            int w = ci->phys_width, sh = 128 - 8 * w;
            if (w < 16 && (__int128)((unsigned __int128)x << sh) >> sh != x)
                return pa_error(err, PA_EOVERFLOW, "a DECIMAL value does not fit a FIXED_LEN_BYTE_ARRAY(%d) column", w);
            for (int i = 0; i < w; i++)
                b[i] = (uint8_t)((unsigned __int128)x >> (8 * (w - 1 - i)));
            return PA_OK;
        }
        int64_t x;
        memcpy(&x, v, 8);
        if (!kn__i64_to_be(x, b, (size_t)ci->phys_width))
            return overflow(err, col, x);
        return PA_OK;
    }
    case KN__CV_FLBA_IV: {   /* the writer checked every value fits (writer_buffer.c) */
        pa_interval iv;
        memcpy(&iv, v, sizeof iv);
        kn__st32(b, (uint32_t)iv.months);
        kn__st32(b + 4, (uint32_t)iv.days);
        kn__st32(b + 8, (uint32_t)(iv.micros / 1000));
        return PA_OK;
    }
    default:
        return pa_error(err, PA_EINTERNAL, "to_phys on a variable-width column");
    }
}

/* Smallest big-endian two's complement of x (1..8 bytes). */
static size_t min_be_len(int64_t x)
{
    size_t len = 1;
    uint8_t tmp[8];
    while (len < 8 && !kn__i64_to_be(x, tmp, len))
        len++;
    return len;
}

static int plain_encode(const src *s, const kn_column *col, size_t n, uint8_t *dst, size_t *o,
                        pa_err *err)
{
    const kn__colinfo *ci = s->ci;
    const kn_values *in = s->in;
    size_t pos = 0;
    int rc;
    switch (ci->conv) {
    case KN__CV_BOOL: {
        size_t bytes = (n + 7) / 8;
        memset(dst, 0, bytes);
        const uint8_t *v = in->values;
        for (size_t i = 0; i < n; i++)
            if (v[row_of(s, i)])
                dst[i >> 3] |= (uint8_t)(1u << (i & 7));
        pos = bytes;
        break;
    }
    case KN__CV_BA_STR:
    case KN__CV_FLBA_STR:
        for (size_t i = 0; i < n; i++) {
            uint64_t r = row_of(s, i), len = str_len(in, r);
            if (ci->conv == KN__CV_BA_STR) {
                kn__st32(dst + pos, (uint32_t)len);
                pos += 4;
            } else if (len != (uint64_t)ci->phys_width) {
                return pa_error(err, PA_EINVAL, "string of %llu bytes in a FIXED_LEN_BYTE_ARRAY(%d) column",
                                (unsigned long long)len, ci->phys_width);
            }
            if (len)
                memcpy(dst + pos, in->bytes + in->offsets[r], len);
            pos += len;
        }
        break;
    case KN__CV_BA_DEC:
        for (size_t i = 0; i < n; i++) {
            int64_t x = kn__load_int(ci, in, row_of(s, i));
            size_t len = min_be_len(x);
            kn__st32(dst + pos, (uint32_t)len);
            kn__i64_to_be(x, dst + pos + 4, len);
            pos += 4 + len;
        }
        break;
    default: {
        size_t k = (size_t)ci->phys_width;
        if (!s->sel && ci->conv != KN__CV_I32_I64 && ci->conv != KN__CV_F32_F64 &&
            ci->conv != KN__CV_FLBA_DEC && ci->conv != KN__CV_FLBA_IV) {
            if (n)
                memcpy(dst, in->values, n * k);   /* same representation */
        } else {
            for (size_t i = 0; i < n; i++)
                if ((rc = to_phys(ci, col, in, row_of(s, i), dst + i * k, err)) != PA_OK)
                    return rc;
        }
        pos = n * k;
    }
    }
    *o = pos;
    return PA_OK;
}

static int bss_encode(const src *s, const kn_column *col, size_t n, uint8_t *dst, size_t *o,
                      pa_err *err)
{
    const kn__colinfo *ci = s->ci;
    size_t k = (size_t)ci->phys_width;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = row_of(s, i);
        uint8_t tmp[16];
        const uint8_t *b = tmp;
        if (ci->conv == KN__CV_FLBA_STR) {
            if (str_len(s->in, r) != k)
                return pa_error(err, PA_EINVAL, "string of %llu bytes in a FIXED_LEN_BYTE_ARRAY(%zu) column",
                                (unsigned long long)str_len(s->in, r), k);
            b = s->in->bytes + s->in->offsets[r];
        } else {
            int rc = to_phys(ci, col, s->in, r, tmp, err);
            if (rc != PA_OK)
                return rc;
        }
        for (size_t j = 0; j < k; j++)
            dst[j * n + i] = b[j];
    }
    *o = n * k;
    return PA_OK;
}

static int64_t get_int(const void *ctx, size_t i)
{
    const src *s = ctx;
    return kn__load_int(s->ci, s->in, row_of(s, i));
}

static int64_t get_len(const void *ctx, size_t i)
{
    const src *s = ctx;
    return (int64_t)str_len(s->in, row_of(s, i));
}

static int64_t get_prefix(const void *ctx, size_t i)
{
    const src *s = ctx;
    if (i == 0)
        return 0;
    uint64_t a = row_of(s, i - 1), b = row_of(s, i);
    uint64_t la = str_len(s->in, a), lb = str_len(s->in, b), m = la < lb ? la : lb, k = 0;
    const uint8_t *pa = s->in->bytes + s->in->offsets[a], *pb = s->in->bytes + s->in->offsets[b];
    while (k < m && pa[k] == pb[k])
        k++;
    return (int64_t)k;
}

static int64_t get_suffix_len(const void *ctx, size_t i)
{
    return get_len(ctx, i) - get_prefix(ctx, i);
}

int kn_encode_values(int encoding, const kn_column *col, const kn_values *in, const uint32_t *sel,
                     size_t n, uint8_t *dst, size_t cap, size_t *out_size, pa_err *err)
{
    kn__colinfo ci;
    int rc = kn__colinfo_get(col, &ci, err);
    if (rc != PA_OK)
        return rc;
    size_t bound = kn_encode_bound(encoding, col, in, sel, n);
    if (bound == 0 && n > 0)
        return pa_error(err, PA_EUNSUPPORTED, "encoder %s for %s columns as %s",
                        kn_encoding_name(encoding), kn_ptype_name(col->ptype),
                        pa_type_name(col->type.id));
    if (cap < bound)
        return pa_error(err, PA_EINVAL, "%s encoder: capacity %zu below the bound %zu",
                        kn_encoding_name(encoding), cap, bound);
    if (n > INT32_MAX)
        return pa_error(err, PA_EINVAL, "%zu values in one page exceed 2^31-1", n);
    src s = {&ci, in, sel};
    size_t o = 0, len = 0;
    switch (encoding) {
    case KN_ENC_PLAIN:
        rc = plain_encode(&s, col, n, dst, &o, err);
        break;
    case KN_ENC_RLE:
        rc = kn__rle_encode_bools(in->values, sel, n, dst, cap, &o, err);
        break;
    case KN_ENC_BYTE_STREAM_SPLIT:
        rc = bss_encode(&s, col, n, dst, &o, err);
        break;
    case KN_ENC_DELTA_BINARY_PACKED:
        if (ci.conv == KN__CV_I32_I64)
            for (size_t i = 0; i < n; i++) {
                int64_t x = get_int(&s, i);
                if (x < INT32_MIN || x > INT32_MAX)
                    return overflow(err, col, x);
            }
        rc = kn__dbp_encode(get_int, &s, n, ci.phys_width * 8, dst, cap, &o, err);
        break;
    case KN_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if ((rc = kn__dbp_encode(get_len, &s, n, 32, dst, cap, &o, err)) != PA_OK)
            break;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = row_of(&s, i), l = str_len(in, r);
            if (l)
                memcpy(dst + o, in->bytes + in->offsets[r], l);
            o += l;
        }
        break;
    case KN_ENC_DELTA_BYTE_ARRAY:
        if ((rc = kn__dbp_encode(get_prefix, &s, n, 32, dst, cap, &o, err)) != PA_OK)
            break;
        if ((rc = kn__dbp_encode(get_suffix_len, &s, n, 32, dst + o, cap - o, &len, err)) != PA_OK)
            break;
        o += len;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = row_of(&s, i), pre = (uint64_t)get_prefix(&s, i), l = str_len(in, r) - pre;
            if (l)
                memcpy(dst + o, in->bytes + in->offsets[r] + pre, l);
            o += l;
        }
        break;
    default:
        rc = pa_error(err, PA_EUNSUPPORTED, "encoder %s", kn_encoding_name(encoding));
    }
    if (rc == PA_OK)
        *out_size = o;
    return rc;
}

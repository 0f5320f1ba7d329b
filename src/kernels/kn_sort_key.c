/*
 * kn_sort_key.c - normalized sort keys: the record layout, encoding a
 * chunk's key columns into records, the threshold filter of top-N, record
 * copies, and gathering rows by the references of sorted records.
 * The layout itself is described in kernels.h (section "Sort and top-N").
 */
#include "kernels/kn_ops_int.h"

#include <math.h>
#include <string.h>

/* Bytes of a key's value part (after the flag byte). */
static uint32_t value_bytes(pa_type t)
{
    switch (kn__phys_id(t.id)) {
    case PA_TYPE_BOOLEAN: return 1;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return 4;
    case PA_TYPE_BIGINT:
    case PA_TYPE_DOUBLE: return 8;
    case PA_TYPE_DECIMAL: return t.precision > PA_DECIMAL64_MAX_PRECISION ? 16 : 8;
    case PA_TYPE_VARCHAR: return KN_SORT_STR_PREFIX;
    case PA_TYPE_INTERVAL: return 16;   /* pa_interval_norm, big-endian */
    default: return 0;
    }
}

int kn_sort_layout_init(kn_sort_layout *l, const kn_sort_key *keys, int n_keys, pa_err *err)
{
    memset(l, 0, sizeof *l);
    if (n_keys < 1 || n_keys > KN_SORT_MAX_KEYS)
        return pa_error(err, PA_EINVAL, "sort: %d keys (1..%d allowed)", n_keys, KN_SORT_MAX_KEYS);
    uint32_t at = 0;
    for (int k = 0; k < n_keys; k++) {
        uint32_t vb = value_bytes(keys[k].type);
        if (vb == 0 || keys[k].column < 0)
            return pa_error(err, PA_EINVAL, "sort key %d: bad column %d or type", k, keys[k].column);
        l->keys[k] = keys[k];
        l->offset[k] = at;
        at += 1 + vb;
        if (pa_type_is_varlen(keys[k].type.id))
            l->has_strings = true;
    }
    l->n_keys = n_keys;
    l->key_bytes = at;
    l->stride = ((at + 7) & ~7u) + 8;
    return PA_OK;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
    v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
}
static inline void put_be64(uint8_t *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}

/* Total-order bits of a double: -0 as +0, every NaN as one NaN above +Inf. */
static inline uint64_t double_key(double d)
{
    uint64_t b;
    if (d == 0)
        d = 0;
    if (isnan(d))
        b = 0x7ff8000000000000ull;
    else
        memcpy(&b, &d, 8);
    return (b >> 63) ? ~b : b | (1ull << 63);
}

/* Write the value bytes of every row of one key (NULL rows fixed up after). */
static void encode_values(const kn_sort_key *key, const pa_column *c, int64_t n, uint8_t *p, size_t stride)
{
    switch (kn__phys_id(key->type.id)) {
    case PA_TYPE_BOOLEAN: {
        const uint8_t *v = c->data;
        for (int64_t i = 0; i < n; i++)
            p[i * stride] = v[i] ? 1 : 0;
        break;
    }
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: {
        const int32_t *v = c->data;
        for (int64_t i = 0; i < n; i++)
            put_be32(p + i * stride, (uint32_t)v[i] ^ 0x80000000u);
        break;
    }
    case PA_TYPE_BIGINT:
    case PA_TYPE_DECIMAL:
        if (value_bytes(key->type) == 16) {
            const unsigned __int128 *v = c->data;
            for (int64_t i = 0; i < n; i++) {
                unsigned __int128 x;
                memcpy(&x, &v[i], 16);
                x ^= (unsigned __int128)1 << 127;
                put_be64(p + i * stride, (uint64_t)(x >> 64));
                put_be64(p + i * stride + 8, (uint64_t)x);
            }
        } else {
            const int64_t *v = c->data;
            for (int64_t i = 0; i < n; i++)
                put_be64(p + i * stride, (uint64_t)v[i] ^ (1ull << 63));
        }
        break;
    case PA_TYPE_DOUBLE: {
        const double *v = c->data;
        for (int64_t i = 0; i < n; i++)
            put_be64(p + i * stride, double_key(v[i]));
        break;
    }
    case PA_TYPE_VARCHAR: {
        const int32_t *off = c->offsets;
        const uint8_t *bytes = c->data;
        for (int64_t i = 0; i < n; i++) {
            uint8_t *d = p + i * stride;
            int32_t len = off[i + 1] - off[i];
            if (len >= KN_SORT_STR_PREFIX) {
                memcpy(d, bytes + off[i], KN_SORT_STR_PREFIX);
            } else {
                memset(d, 0, KN_SORT_STR_PREFIX);
                if (len > 0)
                    memcpy(d, bytes + off[i], (size_t)len);
            }
        }
        break;
    }
    case PA_TYPE_INTERVAL: {   /* by the normalised length: '1 mon' and '30 days' tie */
        const pa_interval *v = c->data;
        for (int64_t i = 0; i < n; i++) {
            unsigned __int128 x = (unsigned __int128)pa_interval_norm(v[i]) ^ ((unsigned __int128)1 << 127);
            put_be64(p + i * stride, (uint64_t)(x >> 64));
            put_be64(p + i * stride + 8, (uint64_t)x);
        }
        break;
    }
    default:
        break;
    }
}

int kn__cpu_sort_encode(const kn_ctx *ctx, const kn_sort_layout *l, kn_sort_source cols, int64_t n, uint32_t tag,
                        uint8_t *recs, pa_err *err)
{
    size_t stride = l->stride;
    if (n < 0 || n > (int64_t)UINT32_MAX)
        return pa_error(err, PA_EINVAL, "sort encode: %lld rows", (long long)n);
    for (int k = 0; k < l->n_keys; k++) {
        const kn_sort_key *key = &l->keys[k];
        const pa_column *c = &cols[key->column];
        if (c->type.id != key->type.id)
            return pa_error(err, PA_EINVAL, "sort key %d: column %d is %s, layout says %s", k, key->column,
                            pa_type_name(c->type.id), pa_type_name(key->type.id));
        uint32_t vb = value_bytes(key->type);
        uint8_t *p = recs + l->offset[k];
        uint8_t valid_flag = key->nulls_first ? 1 : 0;
        for (int64_t i = 0; i < n; i++)
            p[i * stride] = valid_flag;
        encode_values(key, c, n, p + 1, stride);
        if (key->descending) {
            for (int64_t i = 0; i < n; i++)
                for (uint32_t b = 1; b <= vb; b++)
                    p[i * stride + b] = (uint8_t)~p[i * stride + b];
        }
        if (c->validity) {
            for (int64_t i = 0; i < n; i++) {
                if (!pa_column_valid(c, i)) {
                    p[i * stride] = (uint8_t)!valid_flag;
                    memset(p + i * stride + 1, 0, vb);
                }
            }
        }
    }
    /* Padding and references. */
    for (int64_t i = 0; i < n; i++) {
        uint8_t *r = recs + i * stride;
        memset(r + l->key_bytes, 0, stride - 8 - l->key_bytes);
        uint32_t ref[2] = {tag, (uint32_t)i};
        memcpy(r + stride - 8, ref, 8);
    }
    (void)ctx;
    return PA_OK;
}

int kn__cpu_sort_copy(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *src, int64_t n, uint32_t tag_add,
                      uint8_t *dst, pa_err *err)
{
    size_t stride = l->stride;
    if (dst != src)
        memmove(dst, src, (size_t)n * stride);
    if (tag_add) {
        for (int64_t i = 0; i < n; i++) {
            uint8_t *t = dst + (size_t)i * stride + stride - 8;
            uint32_t tag;
            memcpy(&tag, t, 4);
            tag += tag_add;
            memcpy(t, &tag, 4);
        }
    }
    (void)ctx;
    (void)err;
    return PA_OK;
}

/* Reference of record i: its source and row. */
static inline void ref_of(const uint8_t *recs, size_t stride, int64_t i, uint32_t *tag, uint32_t *row)
{
    uint32_t ref[2];
    memcpy(ref, recs + (size_t)i * stride + stride - 8, 8);
    *tag = ref[0];
    *row = ref[1];
}

static int bad_tag(uint32_t tag, int n_sources, pa_err *err)
{
    return pa_error(err, PA_EINVAL, "sort gather: a record of source %u, %d sources given", tag, n_sources);
}

int kn__cpu_sort_gather_bytes(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources,
                              int n_sources, int column, const uint8_t *recs, int64_t n, int64_t *bytes, pa_err *err)
{
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t tag, row;
        ref_of(recs, l->stride, i, &tag, &row);
        if (tag >= (uint32_t)n_sources)
            return bad_tag(tag, n_sources, err);
        const pa_column *c = &sources[tag][column];
        total += c->offsets[row + 1] - c->offsets[row];
    }
    *bytes = total;
    return PA_OK;
}

/* Copy fixed-width values of type T; a tag outside the sources is an
 * error (the later passes over recs then need no check). */
#define GATHER_FIXED(T)                                                                            \
    do {                                                                                           \
        T *d = out->data;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                          \
            uint32_t tag, row;                                                                     \
            ref_of(recs, stride, i, &tag, &row);                                                   \
            if (tag >= (uint32_t)n_sources)                                                        \
                return bad_tag(tag, n_sources, err);                                               \
            memcpy(&d[i], (const uint8_t *)sources[tag][column].data + (size_t)row * sizeof(T),    \
                   sizeof(T));                                                                     \
        }                                                                                          \
    } while (0)

int kn__cpu_sort_gather(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources, int n_sources,
                        int column, const uint8_t *recs, int64_t n, pa_column *out, pa_err *err)
{
    size_t stride = l->stride;
    switch (pa_type_bytes(out->type)) {
    case 1: GATHER_FIXED(uint8_t); break;
    case 4: GATHER_FIXED(uint32_t); break;
    case 8: GATHER_FIXED(uint64_t); break;
    case 16: GATHER_FIXED(unsigned __int128); break;
    case 0: {
        int64_t at = 0;
        uint8_t *d = out->data;
        out->offsets[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            uint32_t tag, row;
            ref_of(recs, stride, i, &tag, &row);
            if (tag >= (uint32_t)n_sources)
                return bad_tag(tag, n_sources, err);
            const pa_column *c = &sources[tag][column];
            int32_t len = c->offsets[row + 1] - c->offsets[row];
            if (at + len > INT32_MAX)
                return pa_error(err, PA_EUNSUPPORTED, "sort gather: more than %d bytes of strings in one chunk",
                                INT32_MAX);
            if (len > 0)
                memcpy(d + at, (const uint8_t *)c->data + c->offsets[row], (size_t)len);
            at += len;
            out->offsets[i + 1] = (int32_t)at;
        }
        break;
    }
    default:
        return pa_error(err, PA_EINVAL, "sort gather: bad type");
    }
    if (out->validity) {
        memset(out->validity, 0, (size_t)(n + 7) / 8);
        for (int64_t i = 0; i < n; i++) {
            uint32_t tag, row;
            ref_of(recs, stride, i, &tag, &row);
            if (pa_column_valid(&sources[tag][column], row))
                out->validity[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            uint32_t tag, row;
            ref_of(recs, stride, i, &tag, &row);
            if (!pa_column_valid(&sources[tag][column], row))
                return pa_error(err, PA_EINVAL, "sort gather: column %d has NULLs but no output validity",
                                column);
        }
    }
    out->length = n;
    (void)ctx;
    return PA_OK;
}

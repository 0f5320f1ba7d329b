/*
 * kn_rle.c - the RLE/bit-packed hybrid (Encodings.md "RLE = 3"): a run reader
 * used for definition levels, dictionary indices and RLE booleans, and the
 * encoder used by the writer for levels and dictionary indices.
 */
#include "kernels/kernels_int.h"

void kn__rle_init(kn__rle *r, const uint8_t *p, size_t size, int w, const char *what)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->end = size ? p + size : p;
    r->w = w;
    r->what = what;
}

int kn__rle_next_run(kn__rle *r, pa_err *err)
{
    if (r->left > 0 || r->buf_pos < r->buf_len)
        return PA_OK;
    uint64_t h;
    if (!kn__uleb(&r->p, r->end, &h))
        return KN__CORRUPT(err, r->what, "stream ends before the values it should hold");
    uint64_t count = h >> 1;
    if (count == 0 || count > INT32_MAX)
        return KN__CORRUPT(err, r->what, "run length %llu outside [1, 2^31-1]",
                           (unsigned long long)(h & 1 ? count * 8 : count));
    size_t avail = (size_t)(r->end - r->p);
    if (h & 1) {
        uint64_t bytes = count * (uint64_t)r->w;
        r->packed = true;
        r->left = count * 8;
        r->data = r->p;
        /* A last run may be cut short; kn__rle_get checks it still holds the
         * values asked for. */
        r->data_end = bytes <= avail ? r->p + bytes : r->end;
        r->p = r->data_end;
        r->buf_pos = r->buf_len = 0;
    } else {
        int nbytes = (r->w + 7) / 8;
        if ((size_t)nbytes > avail)
            return KN__CORRUPT(err, r->what, "RLE run value truncated");
        uint32_t v = 0;
        for (int i = 0; i < nbytes; i++)
            v |= (uint32_t)r->p[i] << (8 * i);
        r->p += nbytes;
        if (r->w < 32 && (v >> r->w) != 0)
            return KN__CORRUPT(err, r->what, "RLE run value %u wider than %d bits", v, r->w);
        r->packed = false;
        r->value = v;
        r->left = count;
    }
    return PA_OK;
}

/* Decode the next group of the current bit-packed run into r->buf. */
static int fill_group(kn__rle *r, size_t need, pa_err *err)
{
    size_t avail = (size_t)(r->data_end - r->data);
    int w = r->w;
    if (w == 0 || avail >= (size_t)w) {
        kn__unpack32(r->data, avail, w, r->buf, 8);
        r->data += w;
        r->buf_len = 8;
        r->left -= 8;
    } else {
        size_t have = avail * 8 / (size_t)w;
        if (have < need || have == 0)
            return KN__CORRUPT(err, r->what, "bit-packed run truncated");
        kn__unpack32(r->data, avail, w, r->buf, have);
        r->data = r->data_end;
        r->buf_len = (int)have;
        r->left = 0;
    }
    r->buf_pos = 0;
    return PA_OK;
}

int kn__rle_get(kn__rle *r, uint32_t *out, size_t n, pa_err *err)
{
    int rc;
    while (n > 0) {
        if (r->buf_pos < r->buf_len) {
            size_t c = (size_t)(r->buf_len - r->buf_pos);
            if (c > n)
                c = n;
            memcpy(out, r->buf + r->buf_pos, c * sizeof *out);
            r->buf_pos += (int)c;
            out += c;
            n -= c;
            continue;
        }
        if ((rc = kn__rle_next_run(r, err)) != PA_OK)
            return rc;
        if (!r->packed) {
            size_t c = r->left < n ? (size_t)r->left : n;
            uint32_t v = r->value;
            for (size_t i = 0; i < c; i++)
                out[i] = v;
            r->left -= c;
            out += c;
            n -= c;
            continue;
        }
        size_t groups = (r->left < n ? (size_t)r->left : n) / 8;
        if (r->w > 0) {
            size_t maxg = (size_t)(r->data_end - r->data) / (size_t)r->w;
            if (groups > maxg)
                groups = maxg;
        }
        if (groups > 0) {
            kn__unpack32(r->data, (size_t)(r->data_end - r->data), r->w, out, groups * 8);
            r->data += groups * (size_t)r->w;
            r->left -= groups * 8;
            out += groups * 8;
            n -= groups * 8;
            continue;
        }
        if ((rc = fill_group(r, n < 8 ? n : 8, err)) != PA_OK)
            return rc;
    }
    return PA_OK;
}

int kn_rle_decode(const uint8_t *p, size_t size, int bit_width, uint32_t *out, size_t n,
                  size_t *consumed, pa_err *err)
{
    if (bit_width < 0 || bit_width > 32)
        return KN__CORRUPT(err, "RLE", "bit width %d outside 0..32", bit_width);
    kn__rle r;
    kn__rle_init(&r, p, size, bit_width, "RLE");
    int rc = kn__rle_get(&r, out, n, err);
    if (rc == PA_OK && consumed)
        *consumed = (size_t)(r.p - p);
    return rc;
}

/* ---------------------------------------------------------------- encoder */

size_t kn_rle_encode_bound(size_t n, int bit_width)
{
    /* At most one run per 8 values; each costs a 5-byte header plus either a
     * 4-byte value or w bytes per group of 8. */
    int w = bit_width < 4 ? 4 : bit_width;
    return (n / 8 + 2) * (size_t)(5 + w) + 16;
}

typedef struct rle_enc {
    uint8_t *dst;
    size_t cap, pos;
    int w;
} rle_enc;

static bool emit_rle(rle_enc *e, uint32_t v, size_t count)
{
    int nbytes = (e->w + 7) / 8;
    if (e->pos + 10 + (size_t)nbytes > e->cap)
        return false;
    e->pos += kn__uleb_put(e->dst + e->pos, (uint64_t)count << 1);
    for (int i = 0; i < nbytes; i++)
        e->dst[e->pos++] = (uint8_t)(v >> (8 * i));
    return true;
}

/* Values come from get(src, i): an array or a validity bitmap. */
#define KN__INLINE static inline __attribute__((always_inline))

KN__INLINE bool emit_literal(rle_enc *e, const void *src, uint32_t (*get)(const void *, size_t),
                             size_t from, size_t to)
{
    size_t count = to - from, groups = (count + 7) / 8;
    size_t bytes = groups * (size_t)e->w;
    if (e->pos + 10 + bytes > e->cap)
        return false;
    e->pos += kn__uleb_put(e->dst + e->pos, ((uint64_t)groups << 1) | 1);
    uint8_t *o = e->dst + e->pos;
    memset(o, 0, bytes);
    uint32_t tmp[64];
    for (size_t i = from; i < to; i += 64) {
        size_t c = to - i < 64 ? to - i : 64;
        for (size_t k = 0; k < c; k++)
            tmp[k] = get(src, i + k);
        /* i - from is a multiple of 64, so the chunk starts on a byte. */
        kn__pack32(tmp, c, e->w, o + ((i - from) / 8) * (size_t)e->w);
    }
    e->pos += bytes;
    return true;
}

KN__INLINE int encode_generic(const void *src, uint32_t (*get)(const void *, size_t), size_t n,
                              int w, uint8_t *dst, size_t cap, size_t *out_size, pa_err *err)
{
    rle_enc e = {dst, cap, 0, w};
    size_t i = 0, lit = 0;
    while (i < n) {
        uint32_t v = get(src, i);
        size_t j = i + 1;
        while (j < n && get(src, j) == v)
            j++;
        size_t r = j - i, pad = (8 - (i - lit) % 8) % 8;
        if (r >= pad + 8) {
            /* Complete the pending literal groups with the run's first values. */
            i += pad;
            if (i > lit && !emit_literal(&e, src, get, lit, i))
                goto full;
            if (!emit_rle(&e, v, j - i))
                goto full;
            lit = i = j;
        } else {
            i = j;
        }
    }
    if (lit < n && !emit_literal(&e, src, get, lit, n))
        goto full;
    *out_size = e.pos;
    return PA_OK;
full:
    return pa_error(err, PA_EINVAL, "RLE encoder: output capacity %zu too small", cap);
}

static uint32_t get_array(const void *src, size_t i) { return ((const uint32_t *)src)[i]; }

int kn_rle_encode(const uint32_t *values, size_t n, int bit_width, uint8_t *dst, size_t cap,
                  size_t *out_size, pa_err *err)
{
    if (bit_width < 0 || bit_width > 32)
        return pa_error(err, PA_EINVAL, "RLE encoder: bit width %d outside 0..32", bit_width);
    if (n > INT32_MAX)
        return pa_error(err, PA_EINVAL, "RLE encoder: %zu values exceed 2^31-1", n);
    if (bit_width < 32) {
        for (size_t i = 0; i < n; i++)
            if (values[i] >> bit_width)
                return pa_error(err, PA_EINVAL, "RLE encoder: value %u at %zu wider than %d bits",
                                values[i], i, bit_width);
    }
    return encode_generic(values, get_array, n, bit_width, dst, cap, out_size, err);
}

typedef struct bm_src {
    const uint8_t *bm;
    uint64_t first;
} bm_src;

static uint32_t get_bitmap(const void *src, size_t i)
{
    const bm_src *s = src;
    return kn__bit_get(s->bm, s->first + i);
}

int kn_encode_def_levels(const uint8_t *validity, uint64_t first, size_t n, bool prefix,
                         uint8_t *dst, size_t cap, size_t *out_size, pa_err *err)
{
    if (n > INT32_MAX)
        return pa_error(err, PA_EINVAL, "definition levels: %zu values exceed 2^31-1", n);
    size_t hdr = prefix ? 4 : 0;
    if (cap < hdr)
        return pa_error(err, PA_EINVAL, "definition levels: output capacity %zu too small", cap);
    bm_src s = {validity, first};
    size_t len = 0;
    int rc = encode_generic(&s, get_bitmap, n, 1, dst + hdr, cap - hdr, &len, err);
    if (rc != PA_OK)
        return rc;
    if (prefix)
        kn__st32(dst, (uint32_t)len);
    *out_size = len + hdr;
    return PA_OK;
}

int kn_dict_index_width(uint32_t n_entries)
{
    return n_entries <= 1 ? 0 : kn__bits64(n_entries - 1);
}

int kn_encode_dict_indices(const uint32_t *indices, size_t n, uint32_t n_entries, uint8_t *dst,
                           size_t cap, size_t *out_size, pa_err *err)
{
    int w = kn_dict_index_width(n_entries);
    if (cap < 1)
        return pa_error(err, PA_EINVAL, "dictionary indices: output capacity too small");
    dst[0] = (uint8_t)w;
    for (size_t i = 0; i < n; i++)
        if (indices[i] >= n_entries && n_entries > 0)
            return pa_error(err, PA_EINVAL, "dictionary indices: index %u >= %u entries",
                            indices[i], n_entries);
    size_t len = 0;
    int rc = kn_rle_encode(indices, n, w, dst + 1, cap - 1, &len, err);
    if (rc == PA_OK)
        *out_size = len + 1;
    return rc;
}

typedef struct bool_src {
    const uint8_t *v;
    const uint32_t *sel;
} bool_src;

static uint32_t get_bool(const void *src, size_t i)
{
    const bool_src *s = src;
    return s->v[s->sel ? s->sel[i] : i] != 0;
}

int kn__rle_encode_bools(const uint8_t *values, const uint32_t *sel, size_t n, uint8_t *dst,
                         size_t cap, size_t *out_size, pa_err *err)
{
    if (n > INT32_MAX)
        return pa_error(err, PA_EINVAL, "RLE encoder: %zu values exceed 2^31-1", n);
    if (cap < 4)
        return pa_error(err, PA_EINVAL, "RLE encoder: output capacity %zu too small", cap);
    bool_src s = {values, sel};
    size_t len = 0;
    int rc = encode_generic(&s, get_bool, n, 1, dst + 4, cap - 4, &len, err);
    if (rc != PA_OK)
        return rc;
    kn__st32(dst, (uint32_t)len);
    *out_size = len + 4;
    return PA_OK;
}

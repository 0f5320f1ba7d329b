/*
 * kn_dict.c - dictionary encodings: gathering values of a decoded dictionary
 * by RLE/bit-packed indices (PLAIN_DICTIONARY / RLE_DICTIONARY data pages),
 * RLE-encoded BOOLEAN values. The writer's dictionary builder is in
 * kn_dict_build.c.
 */
#include "kernels/kernels_int.h"

#include <string.h>

#define CHUNK 1024

/* Whether any of CHUNK indices is >= dn, for indices below 2^31 and
 * 1 <= dn <= 2^31: (dn - 1 - idx) stays below 2^31 for a valid index and wraps
 * to 2^31 or more for an invalid one, so the OR of all of them has the top
 * bit set exactly when one is invalid. Two vector operations per 4 indices
 * (an unsigned max costs five without SSE4.1); the fixed trip count lets the
 * compiler vectorise it at -O2. */
static bool any_chunk_outside(const uint32_t *idx, uint32_t dn)
{
    uint32_t acc = 0, lim = dn - 1;
    for (size_t k = 0; k < CHUNK; k++)
        acc |= lim - idx[k];
    return (acc >> 31) != 0;
}

/* Largest of CHUNK indices: a fixed trip count lets the compiler vectorise
 * the reduction at -O2. */
static uint32_t max_chunk(const uint32_t *idx)
{
    uint32_t top = 0;
    for (size_t k = 0; k < CHUNK; k++)
        top = idx[k] > top ? idx[k] : top;
    return top;
}

/* Dictionary strings of idx[0..c) into slots [slot, slot+c) of out
 * (offsets[slot] already set): the offsets first, then the bytes. */
static int gather_strings(const kn_dict *dict, const uint32_t *idx, size_t c, kn_out *out, uint64_t slot,
                          pa_err *err)
{
    const int32_t *doff = dict->offsets;
    int32_t *off = out->offsets + slot;
    uint64_t pos = (uint64_t)off[0];
    for (size_t k = 0; k < c; k++) {
        pos += (uint64_t)(uint32_t)(doff[idx[k] + 1] - doff[idx[k]]);
        off[k + 1] = (int32_t)pos;   /* checked below before any byte is written */
    }
    if (pos > INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "string data of one column chunk exceeds 2 GiB (int32 offsets)");
    if (pos > out->bytes_capacity)
        return pa_error(err, PA_EINVAL, "string output capacity %llu bytes too small (need %llu)",
                        (unsigned long long)out->bytes_capacity, (unsigned long long)pos);
    const uint8_t *db = dict->bytes, *dlim = dict->bytes + doff[dict->n];
    uint8_t *ob = out->bytes, *olim = out->bytes + pos;
    for (size_t k = 0; k < c; k++) {
        int32_t s = doff[idx[k]];
        kn__copy_str(ob + off[k], olim, db + s, dlim, (size_t)(doff[idx[k] + 1] - s));
    }
    return PA_OK;
}

static int open_indices(const kn_dict *dict, const uint8_t *p, size_t size, uint64_t n,
                        kn__rle *r, const char *enc, pa_err *err)
{
    if (!dict || (dict->n > 0 && !dict->values && !dict->offsets))
        return pa_error(err, PA_EINVAL, "%s page without a dictionary", enc);
    if (size < 1)
        return KN__CORRUPT(err, enc, "index bit width byte missing");
    if (p[0] > 32)
        return KN__CORRUPT(err, enc, "index bit width %d exceeds 32", p[0]);
    kn__rle_init(r, p + 1, size - 1, p[0], enc);
    if (n > 0 && dict->n == 0)
        return KN__CORRUPT(err, enc, "indices into an empty dictionary");
    return PA_OK;
}

int kn__dict_decode(const kn__colinfo *ci, const kn_dict *dict, const uint8_t *p, size_t size,
                    uint64_t n, kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    const char *enc = "RLE_DICTIONARY";
    kn__rle r;
    int rc = kn__check_out(ci, out, at, n, enc, err);
    if (rc == PA_OK)
        rc = open_indices(dict, p, size, n, &r, enc, err);
    if (rc != PA_OK)
        return rc;
    uint32_t idx[CHUNK];
    uint32_t dn = (uint32_t)(dict->n > UINT32_MAX ? UINT32_MAX : dict->n);
    int width = ci->out_width, bw = p[0];
    /* Indices of bw bits are below 2^bw: no check when the dictionary covers
     * them all; the cheap OR test when both sides stay below 2^31. */
    bool check = !(bw < 32 && ((uint64_t)1 << bw) <= dn);
    bool or_test = bw <= 31 && dn <= ((uint32_t)1 << 31);
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = kn__rle_get(&r, idx, c, err)) != PA_OK)
            return rc;
        bool bad = false;
        if (!check) {
            /* every index fits */
        } else if (c == CHUNK && or_test) {
            bad = any_chunk_outside(idx, dn);
        } else {
            uint32_t top = c == CHUNK ? max_chunk(idx) : 0;   /* then the exact index if bad */
            for (size_t k = c == CHUNK ? c : 0; k < c; k++)
                top = idx[k] > top ? idx[k] : top;
            bad = top >= dn;
        }
        if (bad)
            for (size_t k = 0; k < c; k++)
                if (idx[k] >= dn)
                    return KN__CORRUPT(err, enc, "index %u outside the %u-entry dictionary", idx[k], dn);
        uint64_t slot = at + i;
        if (ci->is_string) {
            if ((rc = gather_strings(dict, idx, c, out, slot, err)) != PA_OK)
                return rc;
        } else if (width == 8) {
            const uint64_t *dv = dict->values;
            uint64_t *o = (uint64_t *)out->values + slot;
            for (size_t k = 0; k < c; k++)
                o[k] = dv[idx[k]];
        } else if (width == 16) {   /* DECIMAL(19..38) */
            const uint8_t *dv = dict->values;
            uint8_t *o = (uint8_t *)out->values + slot * 16;
            for (size_t k = 0; k < c; k++)
                memcpy(o + 16 * k, dv + 16 * (size_t)idx[k], 16);
        } else if (width == 4) {
            const uint32_t *dv = dict->values;
            uint32_t *o = (uint32_t *)out->values + slot;
            for (size_t k = 0; k < c; k++)
                o[k] = dv[idx[k]];
        } else {
            const uint8_t *dv = dict->values;
            uint8_t *o = (uint8_t *)out->values + slot;
            for (size_t k = 0; k < c; k++)
                o[k] = dv[idx[k]];
        }
    }
    if (consumed)
        *consumed = (size_t)(r.p - p);
    return PA_OK;
}

int kn__dict_measure(const kn__colinfo *ci, const kn_dict *dict, const uint8_t *p, size_t size,
                     uint64_t n, uint64_t *bytes, pa_err *err)
{
    const char *enc = "RLE_DICTIONARY";
    *bytes = 0;
    if (!ci->is_string)
        return PA_OK;
    kn__rle r;
    int rc = open_indices(dict, p, size, n, &r, enc, err);
    if (rc != PA_OK)
        return rc;
    uint32_t idx[CHUNK];
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = kn__rle_get(&r, idx, c, err)) != PA_OK)
            return rc;
        for (size_t k = 0; k < c; k++) {
            if (idx[k] >= dict->n)
                return KN__CORRUPT(err, enc, "index %u outside the %llu-entry dictionary", idx[k],
                                   (unsigned long long)dict->n);
            total += (uint64_t)(dict->offsets[idx[k] + 1] - dict->offsets[idx[k]]);
        }
    }
    *bytes = total;
    return PA_OK;
}

int kn__bool_rle_decode(const uint8_t *p, size_t size, uint64_t n, kn_out *out, uint64_t at,
                        size_t *consumed, pa_err *err)
{
    const char *enc = "RLE (BOOLEAN)";
    if (size < 4)
        return KN__CORRUPT(err, enc, "4-byte length prefix missing");
    uint32_t len = kn__ld32(p);
    if (len > size - 4)
        return KN__CORRUPT(err, enc, "length %u runs past the page end (%zu bytes)", len, size - 4);
    kn__rle r;
    kn__rle_init(&r, p + 4, len, 1, enc);
    uint32_t v[CHUNK];
    uint8_t *o = (uint8_t *)out->values + at;
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        int rc = kn__rle_get(&r, v, c, err);
        if (rc != PA_OK)
            return rc;
        for (size_t k = 0; k < c; k++)
            o[i + k] = (uint8_t)v[k];
    }
    if (consumed)
        *consumed = 4 + (size_t)len;
    return PA_OK;
}

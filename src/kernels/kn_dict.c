/*
 * kn_dict.c - dictionary encodings: gathering values of a decoded dictionary
 * by RLE/bit-packed indices (PLAIN_DICTIONARY / RLE_DICTIONARY data pages),
 * RLE-encoded BOOLEAN values, and the writer's dictionary builder (an
 * open-addressing hash table in caller-provided scratch).
 */
#include "kernels/kernels_int.h"

#define CHUNK 1024

/* Copy len bytes from s to d. Short strings are copied as one or two
 * 16-byte blocks when both sides have room for the whole block: the bytes
 * written past d + len are overwritten by the strings that follow (callers
 * copy in increasing order and pass dlim = the end of what this batch writes),
 * and nothing past slim is read. One fixed-size move instead of a libc call
 * per string. (Same helper in kn_plain.c.) */
static inline void copy_str(uint8_t *d, const uint8_t *dlim, const uint8_t *s, const uint8_t *slim, size_t len)
{
    if (len <= 16 && dlim - d >= 16 && slim - s >= 16) {
        memcpy(d, s, 16);
    } else if (len <= 32 && dlim - d >= 32 && slim - s >= 32) {
        memcpy(d, s, 32);
    } else {
        memcpy(d, s, len);
    }
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
        copy_str(ob + off[k], olim, db + s, dlim, (size_t)(doff[idx[k] + 1] - s));
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
    int width = ci->out_width;
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = kn__rle_get(&r, idx, c, err)) != PA_OK)
            return rc;
        uint32_t top = c == CHUNK ? max_chunk(idx) : 0;   /* then the exact index if bad */
        for (size_t k = c == CHUNK ? c : 0; k < c; k++)
            top = idx[k] > top ? idx[k] : top;
        if (top >= dn)
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

/* ------------------------------------------------------- dictionary build */

static size_t table_slots(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

size_t kn_dict_build_scratch(size_t n) { return table_slots(n) * sizeof(uint32_t); }

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_bytes(const uint8_t *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        h = (h ^ kn__ld64(s + i)) * 0x100000001b3ull + (h >> 29);
    uint64_t t = 0;
    memcpy(&t, s + i, len - i);
    return mix64(h ^ t);
}

/* The key bytes of input row r. */
static const uint8_t *key_of(const kn__colinfo *ci, const kn_values *in, uint64_t r, size_t *len)
{
    if (ci->is_string) {
        *len = (size_t)(in->offsets[r + 1] - in->offsets[r]);
        return in->bytes + in->offsets[r];
    }
    *len = (size_t)ci->out_width;
    return (const uint8_t *)in->values + r * (uint64_t)ci->out_width;
}

/* PLAIN bytes one dictionary entry costs (BYTE_ARRAY decimals: an upper bound). */
static uint64_t plain_cost(const kn__colinfo *ci, size_t keylen)
{
    switch (ci->conv) {
    case KN__CV_BA_STR: return 4 + keylen;
    case KN__CV_BA_DEC: return 4 + 8;
    case KN__CV_BOOL: return 1;
    default: return (uint64_t)ci->phys_width;
    }
}

int kn_dict_build(const kn_column *col, const kn_values *in, const uint32_t *sel, size_t n,
                  const kn_dict_limits *lim, void *scratch, size_t scratch_size,
                  uint32_t *entry_rows, uint32_t *indices, kn_dict_result *res, pa_err *err)
{
    kn__colinfo ci;
    int rc = kn__colinfo_get(col, &ci, err);
    if (rc != PA_OK)
        return rc;
    memset(res, 0, sizeof *res);
    size_t slots = table_slots(n);
    if (scratch_size < slots * sizeof(uint32_t))
        return pa_error(err, PA_EINVAL, "dictionary build: scratch of %zu bytes, need %zu",
                        scratch_size, slots * sizeof(uint32_t));
    if (n > UINT32_MAX - 1)
        return pa_error(err, PA_EINVAL, "dictionary build: too many values (%zu)", n);
    uint32_t *table = scratch;   /* entry + 1, 0 = empty */
    memset(table, 0, slots * sizeof *table);
    uint64_t max_entries = lim && lim->max_entries ? lim->max_entries : UINT32_MAX;
    uint64_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : UINT64_MAX;
    uint32_t ne = 0;
    uint64_t bytes = 0;
    size_t mask = slots - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = sel ? sel[i] : i;
        size_t len;
        const uint8_t *key = key_of(&ci, in, r, &len);
        size_t h = (size_t)hash_bytes(key, len) & mask;
        for (;;) {
            uint32_t e = table[h];
            if (e == 0) {
                uint64_t cost = plain_cost(&ci, len);
                if (ne + 1ull > max_entries || bytes + cost > max_bytes) {
                    res->too_large = true;
                    res->n_entries = ne;
                    res->plain_bytes = bytes;
                    return PA_OK;
                }
                entry_rows[ne] = (uint32_t)r;
                table[h] = ++ne;
                bytes += cost;
                indices[i] = ne - 1;
                break;
            }
            size_t elen;
            const uint8_t *ekey = key_of(&ci, in, entry_rows[e - 1], &elen);
            if (elen == len && memcmp(ekey, key, len) == 0) {
                indices[i] = e - 1;
                break;
            }
            h = (h + 1) & mask;
        }
    }
    if (ci.conv == KN__CV_BOOL)
        bytes = (ne + 7) / 8;
    res->n_entries = ne;
    res->plain_bytes = bytes;
    return PA_OK;
}

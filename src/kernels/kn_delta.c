/*
 * kn_delta.c - DELTA_BINARY_PACKED (Encodings.md "= 5"): the stream reader
 * (also used for the lengths of the two delta string encodings), the INT32 /
 * INT64 value decoder and the encoder (block 128, 4 miniblocks of 32).
 */
#include "kernels/kernels_int.h"

/* Blocks larger than this are refused as corrupt (the spec has no limit;
 * writers use 128 or 256, and the cap keeps the arithmetic far from overflow). */
#define KN__DBP_MAX_BLOCK (1u << 20)

int kn__dbp_init(kn__dbp *d, const uint8_t *p, size_t size, int bits, const char *what,
                 pa_err *err)
{
    memset(d, 0, sizeof *d);
    d->p = p;
    d->end = size ? p + size : p;
    d->what = what;
    d->bits = bits;
    d->mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t first;
    if (!kn__uleb(&d->p, d->end, &d->block_size) || !kn__uleb(&d->p, d->end, &d->n_mb) ||
        !kn__uleb(&d->p, d->end, &d->total) || !kn__uleb(&d->p, d->end, &first))
        return KN__CORRUPT(err, what, "header truncated");
    if (d->block_size == 0 || d->block_size % 128 || d->block_size > KN__DBP_MAX_BLOCK)
        return KN__CORRUPT(err, what, "block size %llu is not a multiple of 128",
                           (unsigned long long)d->block_size);
    if (d->n_mb == 0 || d->block_size % d->n_mb || (d->block_size / d->n_mb) % 32)
        return KN__CORRUPT(err, what, "%llu miniblocks do not split a block of %llu into multiples of 32",
                           (unsigned long long)d->n_mb, (unsigned long long)d->block_size);
    d->mb_size = d->block_size / d->n_mb;
    d->first = (uint64_t)kn__zigzag_dec(first) & d->mask;
    return PA_OK;
}

/* Decode the next (up to) 32 values into d->buf. */
static int dbp_refill(kn__dbp *d, pa_err *err)
{
    d->buf_pos = 0;
    if (d->produced == 0) {
        d->buf[0] = d->last = d->first;
        d->buf_len = 1;
        d->produced = 1;
        return PA_OK;
    }
    uint64_t remaining = d->total - d->produced;
    if (d->mb_left == 0) {
        if (d->blk_left == 0) {
            uint64_t md;
            if (!kn__uleb(&d->p, d->end, &md))
                return KN__CORRUPT(err, d->what, "block header truncated");
            d->min_delta = (uint64_t)kn__zigzag_dec(md) & d->mask;
            if ((uint64_t)(d->end - d->p) < d->n_mb)
                return KN__CORRUPT(err, d->what, "miniblock bit widths truncated");
            d->widths = d->p;
            d->p += d->n_mb;
            d->mb = 0;
            d->blk_left = remaining < d->block_size ? remaining : d->block_size;
        }
        /* Writers that take the deltas of INT32 values in 64 bits (DuckDB
         * with PARQUET_VERSION v2, as the spec describes) need 33 bits for
         * full-range deltas: from -(2^32-1) to 2^32-1 the relative deltas
         * reach 2^33-2. The sums are taken modulo 2^bits, so those decode
         * exactly; wider is corrupt. */
        int w = d->widths[d->mb++], max_w = d->bits == 32 ? 33 : 64;
        if (w > max_w)
            return KN__CORRUPT(err, d->what, "miniblock bit width %d exceeds %d", w, max_w);
        d->mb_w = w;
        d->mb_left = d->blk_left < d->mb_size ? d->blk_left : d->mb_size;
        uint64_t full = d->mb_size * (uint64_t)w / 8;
        uint64_t needed = (d->mb_left * (uint64_t)w + 7) / 8;
        uint64_t avail = (uint64_t)(d->end - d->p);
        if (avail < needed)
            return KN__CORRUPT(err, d->what, "miniblock truncated (%llu of %llu bytes)",
                               (unsigned long long)avail, (unsigned long long)needed);
        d->mb_data = d->p;
        d->p += full < avail ? full : avail;   /* a padded last miniblock may be cut short */
        d->mb_end = d->p;
    }
    int c = d->mb_left < 32 ? (int)d->mb_left : 32;
    uint64_t rel[32];
    kn__unpack64(d->mb_data, (size_t)(d->mb_end - d->mb_data), d->mb_w, rel, (size_t)c);
    size_t adv = 4 * (size_t)d->mb_w;   /* 32 values of w bits */
    d->mb_data = (size_t)(d->mb_end - d->mb_data) < adv ? d->mb_end : d->mb_data + adv;
    uint64_t last = d->last, md = d->min_delta, mask = d->mask;
    for (int k = 0; k < c; k++) {
        last = (last + md + rel[k]) & mask;
        d->buf[k] = last;
    }
    d->last = last;
    d->buf_len = c;
    d->mb_left -= (uint64_t)c;
    d->blk_left -= (uint64_t)c;
    d->produced += (uint64_t)c;
    return PA_OK;
}

int kn__dbp_get(kn__dbp *d, uint64_t *out, size_t n, pa_err *err)
{
    while (n > 0) {
        if (d->buf_pos == d->buf_len) {
            if (d->produced >= d->total)
                return KN__CORRUPT(err, d->what, "stream holds %llu values, more were expected",
                                   (unsigned long long)d->total);
            int rc = dbp_refill(d, err);
            if (rc != PA_OK)
                return rc;
        }
        size_t c = (size_t)(d->buf_len - d->buf_pos);
        if (c > n)
            c = n;
        memcpy(out, d->buf + d->buf_pos, c * sizeof *out);
        d->buf_pos += (int)c;
        out += c;
        n -= c;
    }
    return PA_OK;
}

int kn__dbp_skip_rest(kn__dbp *d, pa_err *err)
{
    uint64_t tmp[64];
    for (;;) {
        uint64_t left = d->total - d->produced + (uint64_t)(d->buf_len - d->buf_pos);
        if (left == 0)
            return PA_OK;
        int rc = kn__dbp_get(d, tmp, left < 64 ? (size_t)left : 64, err);
        if (rc != PA_OK)
            return rc;
    }
}

const uint8_t *kn__dbp_stream_end(const kn__dbp *d) { return d->p; }

int kn__delta_decode(const kn__colinfo *ci, const uint8_t *p, size_t size, uint64_t n,
                     kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    const char *enc = "DELTA_BINARY_PACKED";
    if (ci->conv != KN__CV_I32 && ci->conv != KN__CV_I32_I64 && ci->conv != KN__CV_I64)
        return pa_error(err, PA_EUNSUPPORTED, "%s is defined for INT32 and INT64 only", enc);
    int rc = kn__check_out(ci, out, at, n, enc, err);
    if (rc != PA_OK)
        return rc;
    kn__dbp d;
    if ((rc = kn__dbp_init(&d, p, size, ci->conv == KN__CV_I64 ? 64 : 32, enc, err)) != PA_OK)
        return rc;
    if (d.total < n)
        return KN__CORRUPT(err, enc, "stream holds %llu values, page needs %llu",
                           (unsigned long long)d.total, (unsigned long long)n);
    uint64_t tmp[256];
    for (uint64_t i = 0; i < n; i += 256) {
        size_t c = n - i < 256 ? (size_t)(n - i) : 256;
        if ((rc = kn__dbp_get(&d, tmp, c, err)) != PA_OK)
            return rc;
        if (ci->conv == KN__CV_I32) {
            int32_t *o = (int32_t *)out->values + at + i;
            for (size_t k = 0; k < c; k++)
                o[k] = (int32_t)(uint32_t)tmp[k];
        } else if (ci->conv == KN__CV_I32_I64) {
            int64_t *o = (int64_t *)out->values + at + i;
            for (size_t k = 0; k < c; k++)
                o[k] = (int32_t)(uint32_t)tmp[k];
        } else {
            memcpy((int64_t *)out->values + at + i, tmp, c * sizeof *tmp);
        }
    }
    if (consumed) {
        if ((rc = kn__dbp_skip_rest(&d, err)) != PA_OK)
            return rc;
        *consumed = (size_t)(kn__dbp_stream_end(&d) - p);
    }
    return PA_OK;
}

/* ---------------------------------------------------------------- encoder */

#define KN__DBP_BLOCK 128
#define KN__DBP_MB 4
#define KN__DBP_MBSIZE (KN__DBP_BLOCK / KN__DBP_MB)

size_t kn__dbp_bound(size_t n, int bits)
{
    size_t blocks = n > 1 ? (n - 2) / KN__DBP_BLOCK + 1 : 0;
    return 32 + blocks * (10 + KN__DBP_MB + (size_t)KN__DBP_BLOCK * (size_t)bits / 8);
}

int kn__dbp_encode(kn__getter get, const void *ctx, size_t n, int bits, uint8_t *dst, size_t cap,
                   size_t *out_size, pa_err *err)
{
    if (cap < kn__dbp_bound(n, bits))
        return pa_error(err, PA_EINVAL, "DELTA_BINARY_PACKED encoder: capacity %zu below the bound %zu",
                        cap, kn__dbp_bound(n, bits));
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    size_t o = 0;
    o += kn__uleb_put(dst + o, KN__DBP_BLOCK);
    o += kn__uleb_put(dst + o, KN__DBP_MB);
    o += kn__uleb_put(dst + o, n);
    int64_t prev = n ? get(ctx, 0) : 0;
    o += kn__uleb_put(dst + o, kn__zigzag_enc(prev));
    uint64_t rel[KN__DBP_BLOCK];
    for (size_t i = 1; i < n; i += KN__DBP_BLOCK) {
        size_t c = n - i < KN__DBP_BLOCK ? n - i : KN__DBP_BLOCK;
        /* Deltas wrap at `bits`; min and relative deltas are taken in that width. */
        int64_t mind = INT64_MAX;
        int64_t d[KN__DBP_BLOCK];
        for (size_t k = 0; k < c; k++) {
            int64_t v = get(ctx, i + k);
            uint64_t u = ((uint64_t)v - (uint64_t)prev) & mask;
            d[k] = bits == 64 ? (int64_t)u : (int64_t)(int32_t)(uint32_t)u;
            if (d[k] < mind)
                mind = d[k];
            prev = v;
        }
        o += kn__uleb_put(dst + o, kn__zigzag_enc(mind));
        uint8_t *widths = dst + o;
        o += KN__DBP_MB;
        for (int m = 0; m < KN__DBP_MB; m++) {
            size_t s = (size_t)m * KN__DBP_MBSIZE;
            if (s >= c) {
                widths[m] = 0;
                continue;
            }
            uint64_t maxrel = 0;
            for (size_t k = 0; k < KN__DBP_MBSIZE; k++) {
                rel[s + k] = s + k < c ? ((uint64_t)d[s + k] - (uint64_t)mind) & mask : 0;
                if (rel[s + k] > maxrel)
                    maxrel = rel[s + k];
            }
            int w = kn__bits64(maxrel);
            widths[m] = (uint8_t)w;
            o += kn__pack64(rel + s, KN__DBP_MBSIZE, w, dst + o);
        }
    }
    *out_size = o;
    return PA_OK;
}

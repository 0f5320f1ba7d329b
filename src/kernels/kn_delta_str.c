/*
 * kn_delta_str.c - DELTA_LENGTH_BYTE_ARRAY ("= 6": all lengths as one
 * DELTA_BINARY_PACKED stream, then the bytes) and DELTA_BYTE_ARRAY ("= 7":
 * prefix lengths, then the suffixes as DELTA_LENGTH_BYTE_ARRAY). Lengths are
 * read twice (once to find where the next section starts, once to use them)
 * so no scratch memory is needed.
 */
#include "kernels/kernels_int.h"

#define CHUNK 256

/* Open the lengths stream at p and find where it ends. */
static int open_lengths(kn__dbp *d, const uint8_t *p, size_t size, uint64_t n, const char *what,
                        const uint8_t **after, pa_err *err)
{
    int rc = kn__dbp_init(d, p, size, 32, what, err);
    if (rc != PA_OK)
        return rc;
    if (d->total < n)
        return KN__CORRUPT(err, what, "stream holds %llu values, page needs %llu",
                           (unsigned long long)d->total, (unsigned long long)n);
    if ((rc = kn__dbp_skip_rest(d, err)) != PA_OK)
        return rc;
    *after = kn__dbp_stream_end(d);
    return kn__dbp_init(d, p, size, 32, what, err);
}

static int get_lengths(kn__dbp *d, uint64_t *len, size_t c, const char *what, pa_err *err)
{
    int rc = kn__dbp_get(d, len, c, err);
    if (rc != PA_OK)
        return rc;
    for (size_t k = 0; k < c; k++)
        if ((int32_t)(uint32_t)len[k] < 0)
            return KN__CORRUPT(err, what, "negative length %d", (int32_t)(uint32_t)len[k]);
    return PA_OK;
}

static bool is_varlen(const kn__colinfo *ci)
{
    return ci->conv == KN__CV_BA_STR || ci->conv == KN__CV_FLBA_STR || ci->conv == KN__CV_BA_DEC ||
           ci->conv == KN__CV_FLBA_DEC;
}

/* Store one value of the string family (fixed length checked for FLBA). */
static int put_value(const kn__colinfo *ci, kn_out *out, uint64_t slot, const uint8_t *s,
                     uint64_t len, const char *enc, pa_err *err)
{
    if ((ci->conv == KN__CV_FLBA_STR || ci->conv == KN__CV_FLBA_DEC) && len != (uint64_t)ci->phys_width)
        return KN__CORRUPT(err, enc, "value of %llu bytes in a FIXED_LEN_BYTE_ARRAY(%d) column",
                           (unsigned long long)len, ci->phys_width);
    if (ci->is_string)
        return kn__put_string(out, slot, s, len, err);
    if (!kn__be_to_dec(s, (size_t)len, (uint8_t *)out->values + slot * (uint64_t)ci->out_width, ci->out_width))
        return KN__CORRUPT(err, enc, "decimal value does not fit in %d bits", 8 * ci->out_width);
    return PA_OK;
}

int kn__dlba_decode(const kn__colinfo *ci, const uint8_t *p, size_t size, uint64_t n,
                    kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    const char *enc = "DELTA_LENGTH_BYTE_ARRAY";
    if (!is_varlen(ci))
        return pa_error(err, PA_EUNSUPPORTED, "%s is defined for byte arrays only", enc);
    int rc = kn__check_out(ci, out, at, n, enc, err);
    if (rc != PA_OK)
        return rc;
    kn__dbp d;
    const uint8_t *bytes;
    if ((rc = open_lengths(&d, p, size, n, enc, &bytes, err)) != PA_OK)
        return rc;
    const uint8_t *end = p + size;
    uint64_t len[CHUNK];
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = get_lengths(&d, len, c, enc, err)) != PA_OK)
            return rc;
        for (size_t k = 0; k < c; k++) {
            if (len[k] > (uint64_t)(end - bytes))
                return KN__CORRUPT(err, enc, "value %llu runs past the page end",
                                   (unsigned long long)(i + k));
            if ((rc = put_value(ci, out, at + i + k, bytes, len[k], enc, err)) != PA_OK)
                return rc;
            bytes += len[k];
        }
    }
    if (consumed) {
        /* Lengths of values past n (if any) still own bytes. */
        while (d.produced < d.total || d.buf_pos < d.buf_len) {
            if ((rc = get_lengths(&d, len, 1, enc, err)) != PA_OK)
                return rc;
            if (len[0] > (uint64_t)(end - bytes))
                return KN__CORRUPT(err, enc, "value runs past the page end");
            bytes += len[0];
        }
        *consumed = (size_t)(bytes - p);
    }
    return PA_OK;
}

int kn__dlba_measure(const uint8_t *p, size_t size, uint64_t n, uint64_t *bytes_out, pa_err *err)
{
    const char *enc = "DELTA_LENGTH_BYTE_ARRAY";
    kn__dbp d;
    const uint8_t *bytes;
    int rc = open_lengths(&d, p, size, n, enc, &bytes, err);
    if (rc != PA_OK)
        return rc;
    uint64_t len[CHUNK], total = 0, avail = (uint64_t)(p + size - bytes);
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = get_lengths(&d, len, c, enc, err)) != PA_OK)
            return rc;
        for (size_t k = 0; k < c; k++)
            total += len[k];
        if (total > avail)
            return KN__CORRUPT(err, enc, "values run past the page end");
    }
    *bytes_out = total;
    return PA_OK;
}

/* The three sections of a DELTA_BYTE_ARRAY stream. */
typedef struct dba {
    kn__dbp prefix, suffix;
    const uint8_t *bytes, *end;
} dba;

static int dba_open(dba *s, const uint8_t *p, size_t size, uint64_t n, const char *enc, pa_err *err)
{
    const uint8_t *sfx;
    int rc = open_lengths(&s->prefix, p, size, n, enc, &sfx, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = open_lengths(&s->suffix, sfx, (size_t)(p + size - sfx), n, enc, &s->bytes, err)) != PA_OK)
        return rc;
    s->end = p + size;
    return PA_OK;
}

int kn__dba_decode(const kn__colinfo *ci, const uint8_t *p, size_t size, uint64_t n,
                   kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    const char *enc = "DELTA_BYTE_ARRAY";
    if (!is_varlen(ci))
        return pa_error(err, PA_EUNSUPPORTED, "%s is defined for byte arrays only", enc);
    int rc = kn__check_out(ci, out, at, n, enc, err);
    if (rc != PA_OK)
        return rc;
    dba s;
    if ((rc = dba_open(&s, p, size, n, enc, err)) != PA_OK)
        return rc;
    /* Decimals keep the previous value here; strings read it from the output. */
    uint8_t prev_buf[64], cur_buf[64];
    uint64_t prev_len = 0;
    const uint8_t *prev = prev_buf;
    uint64_t pl[CHUNK], sl[CHUNK];
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = get_lengths(&s.prefix, pl, c, enc, err)) != PA_OK ||
            (rc = get_lengths(&s.suffix, sl, c, enc, err)) != PA_OK)
            return rc;
        for (size_t k = 0; k < c; k++) {
            uint64_t slot = at + i + k;
            if (pl[k] > prev_len)
                return KN__CORRUPT(err, enc, "prefix length %llu longer than the previous value (%llu)",
                                   (unsigned long long)pl[k], (unsigned long long)prev_len);
            if (sl[k] > (uint64_t)(s.end - s.bytes))
                return KN__CORRUPT(err, enc, "suffix of value %llu runs past the page end",
                                   (unsigned long long)(i + k));
            uint64_t len = pl[k] + sl[k];
            if (ci->is_string) {
                /* prefix bytes sit just before this value's start in the output */
                if ((rc = kn__put_string(out, slot, prev, pl[k], err)) != PA_OK)
                    return rc;
                uint64_t start = (uint64_t)out->offsets[slot];
                out->offsets[slot] = (int32_t)(start + pl[k]);
                rc = kn__put_string(out, slot, s.bytes, sl[k], err);
                out->offsets[slot] = (int32_t)start;
                if (rc != PA_OK)
                    return rc;
                if ((ci->conv == KN__CV_FLBA_STR) && len != (uint64_t)ci->phys_width)
                    return put_value(ci, out, slot, NULL, len, enc, err);
                prev = out->bytes + start;
            } else {
                if (len > sizeof cur_buf)
                    return KN__CORRUPT(err, enc, "decimal value of %llu bytes", (unsigned long long)len);
                memcpy(cur_buf, prev, pl[k]);
                memcpy(cur_buf + pl[k], s.bytes, sl[k]);
                if ((rc = put_value(ci, out, slot, cur_buf, len, enc, err)) != PA_OK)
                    return rc;
                memcpy(prev_buf, cur_buf, len);
            }
            prev_len = len;
            s.bytes += sl[k];
        }
    }
    if (consumed) {
        uint64_t len[1];
        while (s.suffix.produced < s.suffix.total || s.suffix.buf_pos < s.suffix.buf_len) {
            if ((rc = get_lengths(&s.suffix, len, 1, enc, err)) != PA_OK)
                return rc;
            if (len[0] > (uint64_t)(s.end - s.bytes))
                return KN__CORRUPT(err, enc, "value runs past the page end");
            s.bytes += len[0];
        }
        *consumed = (size_t)(s.bytes - p);
    }
    return PA_OK;
}

int kn__dba_measure(const uint8_t *p, size_t size, uint64_t n, uint64_t *bytes_out, pa_err *err)
{
    const char *enc = "DELTA_BYTE_ARRAY";
    dba s;
    int rc = dba_open(&s, p, size, n, enc, err);
    if (rc != PA_OK)
        return rc;
    uint64_t pl[CHUNK], sl[CHUNK], total = 0, sfx = 0, prev_len = 0;
    uint64_t avail = (uint64_t)(s.end - s.bytes);
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = get_lengths(&s.prefix, pl, c, enc, err)) != PA_OK ||
            (rc = get_lengths(&s.suffix, sl, c, enc, err)) != PA_OK)
            return rc;
        for (size_t k = 0; k < c; k++) {
            if (pl[k] > prev_len)
                return KN__CORRUPT(err, enc, "prefix length %llu longer than the previous value",
                                   (unsigned long long)pl[k]);
            prev_len = pl[k] + sl[k];
            total += prev_len;
            sfx += sl[k];
        }
        if (sfx > avail)
            return KN__CORRUPT(err, enc, "suffixes run past the page end");
    }
    *bytes_out = total;
    return PA_OK;
}

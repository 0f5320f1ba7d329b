/*
 * kn_plain.c - PLAIN (Encodings.md "PLAIN = 0") and BYTE_STREAM_SPLIT
 * ("= 9") value decoders: n values, no NULLs, into output slots [at, at+n)
 * in engine representation (see kernels.h).
 */
#include "kernels/kernels_int.h"

static int short_input(pa_err *err, const char *enc, const kn_column *col, uint64_t n,
                       uint64_t need, size_t have)
{
    return KN__CORRUPT(err, enc, "%llu %s values need %llu bytes, page has %zu",
                       (unsigned long long)n, kn_ptype_name(col->ptype),
                       (unsigned long long)need, have);
}

static int i96_range(pa_err *err, const char *enc, uint64_t i)
{
    return pa_error(err, PA_EUNSUPPORTED, "%s: INT96 timestamp value %llu lies outside the TIMESTAMP_NS range "
                    "(years 1677 to 2262)", enc, (unsigned long long)i);
}

static int dec_overflow(pa_err *err, const char *enc, uint64_t i)
{
    return KN__CORRUPT(err, enc, "decimal value %llu does not fit in 64 bits",
                       (unsigned long long)i);
}

#define STR_BATCH 512

/* PLAIN BYTE_ARRAY strings: n values from p[0..size) into slots [at, at+n)
 * (offsets[at] already set), in batches: walk and check the lengths and set
 * the offsets, then copy the batch's bytes. *used gets the bytes consumed. */
static int plain_strings(const uint8_t *p, size_t size, uint64_t n, kn_out *out, uint64_t at, size_t *used,
                         pa_err *err)
{
    size_t src[STR_BATCH];
    size_t pos = 0;
    for (uint64_t i = 0; i < n; i += STR_BATCH) {
        size_t c = n - i < STR_BATCH ? (size_t)(n - i) : STR_BATCH;
        int32_t *off = out->offsets + at + i;
        uint64_t o = (uint64_t)off[0];
        for (size_t k = 0; k < c; k++) {
            if (size - pos < 4)
                return KN__CORRUPT(err, "PLAIN", "BYTE_ARRAY value %llu of %llu: length truncated",
                                   (unsigned long long)(i + k), (unsigned long long)n);
            uint32_t len = kn__ld32(p + pos);
            pos += 4;
            if (len > size - pos)
                return KN__CORRUPT(err, "PLAIN", "BYTE_ARRAY value %llu: length %u runs past the page end",
                                   (unsigned long long)(i + k), len);
            src[k] = pos;
            pos += len;
            o += len;
            off[k + 1] = (int32_t)o;   /* checked below before any byte is written */
        }
        if (o > INT32_MAX)
            return pa_error(err, PA_EUNSUPPORTED, "string data of one column chunk exceeds 2 GiB (int32 offsets)");
        if (o > out->bytes_capacity)
            return pa_error(err, PA_EINVAL, "string output capacity %llu bytes too small (need %llu)",
                            (unsigned long long)out->bytes_capacity, (unsigned long long)o);
        uint8_t *ob = out->bytes, *olim = out->bytes + o;
        for (size_t k = 0; k < c; k++)
            kn__copy_str(ob + off[k], olim, p + src[k], p + size, (size_t)(off[k + 1] - off[k]));
    }
    *used = pos;
    return PA_OK;
}

int kn__plain_decode(const kn__colinfo *ci, const kn_column *col, const uint8_t *p, size_t size,
                     uint64_t n, kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    int rc = kn__check_out(ci, out, at, n, "PLAIN", err);
    if (rc != PA_OK)
        return rc;
    /* VARCHAR outputs have no values array (offsets and bytes instead). */
    uint8_t *o = out->values ? (uint8_t *)out->values + at * (uint64_t)ci->out_width : NULL;
    uint64_t need = 0;
    switch (ci->conv) {
    case KN__CV_BOOL:
        need = (n + 7) / 8;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        for (uint64_t i = 0; i < n; i++)
            o[i] = (p[i >> 3] >> (i & 7)) & 1;
        break;
    case KN__CV_I32:
    case KN__CV_I64:
    case KN__CV_F64:
        need = n * (uint64_t)ci->phys_width;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        if (need)
            memcpy(o, p, need);
        break;
    case KN__CV_I32_I64: {
        need = 4 * n;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        int64_t *d = (int64_t *)(void *)o;
        for (uint64_t i = 0; i < n; i++)
            d[i] = (int32_t)kn__ld32(p + 4 * i);
        break;
    }
    case KN__CV_F32_F64: {
        need = 4 * n;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        double *d = (double *)(void *)o;
        for (uint64_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, p + 4 * i, 4);
            d[i] = f;
        }
        break;
    }
    case KN__CV_FLBA_DEC: {
        size_t tl = (size_t)ci->phys_width;
        need = n * tl;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        int w = ci->out_width;
        for (uint64_t i = 0; i < n; i++)
            if (!kn__be_to_dec(p + i * tl, tl, o + i * (uint64_t)w, w))
                return dec_overflow(err, "PLAIN", i);
        break;
    }
    case KN__CV_I96_NS: {
        need = 12 * n;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        int64_t *d = (int64_t *)(void *)o;
        for (uint64_t i = 0; i < n; i++)
            if (!kn__int96_ns(p + 12 * i, &d[i]))
                return i96_range(err, "PLAIN", i);
        break;
    }
    case KN__CV_FLBA_IV: {
        need = 12 * n;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        pa_interval *d = (pa_interval *)(void *)o;
        for (uint64_t i = 0; i < n; i++)
            kn__interval_load(p + 12 * i, &d[i]);
        break;
    }
    case KN__CV_FLBA_STR: {
        size_t tl = (size_t)ci->phys_width;
        need = n * tl;
        if (need > size)
            return short_input(err, "PLAIN", col, n, need, size);
        for (uint64_t i = 0; i < n; i++)
            if ((rc = kn__put_string(out, at + i, p + i * tl, tl, err)) != PA_OK)
                return rc;
        break;
    }
    case KN__CV_BA_STR: {
        size_t used = 0;
        if ((rc = plain_strings(p, size, n, out, at, &used, err)) != PA_OK)
            return rc;
        need = used;
        break;
    }
    case KN__CV_BA_DEC: {
        size_t pos = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (size - pos < 4)
                return KN__CORRUPT(err, "PLAIN", "BYTE_ARRAY value %llu of %llu: length truncated",
                                   (unsigned long long)i, (unsigned long long)n);
            uint32_t len = kn__ld32(p + pos);
            pos += 4;
            if (len > size - pos)
                return KN__CORRUPT(err, "PLAIN",
                                   "BYTE_ARRAY value %llu: length %u runs past the page end",
                                   (unsigned long long)i, len);
            if (!kn__be_to_dec(p + pos, len, o + i * (uint64_t)ci->out_width, ci->out_width))
                return dec_overflow(err, "PLAIN", i);
            pos += len;
        }
        need = pos;
        break;
    }
    }
    if (consumed)
        *consumed = (size_t)need;
    return PA_OK;
}

int kn__plain_measure(const kn__colinfo *ci, const kn_column *col, const uint8_t *p, size_t size,
                      uint64_t n, uint64_t *bytes, pa_err *err)
{
    *bytes = 0;
    if (ci->conv == KN__CV_FLBA_STR) {
        *bytes = n * (uint64_t)ci->phys_width;
        return PA_OK;
    }
    if (ci->conv != KN__CV_BA_STR)
        return PA_OK;
    size_t pos = 0;
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (size - pos < 4)
            return KN__CORRUPT(err, "PLAIN", "BYTE_ARRAY value %llu of %llu: length truncated",
                               (unsigned long long)i, (unsigned long long)n);
        uint32_t len = kn__ld32(p + pos);
        pos += 4;
        if (len > size - pos)
            return KN__CORRUPT(err, "PLAIN", "BYTE_ARRAY value %llu: length %u runs past the page end",
                               (unsigned long long)i, len);
        pos += len;
        total += len;
    }
    *bytes = total;
    return PA_OK;
}

/* ------------------------------------------------------ BYTE_STREAM_SPLIT */

int kn__bss_decode(const kn__colinfo *ci, const kn_column *col, const uint8_t *p, size_t size,
                   uint64_t n, kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    const char *enc = "BYTE_STREAM_SPLIT";
    if (ci->conv == KN__CV_BOOL || ci->conv == KN__CV_BA_STR || ci->conv == KN__CV_BA_DEC ||
        ci->conv == KN__CV_I96_NS)
        return pa_error(err, PA_EUNSUPPORTED, "%s is not defined for %s columns", enc,
                        kn_ptype_name(col->ptype));
    int rc = kn__check_out(ci, out, at, n, enc, err);
    if (rc != PA_OK)
        return rc;
    size_t k = (size_t)ci->phys_width;
    uint64_t need = n * k;
    if (need > size)
        return short_input(err, enc, col, n, need, size);
    uint8_t *o = (uint8_t *)out->values + at * (uint64_t)ci->out_width;
    if (ci->conv == KN__CV_I32 || ci->conv == KN__CV_I64 || ci->conv == KN__CV_F64) {
        /* Same width in and out: a pure byte transpose. */
        for (uint64_t i = 0; i < n; i++)
            for (size_t b = 0; b < k; b++)
                o[i * k + b] = p[b * n + i];
    } else if (ci->conv != KN__CV_FLBA_STR) {
        uint8_t v[16];   /* k <= 16 for these conversions (see kn__colinfo_get) */
        for (uint64_t i = 0; i < n; i++) {
            for (size_t b = 0; b < k; b++)
                v[b] = p[b * n + i];
            switch (ci->conv) {
            case KN__CV_I32_I64: ((int64_t *)(void *)o)[i] = (int32_t)kn__ld32(v); break;
            case KN__CV_F32_F64: {
                float f;
                memcpy(&f, v, 4);
                ((double *)(void *)o)[i] = f;
                break;
            }
            case KN__CV_FLBA_DEC:
                if (!kn__be_to_dec(v, k, o + i * (uint64_t)ci->out_width, ci->out_width))
                    return dec_overflow(err, enc, i);
                break;
            case KN__CV_FLBA_IV: kn__interval_load(v, (pa_interval *)(void *)o + i); break;
            default: break;
            }
        }
    } else {
        {
            /* Strings: value i's k bytes are gathered straight into the output. */
            for (uint64_t i = 0; i < n; i++) {
                uint64_t start = (uint64_t)out->offsets[at + i];
                if ((rc = kn__put_string(out, at + i, p, 0, err)) != PA_OK)
                    return rc;
                if (start + k > out->bytes_capacity || start + k > INT32_MAX)
                    return kn__put_string(out, at + i, p, k, err);   /* reports the error */
                for (size_t b = 0; b < k; b++)
                    out->bytes[start + b] = p[b * n + i];
                out->offsets[at + i + 1] = (int32_t)(start + k);
            }
        }
    }
    if (consumed)
        *consumed = (size_t)need;
    return PA_OK;
}

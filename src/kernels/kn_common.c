/*
 * kn_common.c - shared pieces of the Parquet kernels: enum names, column
 * classification, error helper, string output, big-endian decimals, output
 * capacity checks and the parallel loop the batch entry points use.
 */
#include "kernels/kernels_int.h"

#include <pthread.h>
#include <stdio.h>

const char *kn_ptype_name(int v)
{
    switch (v) {
#define X(name, val) case val: return #name;
    KN_PTYPE_LIST(X)
#undef X
    default: return "UNKNOWN";
    }
}

const char *kn_encoding_name(int v)
{
    switch (v) {
#define X(name, val) case val: return #name;
    KN_ENCODING_LIST(X)
#undef X
    default: return "UNKNOWN";
    }
}

const char *kn_codec_name(int v)
{
    switch (v) {
#define X(name, val) case val: return #name;
    KN_CODEC_LIST(X)
#undef X
    default: return "UNKNOWN";
    }
}

int kn__corrupt(pa_err *err, const char *enc, const char *file, int line, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pa_error_at(err, PA_ECORRUPT, file, line, "%s: %s", enc, msg);
}

static int bad_pair(const kn_column *col, pa_err *err)
{
    return pa_error(err, PA_EUNSUPPORTED, "Parquet %s column as %s is not supported",
                    kn_ptype_name(col->ptype), pa_type_name(col->type.id));
}

int kn__colinfo_get(const kn_column *col, kn__colinfo *ci, pa_err *err)
{
    memset(ci, 0, sizeof *ci);
    pa_type_id t = col->type.id;
    if (col->max_rep_level != 0)
        return pa_error(err, PA_EUNSUPPORTED, "repeated (nested) columns are not supported");
    if (col->max_def_level < 0)
        return pa_error(err, PA_EINVAL, "bad max definition level %d", col->max_def_level);
    switch (col->ptype) {
    case KN_PT_BOOLEAN:
        if (t != PA_TYPE_BOOLEAN)
            return bad_pair(col, err);
        *ci = (kn__colinfo){KN__CV_BOOL, 1, 0, false};
        break;
    case KN_PT_INT32:
        if (t == PA_TYPE_INTEGER || t == PA_TYPE_DATE)
            *ci = (kn__colinfo){KN__CV_I32, 4, 4, false};
        else if (t == PA_TYPE_BIGINT || t == PA_TYPE_TIME || (t == PA_TYPE_DECIMAL && col->type.precision <= 18))
            *ci = (kn__colinfo){KN__CV_I32_I64, 8, 4, false};   /* TIME(MILLIS): the scan scales it */
        else
            return bad_pair(col, err);
        break;
    case KN_PT_INT64:
        if (t != PA_TYPE_BIGINT && t != PA_TYPE_DECIMAL && !pa_type_is_time64(t))
            return bad_pair(col, err);
        *ci = (kn__colinfo){KN__CV_I64, 8, 8, false};
        break;
    case KN_PT_INT96:
        if (t != PA_TYPE_TIMESTAMP_NS)
            return bad_pair(col, err);
        *ci = (kn__colinfo){KN__CV_I96_NS, 8, 12, false};
        break;
    case KN_PT_FLOAT:
        if (!pa_type_is_float(t))
            return bad_pair(col, err);
        *ci = (kn__colinfo){KN__CV_F32_F64, 8, 4, false};
        break;
    case KN_PT_DOUBLE:
        if (!pa_type_is_float(t))
            return bad_pair(col, err);
        *ci = (kn__colinfo){KN__CV_F64, 8, 8, false};
        break;
    case KN_PT_BYTE_ARRAY:
        if (pa_type_is_varlen(t))
            *ci = (kn__colinfo){KN__CV_BA_STR, 0, 0, true};
        else if (t == PA_TYPE_DECIMAL)
            *ci = (kn__colinfo){KN__CV_BA_DEC, col->type.precision > 18 ? 16 : 8, 0, false};
        else
            return bad_pair(col, err);
        break;
    case KN_PT_FIXED_LEN_BYTE_ARRAY:
        if (col->type_length <= 0)
            return pa_error(err, PA_EINVAL, "FIXED_LEN_BYTE_ARRAY column with type_length %d",
                            col->type_length);
        if (pa_type_is_varlen(t))
            *ci = (kn__colinfo){KN__CV_FLBA_STR, 0, col->type_length, true};
        else if (t == PA_TYPE_DECIMAL && col->type_length <= 16)
            *ci = (kn__colinfo){KN__CV_FLBA_DEC, col->type.precision > 18 ? 16 : 8, col->type_length, false};
        else if (t == PA_TYPE_INTERVAL && col->type_length == 12)
            *ci = (kn__colinfo){KN__CV_FLBA_IV, 16, 12, false};
        else
            return bad_pair(col, err);
        break;
    default:
        return bad_pair(col, err);
    }
    return PA_OK;
}

int kn__put_string(kn_out *out, uint64_t i, const uint8_t *s, uint64_t len, pa_err *err)
{
    uint64_t start = (uint64_t)out->offsets[i];
    uint64_t end = start + len;
    if (end > INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED,
                        "string data of one column chunk exceeds 2 GiB (int32 offsets)");
    if (end > out->bytes_capacity)
        return pa_error(err, PA_EINVAL, "string output capacity %llu bytes too small (need %llu)",
                        (unsigned long long)out->bytes_capacity, (unsigned long long)end);
    if (len)
        memcpy(out->bytes + start, s, len);
    out->offsets[i + 1] = (int32_t)end;
    return PA_OK;
}

bool kn__be_to_i64(const uint8_t *p, size_t len, int64_t *out)
{
    if (len == 0) {
        *out = 0;
        return true;
    }
    /* Bytes beyond the low 8 must be the sign extension of the rest. */
    uint8_t sign = (p[0] & 0x80) ? 0xff : 0;
    size_t skip = len > 8 ? len - 8 : 0;
    for (size_t i = 0; i < skip; i++)
        if (p[i] != sign)
            return false;
    if (skip && ((p[skip] & 0x80) ? 0xff : 0) != sign)
        return false;
    uint64_t v = sign ? ~0ull : 0;
    for (size_t i = skip; i < len; i++)
        v = (v << 8) | p[i];
    *out = (int64_t)v;
    return true;
}

bool kn__be_to_dec(const uint8_t *p, size_t len, void *out, int width)
{
    if (width == 8)
        return kn__be_to_i64(p, len, (int64_t *)out);
    /* 16: bytes beyond the low 16 must be the sign extension of the rest */
    uint8_t sign = len && (p[0] & 0x80) ? 0xff : 0;
    size_t skip = len > 16 ? len - 16 : 0;
    for (size_t i = 0; i < skip; i++)
        if (p[i] != sign)
            return false;
    if (skip && ((p[skip] & 0x80) ? 0xff : 0) != sign)
        return false;
    unsigned __int128 v = sign ? ~(unsigned __int128)0 : 0;
    for (size_t i = skip; i < len; i++)
        v = (v << 8) | p[i];
    __int128 x = (__int128)v;
    memcpy(out, &x, 16);
    return true;
}

bool kn__i64_to_be(int64_t v, uint8_t *p, size_t len)
{
    uint64_t u = (uint64_t)v;
    if (len == 0)
        return v == 0;
    for (size_t i = 0; i < len; i++)
        p[len - 1 - i] = i < 8 ? (uint8_t)(u >> (8 * i)) : (v < 0 ? 0xff : 0);
    if (len >= 8)
        return true;
    /* Fits iff sign-extending the low len bytes gives v back. */
    int sh = 64 - 8 * (int)len;
    return (int64_t)(u << sh) >> sh == v;
}

int kn__check_out(const kn__colinfo *ci, const kn_out *out, uint64_t at, uint64_t n,
                  const char *enc, pa_err *err)
{
    if (n > INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "%s: %llu values in one page exceed 2^31-1", enc,
                        (unsigned long long)n);
    if (at > out->capacity || n > out->capacity - at)
        return pa_error(err, PA_EINVAL, "%s: output capacity %llu rows, need slots %llu..%llu",
                        enc, (unsigned long long)out->capacity, (unsigned long long)at,
                        (unsigned long long)(at + n));
    if (ci->is_string ? (!out->offsets || (!out->bytes && out->bytes_capacity)) : !out->values)
        return pa_error(err, PA_EINVAL, "%s: output buffers missing", enc);
    if (ci->is_string && (out->offsets[at] < 0 || (uint64_t)out->offsets[at] > out->bytes_capacity))
        return pa_error(err, PA_EINVAL, "%s: start offset %d outside the %llu-byte string buffer",
                        enc, out->offsets[at], (unsigned long long)out->bytes_capacity);
    return PA_OK;
}

int64_t kn__load_int(const kn__colinfo *ci, const kn_values *in, uint64_t r)
{
    if (ci->out_width == 4) {
        int32_t v;
        memcpy(&v, (const uint8_t *)in->values + 4 * r, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, (const uint8_t *)in->values + 8 * r, 8);
    return v;
}


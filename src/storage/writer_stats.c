/*
 * writer_stats.c - column statistics for the Parquet writer: min, max and
 * NULL counts of pages and column chunks in the type order of the spec
 * (signed integers, IEEE doubles without NaN, unsigned bytes for strings),
 * and their PLAIN encoding with string truncation for ColumnIndex and
 * ColumnMetaData.statistics.
 */
#include "storage/writer_int.h"
#include "kernels/kn_text.h"

#include <math.h>
#include <string.h>

void wr__stats_init(wr_stats *s)
{
    memset(s, 0, sizeof *s);
}

static int bytes_cmp(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    uint32_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static void add_int(wr_stats *s, int64_t v)
{
    if (!s->has) {
        s->imin = s->imax = v;
        s->has = true;
        return;
    }
    if (v < s->imin)
        s->imin = v;
    if (v > s->imax)
        s->imax = v;
}

static void add_wide(wr_stats *s, __int128 v)
{
    if (!s->has) {
        s->wmin = s->wmax = v;
        s->has = true;
        return;
    }
    if (v < s->wmin)
        s->wmin = v;
    if (v > s->wmax)
        s->wmax = v;
}

static void add_double(wr_stats *s, double v)
{
    if (isnan(v))
        return;   /* NaN has no place in the order (spec: never a bound) */
    if (!s->has) {
        s->dmin = s->dmax = v;
        s->has = true;
        return;
    }
    if (v < s->dmin || (v == 0 && s->dmin == 0 && signbit(v)))
        s->dmin = v;
    if (v > s->dmax || (v == 0 && s->dmax == 0 && !signbit(v)))
        s->dmax = v;
}

static void add_string(wr_stats *s, const uint8_t *p, uint32_t len)
{
    if (!s->has) {
        s->smin = s->smax = p;
        s->smin_len = s->smax_len = len;
        s->has = true;
        return;
    }
    if (bytes_cmp(p, len, s->smin, s->smin_len) < 0) {
        s->smin = p;
        s->smin_len = len;
    }
    if (bytes_cmp(p, len, s->smax, s->smax_len) > 0) {
        s->smax = p;
        s->smax_len = len;
    }
}

void wr__stats_add(const wr_col *c, const uint32_t *sel, size_t s0, size_t s1, wr_stats *s)
{
    s->values += (int64_t)(s1 - s0);
    for (size_t k = s0; k < s1; k++) {
        size_t r = sel ? sel[k] : k;
        switch (c->type.id) {
        case PA_TYPE_BOOLEAN: add_int(s, c->values[r] != 0); break;
        case PA_TYPE_INTEGER:
        case PA_TYPE_DATE: add_int(s, ((const int32_t *)c->values)[r]); break;
        case PA_TYPE_BIGINT:
        case PA_TYPE_TIMESTAMP:
        case PA_TYPE_TIMESTAMPTZ:
        case PA_TYPE_TIMESTAMP_NS:
        case PA_TYPE_TIME: add_int(s, ((const int64_t *)c->values)[r]); break;
        case PA_TYPE_DECIMAL:
            if (c->type.precision > 18) {
                __int128 w;
                memcpy(&w, c->values + 16 * r, 16);
                add_wide(s, w);
            } else
                add_int(s, ((const int64_t *)c->values)[r]);
            break;
        case PA_TYPE_DOUBLE:
        case PA_TYPE_REAL: add_double(s, ((const double *)c->values)[r]); break;
        case PA_TYPE_VARCHAR:
        case PA_TYPE_BYTEA:
        case PA_TYPE_UUID:
            add_string(s, c->bytes + c->offsets[r], (uint32_t)(c->offsets[r + 1] - c->offsets[r]));
            break;
        default: break;   /* INTERVAL: no statistics (its order is undefined) */
        }
    }
}

void wr__stats_merge(wr_stats *into, const wr_stats *s)
{
    into->nulls += s->nulls;
    into->values += s->values;
    if (!s->has)
        return;
    if (!into->has) {
        int64_t nulls = into->nulls, values = into->values;
        *into = *s;
        into->nulls = nulls;
        into->values = values;
        return;
    }
    add_int(into, s->imin);
    add_int(into, s->imax);
    add_wide(into, s->wmin);
    add_wide(into, s->wmax);
    add_double(into, s->dmin);
    add_double(into, s->dmax);
    add_string(into, s->smin, s->smin_len);
    add_string(into, s->smax, s->smax_len);
}

/* Bytes of the UTF-8 character starting with lead byte b; 0 if b is not a lead. */
static int utf8_len(uint8_t b)
{
    if (b < 0x80)
        return 1;
    if ((b & 0xE0) == 0xC0)
        return b >= 0xC2 ? 2 : 0;
    if ((b & 0xF0) == 0xE0)
        return 3;
    if ((b & 0xF8) == 0xF0)
        return b <= 0xF4 ? 4 : 0;
    return 0;
}

/* Longest prefix of p[0..len) of at most `limit` bytes that does not split
 * a UTF-8 character (continuation bytes are never a cut point). */
static uint32_t cut_point(const uint8_t *p, uint32_t len, uint32_t limit)
{
    if (len <= limit)
        return len;
    uint32_t cut = limit;
    while (cut > 0 && (p[cut] & 0xC0) == 0x80)
        cut--;
    return cut;
}

/* Round the prefix o[0..*len) up to the smallest string greater than every
 * string that starts with it: the last character is replaced by the next
 * code point (UTF-8 order equals code point order), dropping characters
 * that have no successor; bytes that are not UTF-8 are incremented as
 * bytes. Returns false when nothing can be incremented. o has room for 4
 * more bytes. */
static bool round_up(uint8_t *o, uint32_t *len)
{
    uint32_t n = *len;
    while (n > 0) {
        uint32_t start = n - 1;
        while (start > 0 && (o[start] & 0xC0) == 0x80 && n - start < 4)
            start--;
        int cl = utf8_len(o[start]);
        if (cl >= 1 && (uint32_t)cl == n - start) {
            uint32_t cp = o[start] & (cl == 1 ? 0x7Fu : 0xFFu >> (cl + 1));
            for (uint32_t i = start + 1; i < n; i++)
                cp = (cp << 6) | (o[i] & 0x3F);
            cp++;
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xE000;   /* surrogates are not characters */
            if (cp > 0x10FFFF) {
                n = start;     /* no successor: round up the character before */
                continue;
            }
            uint8_t enc[4];
            uint32_t el = (uint32_t)kn__s_u8put(cp, (char *)enc);
            /* An overlong input sequence could encode shorter and smaller. */
            if (bytes_cmp(enc, el, o + start, n - start) > 0) {
                memcpy(o + start, enc, el);
                *len = start + el;
                return true;
            }
        }
        /* Not UTF-8: increment the last byte that can be. */
        if (o[n - 1] < 0xFF) {
            o[n - 1]++;
            *len = n;
            return true;
        }
        n--;
    }
    return false;
}

static uint32_t put_int(const wr_col *c, int64_t v, uint8_t *o)
{
    if (c->kc.ptype == KN_PT_BOOLEAN) {
        o[0] = (uint8_t)(v != 0);
        return 1;
    }
    if (c->kc.ptype == KN_PT_INT32) {
        int32_t x = (int32_t)v;
        memcpy(o, &x, 4);
        return 4;
    }
    memcpy(o, &v, 8);
    return 8;
}

bool wr__stats_bounds(const wr_col *c, const wr_stats *s, uint32_t truncate, uint8_t *min,
                      uint32_t *min_len, bool *min_exact, uint8_t *max, uint32_t *max_len,
                      bool *max_exact)
{
    if (!s->has)
        return false;
    *min_exact = *max_exact = true;
    switch (c->type.id) {
    case PA_TYPE_DOUBLE: {
        /* A zero min is written as -0.0 and a zero max as +0.0 (spec). */
        double lo = s->dmin == 0 ? -0.0 : s->dmin, hi = s->dmax == 0 ? 0.0 : s->dmax;
        memcpy(min, &lo, 8);
        memcpy(max, &hi, 8);
        *min_len = *max_len = 8;
        return true;
    }
    case PA_TYPE_REAL: {   /* FLOAT: the same values in 4 bytes (exact: they are floats) */
        float lo = s->dmin == 0 ? -0.0f : (float)s->dmin, hi = s->dmax == 0 ? 0.0f : (float)s->dmax;
        memcpy(min, &lo, 4);
        memcpy(max, &hi, 4);
        *min_len = *max_len = 4;
        return true;
    }
    case PA_TYPE_VARCHAR:
    case PA_TYPE_BYTEA:
    case PA_TYPE_UUID: {
        if (c->type.id == PA_TYPE_UUID && truncate < PA_UUID_BYTES)   /* FIXED_LEN_BYTE_ARRAY(16): never cut */
            truncate = PA_UUID_BYTES;
        uint32_t n = cut_point(s->smin, s->smin_len, truncate);
        memcpy(min, s->smin, n);
        *min_len = n;
        *min_exact = n == s->smin_len;
        n = cut_point(s->smax, s->smax_len, truncate);
        memcpy(max, s->smax, n);
        *max_len = n;
        if (n < s->smax_len) {
            *max_exact = false;
            if (!round_up(max, max_len))
                return false;
        }
        return true;
    }
    default:
        if (c->type.id == PA_TYPE_DECIMAL && c->type.precision > 18) {   /* FIXED_LEN_BYTE_ARRAY(16), big-endian */
            for (int i = 0; i < 16; i++) {
                min[i] = (uint8_t)((unsigned __int128)s->wmin >> (8 * (15 - i)));
                max[i] = (uint8_t)((unsigned __int128)s->wmax >> (8 * (15 - i)));
            }
            *min_len = *max_len = 16;
            return true;
        }
        *min_len = put_int(c, s->imin, min);
        *max_len = put_int(c, s->imax, max);
        return true;
    }
}

int wr__stats_cmp(const wr_col *c, const uint8_t *a, uint32_t alen, const uint8_t *b,
                  uint32_t blen)
{
    switch (c->kc.ptype) {
    case KN_PT_BOOLEAN: return (int)a[0] - (int)b[0];
    case KN_PT_INT32: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case KN_PT_INT64: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case KN_PT_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case KN_PT_FLOAT: {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case KN_PT_FIXED_LEN_BYTE_ARRAY:   /* DECIMAL: signed big-endian */
        if (c->type.id == PA_TYPE_DECIMAL && alen && blen && (a[0] ^ b[0]) & 0x80)
            return (a[0] & 0x80) ? -1 : 1;
        return bytes_cmp(a, alen, b, blen);
    default: return bytes_cmp(a, alen, b, blen);
    }
}

/*
 * hj_testutil.h - helpers for the hashing / hash-join tests: a fixed-seed
 * generator of key columns of every key type (duplicates from a small
 * domain, skew, NULLs), copies between host columns and device columns, and
 * the reference SQL comparison of key rows (three-valued: TRUE, FALSE or
 * NULL) that the nested-loop reference joins are built on.
 * Everything is static so each test program gets its own copy.
 */
#ifndef HJ_TESTUTIL_H
#define HJ_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "kernels/kernels.h"
#include "kconf_testutil.h"

typedef struct hj_rng { uint64_t s; } hj_rng;

static inline uint64_t hj_next(hj_rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return r->s = x;
}
static inline uint64_t hj_below(hj_rng *r, uint64_t n) { return n ? hj_next(r) % n : 0; }
static inline double hj_unit(hj_rng *r) { return (double)(hj_next(r) >> 11) / 9007199254740992.0; }

#define HJ_OK(call)                                                                    \
    do {                                                                               \
        pa_err_clear(&err);                                                            \
        int rc_ = (call);                                                              \
        if (rc_ != PA_OK) {                                                            \
            print_message("%s -> %s: %s\n", #call, pa_status_name(rc_), err.msg);     \
            fail();                                                                    \
        }                                                                              \
    } while (0)

static inline const char *hj_spec(void)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    return s && *s ? s : "cpu";
}

static inline dv_device *hj_open(uint64_t limit)
{
    dv_options o = {.spec = hj_spec(), .memory_limit = limit, .cpu_threads = 2};
    dv_device *d = NULL;
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &d, &e) != PA_OK)
        fail_msg("cannot open device %s: %s", hj_spec(), e.msg);
    pa_err_close(&e);
    return d;
}

static inline bool hj_bit(const uint8_t *v, int64_t i) { return !v || ((v[i >> 3] >> (i & 7)) & 1); }
static inline void hj_setbit(uint8_t *v, int64_t i, bool on)
{
    if (on)
        v[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        v[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

static inline pa_type hj_type(pa_type_id id, int precision, int scale)
{
    pa_type t = {.id = id, .precision = (uint8_t)precision, .scale = (uint8_t)scale};
    return t;
}

/* The string of value v: a common prefix, a length that varies with v
 * (0 to ~40 bytes, so both the 8-byte loop and the tail are exercised). */
static inline int hj_str_of(uint64_t v, char *buf)
{
    if (v == 5)
        return 0;   /* the empty string, a value like any other */
    int pad = (int)(v % 29);
    int n = snprintf(buf, 64, "key-");
    for (int i = 0; i < pad; i++)
        buf[n++] = (char)('a' + (v + (uint64_t)i) % 26);
    n += snprintf(buf + n, 24, "#%llu", (unsigned long long)v);
    return n;
}

/* Integer value of domain value v (shared by every integer-like type so an
 * INTEGER column and a BIGINT column of the same v are equal). */
static inline int64_t hj_int_of(uint64_t v) { return (int64_t)v * 37 - 1000; }

/* A host column of n rows: values v = 0 with probability skew, else
 * uniform in [0, domain); NULL with probability nulls. Free with hj_free. */
static inline pa_column hj_gen(hj_rng *r, pa_type t, int64_t n, uint64_t domain, double skew, double nulls)
{
    pa_column c = {.type = t, .length = n};
    int w = pa_type_bytes(t);
    c.data = calloc((size_t)(n ? n : 1), w ? (size_t)w : 1);
    if (nulls > 0)
        c.validity = calloc((size_t)(n + 8) / 8, 1);
    char buf[96];
    size_t cap = 64, used = 0;
    if (t.id == PA_TYPE_VARCHAR) {
        c.offsets = calloc((size_t)n + 1, sizeof(int32_t));
        c.data = realloc(c.data, cap);
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = hj_unit(r) < skew ? 0 : hj_below(r, domain);
        bool valid = !(nulls > 0 && hj_unit(r) < nulls);
        if (c.validity)
            hj_setbit(c.validity, i, valid);
        int64_t iv = hj_int_of(v);
        switch (t.id) {
        case PA_TYPE_BOOLEAN: ((uint8_t *)c.data)[i] = (uint8_t)(v & 1); break;
        case PA_TYPE_INTEGER:
        case PA_TYPE_DATE: ((int32_t *)c.data)[i] = (int32_t)iv; break;
        case PA_TYPE_BIGINT: ((int64_t *)c.data)[i] = iv; break;
        case PA_TYPE_DECIMAL:
            if (w == 8) {
                ((int64_t *)c.data)[i] = iv * 100 + (int64_t)(v % 100);
            } else {
                __int128 x = (__int128)(iv * 100 + (int64_t)(v % 100));
                if (v % 3 == 1)
                    x *= (__int128)10000000000000000000ull;   /* beyond 64 bits */
                memcpy((uint8_t *)c.data + i * 16, &x, 16);
            }
            break;
        case PA_TYPE_DOUBLE: {
            double d = v % 7 == 0 ? ((v / 7) % 2 ? -0.0 : 0.0) : v % 11 == 0 ? NAN : (double)v * 0.25;
            ((double *)c.data)[i] = d;
            break;
        }
        case PA_TYPE_VARCHAR: {
            int len = hj_str_of(v, buf);
            if (used + (size_t)len > cap) {
                cap = (cap + (size_t)len) * 2;
                c.data = realloc(c.data, cap);
            }
            memcpy((uint8_t *)c.data + used, buf, (size_t)len);
            used += (size_t)len;
            c.offsets[i + 1] = (int32_t)used;
            break;
        }
        default: break;
        }
        if (!valid && t.id != PA_TYPE_VARCHAR && v % 2 == 0)
            memset((uint8_t *)c.data + i * w, 0x5a, (size_t)w);   /* NULL slots hold garbage */
    }
    return c;
}

static inline void hj_free(pa_column *c)
{
    free(c->data);
    free(c->offsets);
    free(c->validity);
    memset(c, 0, sizeof *c);
}

static inline size_t hj_data_bytes(const pa_column *c)
{
    if (c->type.id == PA_TYPE_VARCHAR)
        return c->length ? (size_t)c->offsets[c->length] : 0;
    return (size_t)c->length * (size_t)pa_type_bytes(c->type);
}

/* ------------------------------------------------ device copies of columns */

static inline void *hj_up(dv_device *d, dv_stream *s, const void *src, size_t n)
{
    void *p = NULL;
    assert_int_equal(dv_alloc(d, n ? n : 1, &p, NULL), PA_OK);
    if (n)
        assert_int_equal(dv_copy_async(s, p, src, n, DV_COPY_H2D, NULL), PA_OK);
    return p;
}

static inline pa_column hj_col_up(dv_device *d, dv_stream *s, const pa_column *h)
{
    pa_column c = *h;
    c.data = hj_up(d, s, h->data, hj_data_bytes(h));
    c.offsets = h->offsets ? hj_up(d, s, h->offsets, ((size_t)h->length + 1) * 4) : NULL;
    c.validity = h->validity ? hj_up(d, s, h->validity, ((size_t)h->length + 7) / 8) : NULL;
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    return c;
}

static inline void hj_col_dev_free(dv_device *d, pa_column *c)
{
    dv_free(d, c->data);
    dv_free(d, c->offsets);
    dv_free(d, c->validity);
    memset(c, 0, sizeof *c);
}

/* A host copy (malloc) of n bytes of device memory; s is synchronised
 * (even for n = 0), so the work before the copy has run. */
static inline void *hj_down(dv_stream *s, const void *src, size_t n)
{
    void *h = malloc(n ? n : 1);
    if (n)
        assert_int_equal(dv_copy_async(s, h, src, n, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    return h;
}

/* ------------------------------------------------- reference comparisons */

static inline __int128 hj_int_at(const pa_column *c, int64_t r)
{
    switch (c->type.id) {
    case PA_TYPE_BOOLEAN: return ((const uint8_t *)c->data)[r];
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return ((const int32_t *)c->data)[r];
    case PA_TYPE_BIGINT: return ((const int64_t *)c->data)[r];
    default:
        if (c->type.precision <= 18)
            return ((const int64_t *)c->data)[r];
        __int128 v;
        memcpy(&v, (const uint8_t *)c->data + r * 16, 16);
        return v;
    }
}

/* SQL a[ra] = b[rb]: 1 TRUE, 0 FALSE, -1 NULL. NaN = NaN and -0.0 = 0.0
 * (DuckDB's and PostgreSQL's equality for join keys). */
static inline int hj_eq1(const pa_column *a, int64_t ra, const pa_column *b, int64_t rb)
{
    if (!hj_bit(a->validity, ra) || !hj_bit(b->validity, rb))
        return -1;
    if (a->type.id == PA_TYPE_VARCHAR) {
        int32_t la = a->offsets[ra + 1] - a->offsets[ra], lb = b->offsets[rb + 1] - b->offsets[rb];
        return la == lb && memcmp((const char *)a->data + a->offsets[ra], (const char *)b->data + b->offsets[rb],
                                  (size_t)la) == 0;
    }
    if (a->type.id == PA_TYPE_DOUBLE) {
        double x = ((const double *)a->data)[ra], y = ((const double *)b->data)[rb];
        return x == y || (isnan(x) && isnan(y));
    }
    return hj_int_at(a, ra) == hj_int_at(b, rb);
}

/* Row comparison over n key columns: FALSE if any FALSE, else NULL if any
 * NULL, else TRUE. */
static inline int hj_eq(const pa_column *a, int64_t ra, const pa_column *b, int64_t rb, int n)
{
    int res = 1;
    for (int k = 0; k < n; k++) {
        int e = hj_eq1(&a[k], ra, &b[k], rb);
        if (e == 0)
            return 0;
        if (e < 0)
            res = -1;
    }
    return res;
}

#endif /* HJ_TESTUTIL_H */

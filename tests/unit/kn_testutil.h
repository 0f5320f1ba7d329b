/*
 * kn_testutil.h - helpers for the Parquet kernel tests (test_kn_*.c): a fixed
 * seed generator, random columns in engine representation (with NULLs), page
 * building through the kn_ encoders, and row-by-row comparison of outputs.
 * Everything is static so each test program gets its own copy.
 */
#ifndef KN_TESTUTIL_H
#define KN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/kernels.h"

typedef struct rng { uint64_t s; } rng;

static inline uint64_t rng_next(rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return r->s = x;
}
static inline uint64_t rng_below(rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

/* Check a kernel call and print the error context on failure. */
#define KN_OK(call)                                                                    \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != PA_OK) {                                                            \
            print_message("%s -> %s: %s\n", #call, pa_status_name(rc_), err.msg);     \
            fail();                                                                    \
        }                                                                              \
    } while (0)

/* A test column: n rows in engine representation plus validity. */
typedef struct tcol {
    kn_column col;
    size_t n;
    void *values;        /* fixed width */
    int32_t *offsets;    /* VARCHAR */
    uint8_t *bytes;
    uint8_t *validity;   /* bit per row */
    uint32_t *sel;       /* the valid rows */
    size_t n_valid;
} tcol;

static inline kn_column kcol(int ptype, pa_type_id t, int type_length, int max_def)
{
    kn_column c;
    memset(&c, 0, sizeof c);
    c.ptype = ptype;
    c.type.id = t;
    c.type.precision = 18;
    c.type_length = type_length;
    c.max_def_level = (int16_t)max_def;
    return c;
}

static inline bool is_string_col(const kn_column *c) { return c->type.id == PA_TYPE_VARCHAR; }
static inline int out_width(const kn_column *c) { return pa_type_width(c->type.id); }

/* Random value of row i. `distinct` > 0 limits the value domain (for
 * dictionaries and runs); `extreme` mixes in min/max values. */
static inline void tcol_make(tcol *t, kn_column col, size_t n, int null_pct, uint64_t distinct,
                             rng *r)
{
    memset(t, 0, sizeof *t);
    t->col = col;
    t->n = n;
    t->validity = calloc(n / 8 + 1, 1);
    t->sel = calloc(n + 1, sizeof *t->sel);
    int w = out_width(&col);
    if (is_string_col(&col)) {
        t->offsets = calloc(n + 1, sizeof *t->offsets);
        size_t cap = 64 * (n + 1);
        t->bytes = malloc(cap);
    } else {
        t->values = calloc(n + 1, (size_t)w);
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        bool valid = col.max_def_level == 0 || (int)rng_below(r, 100) >= null_pct;
        if (valid) {
            t->validity[i / 8] |= (uint8_t)(1u << (i % 8));
            t->sel[t->n_valid++] = (uint32_t)i;
        }
        uint64_t x = rng_next(r);
        if (distinct)
            x = rng_below(r, distinct) * 0x9E3779B97F4A7C15ull;
        if (!valid) {
            if (is_string_col(&col))
                t->offsets[i + 1] = (int32_t)pos;
            continue;   /* NULL rows hold zero / empty, as the decoder writes */
        }
        switch (col.type.id) {
        case PA_TYPE_BOOLEAN: ((uint8_t *)t->values)[i] = (uint8_t)(x >> 63); break;
        case PA_TYPE_INTEGER:
        case PA_TYPE_DATE: ((int32_t *)t->values)[i] = (int32_t)(x >> 32); break;
        case PA_TYPE_BIGINT:
        case PA_TYPE_DECIMAL: {
            int64_t v = (int64_t)x;
            if (col.ptype == KN_PT_INT32)
                v = (int32_t)(x >> 32);
            else if (col.ptype == KN_PT_FIXED_LEN_BYTE_ARRAY && col.type_length < 8)
                v = (int64_t)x >> (64 - 8 * col.type_length);
            else if (col.ptype == KN_PT_BYTE_ARRAY)
                v = (int64_t)x >> (x & 63);
            ((int64_t *)t->values)[i] = v;
            break;
        }
        case PA_TYPE_DOUBLE: {
            double d = (double)(int64_t)x / 1e6;
            if (col.ptype == KN_PT_FLOAT)
                d = (float)d;
            ((double *)t->values)[i] = d;
            break;
        }
        case PA_TYPE_VARCHAR: {
            size_t len = col.ptype == KN_PT_FIXED_LEN_BYTE_ARRAY ? (size_t)col.type_length
                                                                 : (size_t)((x >> 8) % 40);
            /* Shared prefixes exercise DELTA_BYTE_ARRAY. */
            for (size_t k = 0; k < len; k++)
                t->bytes[pos + k] = (uint8_t)(k < 5 ? 'a' + (x >> (k + 20)) % 3 : 'a' + (x >> (k % 50)) % 26);
            pos += len;
            t->offsets[i + 1] = (int32_t)pos;
            break;
        }
        default: break;
        }
    }
}

static inline void tcol_free(tcol *t)
{
    free(t->values);
    free(t->offsets);
    free(t->bytes);
    free(t->validity);
    free(t->sel);
    memset(t, 0, sizeof *t);
}

static inline kn_values tcol_view(const tcol *t)
{
    kn_values v = {t->values, t->offsets, t->bytes, t->n};
    return v;
}

/* Output buffers sized for n rows and `bytes` string bytes; exact sizes so
 * ASan catches any write past them. */
typedef struct tout {
    kn_out out;
} tout;

static inline void tout_make(tout *o, const kn_column *col, size_t n, size_t bytes)
{
    memset(o, 0, sizeof *o);
    o->out.capacity = n;
    if (is_string_col(col)) {
        o->out.offsets = calloc(n + 1, sizeof(int32_t));
        o->out.bytes = malloc(bytes ? bytes : 1);
        o->out.bytes_capacity = bytes;
    } else {
        o->out.values = malloc(n * (size_t)out_width(col) + 1);
        memset(o->out.values, 0xAB, n * (size_t)out_width(col) + 1);
    }
    o->out.validity = malloc(n / 8 + 1);
    memset(o->out.validity, 0x5A, n / 8 + 1);
}

static inline void tout_free(tout *o)
{
    free(o->out.values);
    free(o->out.offsets);
    free(o->out.bytes);
    free(o->out.validity);
}

/* Compare rows [0, n) of t with out rows [at, at+n). */
static inline void expect_rows(const tcol *t, const kn_out *out, size_t at)
{
    const kn_column *c = &t->col;
    int w = out_width(c);
    for (size_t i = 0; i < t->n; i++) {
        bool tv = (t->validity[i / 8] >> (i % 8)) & 1;
        bool ov = (out->validity[(at + i) / 8] >> ((at + i) % 8)) & 1;
        if (tv != ov) {
            print_message("row %zu: validity %d, expected %d\n", i, ov, tv);
            fail();
        }
        if (is_string_col(c)) {
            int32_t ts = t->offsets[i], te = t->offsets[i + 1];
            int32_t os = out->offsets[at + i], oe = out->offsets[at + i + 1];
            if (te - ts != oe - os || memcmp(t->bytes + ts, out->bytes + os, (size_t)(te - ts)) != 0) {
                print_message("row %zu: string differs (len %d vs %d)\n", i, oe - os, te - ts);
                fail();
            }
        } else if (memcmp((const uint8_t *)t->values + i * (size_t)w,
                          (const uint8_t *)out->values + (at + i) * (size_t)w, (size_t)w) != 0) {
            print_message("row %zu: value differs\n", i);
            fail();
        }
    }
}

/* Encode t's valid values with `encoding` (PLAIN_DICTIONARY / RLE_DICTIONARY
 * build a dictionary first; its PLAIN page goes to *dict_page) and lay out a
 * data page body. Returns a malloc'ed body and its size; for v2 the level
 * bytes are at the front and *levels_size says how many. */
static inline uint8_t *build_page(const tcol *t, int encoding, int version, uint8_t **dict_page,
                                  size_t *dict_size, uint32_t *dict_n, size_t *size,
                                  uint32_t *levels_size)
{
    pa_err err;
    pa_err_init(&err);
    kn_values in = tcol_view(t);
    size_t nv = t->n_valid;
    uint8_t *vals = NULL;
    size_t vlen = 0;
    if (encoding == KN_ENC_RLE_DICTIONARY || encoding == KN_ENC_PLAIN_DICTIONARY) {
        size_t scr = kn_dict_build_scratch(nv);
        void *scratch = malloc(scr);
        uint32_t *rows = malloc((nv + 1) * 4), *idx = malloc((nv + 1) * 4);
        kn_dict_result res;
        KN_OK(kn_dict_build(&t->col, &in, t->sel, nv, NULL, scratch, scr, rows, idx, &res, &err));
        assert_false(res.too_large);
        size_t db = kn_encode_bound(KN_ENC_PLAIN, &t->col, &in, rows, res.n_entries);
        *dict_page = malloc(db + 1);
        KN_OK(kn_encode_values(KN_ENC_PLAIN, &t->col, &in, rows, res.n_entries, *dict_page, db,
                               dict_size, &err));
        *dict_n = res.n_entries;
        size_t ib = 1 + kn_rle_encode_bound(nv, kn_dict_index_width(res.n_entries));
        vals = malloc(ib);
        KN_OK(kn_encode_dict_indices(idx, nv, res.n_entries, vals, ib, &vlen, &err));
        free(scratch);
        free(rows);
        free(idx);
    } else {
        size_t b = kn_encode_bound(encoding, &t->col, &in, t->sel, nv);
        vals = malloc(b + 1);
        KN_OK(kn_encode_values(encoding, &t->col, &in, t->sel, nv, vals, b, &vlen, &err));
    }
    size_t lb = kn_rle_encode_bound(t->n, 1) + 4, llen = 0;
    uint8_t *lv = malloc(lb);
    if (t->col.max_def_level > 0)
        KN_OK(kn_encode_def_levels(t->validity, 0, t->n, version == 1, lv, lb, &llen, &err));
    uint8_t *body = malloc(llen + vlen + 1);
    memcpy(body, lv, llen);
    if (vlen)
        memcpy(body + llen, vals, vlen);
    *size = llen + vlen;
    *levels_size = (uint32_t)llen;
    free(lv);
    free(vals);
    pa_err_close(&err);
    return body;
}

#endif /* KN_TESTUTIL_H */

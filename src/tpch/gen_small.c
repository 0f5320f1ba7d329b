/*
 * gen_small.c - row generators of region, nation, supplier and customer
 * (spec clause 4.2.3). Each takes units [first, first + n), 0-based, and
 * fills a batch reserved for n rows; stream usage per row is described in
 * tpch_int.h.
 */
#include "tpch/tpch_int.h"

int tp__gen_region(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err)
{
    int rc = tp__batch_reserve(b, n, err);
    if (rc != PA_OK)
        return rc;
    static const int ids[] = {TP__S_R_CMNT};
    tp__stream s[TP__S_COUNT];
    tp__streams_at(s, ids, 1, first);
    const tp__dist *regions = &g->d[TP__D_REGIONS];
    for (int64_t r = 0; r < n; r++) {
        int64_t k = first + r;
        TP__I32(b, 0)[r] = (int32_t)k;
        tp__put_str(&b->cols[1], r, regions->words[k], regions->lens[k]);
        tp__text(g, &s[TP__S_R_CMNT], 28, 115, &b->cols[2], r);
        tp__next_unit(&s[TP__S_R_CMNT]);
    }
    b->n_rows = n;
    return PA_OK;
}

int tp__gen_nation(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err)
{
    int rc = tp__batch_reserve(b, n, err);
    if (rc != PA_OK)
        return rc;
    static const int ids[] = {TP__S_N_CMNT};
    tp__stream s[TP__S_COUNT];
    tp__streams_at(s, ids, 1, first);
    const tp__dist *nations = &g->d[TP__D_NATIONS];
    for (int64_t r = 0; r < n; r++) {
        int64_t k = first + r;
        TP__I32(b, 0)[r] = (int32_t)k;
        tp__put_str(&b->cols[1], r, nations->words[k], nations->lens[k]);
        TP__I32(b, 2)[r] = tp__nation_region[k];
        tp__text(g, &s[TP__S_N_CMNT], 28, 115, &b->cols[3], r);
        tp__next_unit(&s[TP__S_N_CMNT]);
    }
    b->n_rows = n;
    return PA_OK;
}

/* Supplier comments with "Customer ... Complaints" / "Recommends": about 10 in
 * every 10000 suppliers (spec 4.2.3, S_COMMENT; Q16 looks for them). */
#define BBB_PER_10000 10
#define BBB_BASE "Customer "
#define BBB_BASE_LEN 9
#define BBB_TYPE_LEN 10     /* "Complaints" and "Recommends" */
#define BBB_LEN 19          /* BBB_BASE_LEN + BBB_TYPE_LEN */

int tp__gen_supplier(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err)
{
    int rc = tp__batch_reserve(b, n, err);
    if (rc != PA_OK)
        return rc;
    static const int ids[] = {TP__S_S_ADDR, TP__S_S_NTRG, TP__S_S_PHNE, TP__S_S_ABAL,
                              TP__S_S_CMNT, TP__S_BBB_CMNT, TP__S_BBB_TYPE, TP__S_BBB_JNK,
                              TP__S_BBB_OFFSET};
    const int n_ids = (int)(sizeof ids / sizeof ids[0]);
    tp__stream s[TP__S_COUNT];
    tp__streams_at(s, ids, n_ids, first);
    char name[40];
    for (int64_t r = 0; r < n; r++) {
        int64_t key = first + r + 1;
        TP__I32(b, 0)[r] = (int32_t)key;
        tp__put_str(&b->cols[1], r, name, tp__fmt_key(name, "Supplier#", key, 9));
        tp__vstr(&s[TP__S_S_ADDR], 10, 40, &b->cols[2], r);
        int64_t nk = tp__unif(&s[TP__S_S_NTRG], 0, 24);
        TP__I32(b, 3)[r] = (int32_t)nk;
        tp__phone(&s[TP__S_S_PHNE], nk, &b->cols[4], r);
        TP__I64(b, 5)[r] = tp__unif(&s[TP__S_S_ABAL], -99999, 999999);
        tp_column *cc = &b->cols[6];
        tp__text(g, &s[TP__S_S_CMNT], 25, 100, cc, r);
        int64_t clen = cc->offsets[r + 1] - cc->offsets[r];
        /* dbgen draws these for every row, used or not. */
        int64_t bad = tp__unif(&s[TP__S_BBB_CMNT], 1, 10000);
        int64_t type = tp__unif(&s[TP__S_BBB_TYPE], 0, 100);
        int64_t noise = tp__unif(&s[TP__S_BBB_JNK], 0, clen - BBB_LEN);
        int64_t off = tp__unif(&s[TP__S_BBB_OFFSET], 0, clen - (BBB_LEN + noise));
        if (bad <= BBB_PER_10000) {
            char *c = cc->bytes + cc->offsets[r];
            memcpy(c + off, BBB_BASE, BBB_BASE_LEN);
            memcpy(c + off + BBB_BASE_LEN + noise, type < 50 ? "Complaints" : "Recommends",
                   BBB_TYPE_LEN);
        }
        for (int k = 0; k < n_ids; k++)
            tp__next_unit(&s[ids[k]]);
    }
    b->n_rows = n;
    return PA_OK;
}

int tp__gen_customer(const tp_gen *g, int64_t first, int64_t n, tp_batch *b, pa_err *err)
{
    int rc = tp__batch_reserve(b, n, err);
    if (rc != PA_OK)
        return rc;
    static const int ids[] = {TP__S_C_ADDR, TP__S_C_NTRG, TP__S_C_PHNE,
                              TP__S_C_ABAL, TP__S_C_MSEG, TP__S_C_CMNT};
    const int n_ids = (int)(sizeof ids / sizeof ids[0]);
    tp__stream s[TP__S_COUNT];
    tp__streams_at(s, ids, n_ids, first);
    const tp__dist *seg = &g->d[TP__D_SEGMENTS];
    char name[40];
    for (int64_t r = 0; r < n; r++) {
        int64_t key = first + r + 1;
        TP__I32(b, 0)[r] = (int32_t)key;
        tp__put_str(&b->cols[1], r, name, tp__fmt_key(name, "Customer#", key, 9));
        tp__vstr(&s[TP__S_C_ADDR], 10, 40, &b->cols[2], r);
        int64_t nk = tp__unif(&s[TP__S_C_NTRG], 0, 24);
        TP__I32(b, 3)[r] = (int32_t)nk;
        tp__phone(&s[TP__S_C_PHNE], nk, &b->cols[4], r);
        TP__I64(b, 5)[r] = tp__unif(&s[TP__S_C_ABAL], -99999, 999999);
        int m = tp__pick(seg, &s[TP__S_C_MSEG]);
        tp__put_str(&b->cols[6], r, seg->words[m], seg->lens[m]);
        tp__text(g, &s[TP__S_C_CMNT], 29, 116, &b->cols[7], r);
        for (int k = 0; k < n_ids; k++)
            tp__next_unit(&s[ids[k]]);
    }
    b->n_rows = n;
    return PA_OK;
}

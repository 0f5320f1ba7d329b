/*
 * gen_part.c - part and partsupp rows (spec clause 4.2.3). A unit is one
 * part: its part row and its 4 partsupp rows. Either table may be skipped;
 * their streams are disjoint, so skipping one does not change the other.
 */
#include "tpch/tpch_int.h"

#define SUPP_PER_PART 4

/* dbgen's retail price in cents of part key p. */
static inline int64_t retail_price(int64_t p)
{
    return 90000 + (p / 10) % 20001 + 100 * (p % 1000);
}

/* Supplier j (0..3) of part p among n_supp suppliers (spec 4.2.3, PS_SUPPKEY). */
static inline int64_t part_supplier(int64_t p, int64_t j, int64_t n_supp)
{
    return (p + j * (n_supp / SUPP_PER_PART + (p - 1) / n_supp)) % n_supp + 1;
}

static void part_row(const tp_gen *g, tp__stream *s, int64_t key, tp_batch *b, int64_t r)
{
    const tp__dist *colors = &g->d[TP__D_COLORS];
    /* p_name: 5 distinct colors, the first steps of a Fisher-Yates shuffle of
     * the 92 colors (dbgen shuffles all 92; only the first 5 are kept). */
    uint8_t perm[92];
    for (int i = 0; i < 92; i++)
        perm[i] = (uint8_t)i;
    char name[64], *d = name;
    for (int i = 0; i < 5; i++) {
        int64_t j = tp__unif(&s[TP__S_P_NAME], i, 91);
        uint8_t t = perm[j];
        perm[j] = perm[i];
        perm[i] = t;
        if (i)
            *d++ = ' ';
        memcpy(d, colors->words[t], colors->lens[t]);
        d += colors->lens[t];
    }
    TP__I32(b, 0)[r] = (int32_t)key;
    tp__put_str(&b->cols[1], r, name, (int32_t)(d - name));
    int64_t m = tp__unif(&s[TP__S_P_MFG], 1, 5);
    char buf[32];
    memcpy(buf, "Manufacturer#", 13);
    buf[13] = (char)('0' + m);
    tp__put_str(&b->cols[2], r, buf, 14);
    int64_t brand = m * 10 + tp__unif(&s[TP__S_P_BRND], 1, 5);
    memcpy(buf, "Brand#", 6);
    buf[6] = (char)('0' + brand / 10);
    buf[7] = (char)('0' + brand % 10);
    tp__put_str(&b->cols[3], r, buf, 8);
    const tp__dist *types = &g->d[TP__D_TYPES];
    int t = tp__pick(types, &s[TP__S_P_TYPE]);
    tp__put_str(&b->cols[4], r, types->words[t], types->lens[t]);
    TP__I32(b, 5)[r] = (int32_t)tp__unif(&s[TP__S_P_SIZE], 1, 50);
    const tp__dist *cont = &g->d[TP__D_CONTAINERS];
    int c = tp__pick(cont, &s[TP__S_P_CNTR]);
    tp__put_str(&b->cols[6], r, cont->words[c], cont->lens[c]);
    TP__I64(b, 7)[r] = retail_price(key);
    tp__text(g, &s[TP__S_P_CMNT], 5, 22, &b->cols[8], r);
}

static void partsupp_rows(const tp_gen *g, tp__stream *s, int64_t key, tp_batch *b, int64_t r,
                          int64_t *src)
{
    for (int j = 0; j < SUPP_PER_PART; j++, r++) {
        TP__I32(b, 0)[r] = (int32_t)key;
        TP__I32(b, 1)[r] = (int32_t)part_supplier(key, j, g->n_supp);
        TP__I32(b, 2)[r] = (int32_t)tp__unif(&s[TP__S_PS_QTY], 1, 9999);
        TP__I64(b, 3)[r] = tp__unif(&s[TP__S_PS_SCST], 100, 100000);
        tp__text_defer(&s[TP__S_PS_CMNT], 49, 198, &b->cols[4], r, src);
    }
}

int tp__gen_part(const tp_gen *g, int64_t first, int64_t n, tp_batch *part,
                 tp_batch *partsupp, pa_err *err)
{
    static const int p_ids[] = {TP__S_P_NAME, TP__S_P_MFG, TP__S_P_BRND, TP__S_P_TYPE,
                                TP__S_P_SIZE, TP__S_P_CNTR, TP__S_P_CMNT};
    static const int ps_ids[] = {TP__S_PS_QTY, TP__S_PS_SCST, TP__S_PS_CMNT};
    const int n_p = (int)(sizeof p_ids / sizeof p_ids[0]);
    const int n_ps = (int)(sizeof ps_ids / sizeof ps_ids[0]);
    int rc;
    if (part && (rc = tp__batch_reserve(part, n, err)) != PA_OK)
        return rc;
    if (partsupp && (rc = tp__batch_reserve(partsupp, n * SUPP_PER_PART, err)) != PA_OK) {
        if (part)
            part->n_rows = 0;
        return rc;
    }
    /* Pool offsets of the partsupp comments, copied after the loop. */
    int64_t *src = NULL;
    if (partsupp && !(src = pa_malloc((size_t)(n ? n : 1) * SUPP_PER_PART * sizeof(int64_t)))) {
        if (part)
            part->n_rows = 0;
        partsupp->n_rows = 0;
        return pa_error(err, PA_ENOMEM, "comment offsets of %lld parts", (long long)n);
    }
    tp__stream s[TP__S_COUNT];
    if (part)
        tp__streams_at(s, p_ids, n_p, first);
    if (partsupp)
        tp__streams_at(s, ps_ids, n_ps, first);
    for (int64_t u = 0; u < n; u++) {
        int64_t key = first + u + 1;
        if (part) {
            part_row(g, s, key, part, u);
            for (int k = 0; k < n_p; k++)
                tp__next_unit(&s[p_ids[k]]);
        }
        if (partsupp) {
            partsupp_rows(g, s, key, partsupp, u * SUPP_PER_PART, src);
            for (int k = 0; k < n_ps; k++)
                tp__next_unit(&s[ps_ids[k]]);
        }
    }
    if (part)
        part->n_rows = n;
    if (partsupp) {
        tp__text_fill(g, &partsupp->cols[4], src, n * SUPP_PER_PART);
        partsupp->n_rows = n * SUPP_PER_PART;
    }
    pa_free(src);
    return PA_OK;
}

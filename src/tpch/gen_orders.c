/*
 * gen_orders.c - orders and lineitem rows (spec clause 4.2.3). A unit is one
 * order with its 1..7 lines. The order's total price and status depend on
 * its lines, so the lines are always drawn; the lineitem streams are only
 * needed for orders' totals and are positioned either way.
 */
#include "tpch/tpch_int.h"

#define CUST_MORTALITY 3          /* every third customer has no orders */
#define ORDER_DATE_SPAN 2405      /* days: 2557 total - 121 - 30 - 1 */

/* Order key of order index i (1-based): dbgen keeps the low 3 bits and
 * leaves 2 bits of gap above them, so 8 of every 32 keys are used. */
static inline int64_t order_key(int64_t i)
{
    return ((i >> 3) << 5) | (i & 7);
}

static inline int64_t retail_price(int64_t p)
{
    return 90000 + (p / 10) % 20001 + 100 * (p % 1000);
}

static const int o_ids[] = {TP__S_O_CKEY, TP__S_O_ODATE, TP__S_O_PRIO, TP__S_O_CLRK,
                            TP__S_O_CMNT, TP__S_O_LCNT};
static const int l_ids[] = {TP__S_L_QTY,  TP__S_L_DCNT, TP__S_L_TAX,  TP__S_L_SHIP,
                            TP__S_L_SMODE, TP__S_L_CMNT, TP__S_L_PKEY, TP__S_L_SKEY,
                            TP__S_L_SDTE, TP__S_L_CDTE, TP__S_L_RDTE, TP__S_L_RFLG};
#define N_O ((int)(sizeof o_ids / sizeof o_ids[0]))
#define N_L ((int)(sizeof l_ids / sizeof l_ids[0]))

int tp__gen_orders(const tp_gen *g, int64_t first, int64_t n, tp_batch *orders,
                   tp_batch *lineitem, pa_err *err)
{
    int rc;
    if (orders && (rc = tp__batch_reserve(orders, n, err)) != PA_OK)
        return rc;
    if (lineitem && (rc = tp__batch_reserve(lineitem, n * 7, err)) != PA_OK) {
        if (orders)
            orders->n_rows = 0;
        return rc;
    }
    /* Pool offsets of the comments, copied after the loop (tp__text_fill). */
    int64_t *osrc = orders ? pa_malloc((size_t)(n ? n : 1) * sizeof(int64_t)) : NULL;
    int64_t *lsrc = lineitem ? pa_malloc((size_t)(n ? n : 1) * 7 * sizeof(int64_t)) : NULL;
    if ((orders && !osrc) || (lineitem && !lsrc)) {
        pa_free(osrc);
        pa_free(lsrc);
        if (orders)
            orders->n_rows = 0;
        if (lineitem)
            lineitem->n_rows = 0;
        return pa_error(err, PA_ENOMEM, "comment offsets of %lld orders", (long long)n);
    }
    tp__stream s[TP__S_COUNT];
    tp__streams_at(s, o_ids, N_O, first);
    tp__streams_at(s, l_ids, N_L, first);
    const tp__dist *prio = &g->d[TP__D_PRIORITIES], *instr = &g->d[TP__D_INSTRUCTIONS];
    const tp__dist *modes = &g->d[TP__D_SHIPMODES], *rflags = &g->d[TP__D_RFLAGS];
    int64_t lr = 0;   /* next lineitem row */
    char buf[40];
    for (int64_t u = 0; u < n; u++) {
        int64_t okey = order_key(first + u + 1);
        int64_t ck = tp__unif(&s[TP__S_O_CKEY], 1, g->n_cust);
        int64_t delta = 1;
        while (ck % CUST_MORTALITY == 0) {
            ck += delta;
            if (ck > g->n_cust)
                ck = g->n_cust;
            delta = -delta;
        }
        int64_t odate = tp__unif(&s[TP__S_O_ODATE], 0, ORDER_DATE_SPAN);
        int pr = tp__pick(prio, &s[TP__S_O_PRIO]);
        int64_t clerk = tp__unif(&s[TP__S_O_CLRK], 1, g->clerks);
        if (orders) {
            TP__I64(orders, 0)[u] = okey;
            TP__I32(orders, 1)[u] = (int32_t)ck;
            TP__I32(orders, 4)[u] = (int32_t)(TP__EPOCH_1992 + odate);
            tp__put_str(&orders->cols[5], u, prio->words[pr], prio->lens[pr]);
            tp__put_str(&orders->cols[6], u, buf, tp__fmt_key(buf, "Clerk#", clerk, 9));
            TP__I32(orders, 7)[u] = 0;
            tp__text_defer(&s[TP__S_O_CMNT], 19, 78, &orders->cols[8], u, osrc);
        }
        int64_t lines = tp__unif(&s[TP__S_O_LCNT], 1, 7);
        int64_t total = 0, shipped = 0;
        for (int64_t l = 0; l < lines; l++) {
            int64_t qty = tp__unif(&s[TP__S_L_QTY], 1, 50);
            int64_t disc = tp__unif(&s[TP__S_L_DCNT], 0, 10);
            int64_t tax = tp__unif(&s[TP__S_L_TAX], 0, 8);
            int ins = tp__pick(instr, &s[TP__S_L_SHIP]);
            int mode = tp__pick(modes, &s[TP__S_L_SMODE]);
            if (lineitem)
                tp__text_defer(&s[TP__S_L_CMNT], 10, 43, &lineitem->cols[15], lr, lsrc);
            int64_t pk = tp__unif(&s[TP__S_L_PKEY], 1, g->n_part);
            int64_t sj = tp__unif(&s[TP__S_L_SKEY], 0, 3);
            int64_t sk = (pk + sj * (g->n_supp / 4 + (pk - 1) / g->n_supp)) % g->n_supp + 1;
            int64_t eprice = retail_price(pk) * qty;
            total += eprice * (100 - disc) / 100 * (100 + tax) / 100;
            int64_t sdate = odate + tp__unif(&s[TP__S_L_SDTE], 1, 121);
            int64_t cdate = odate + tp__unif(&s[TP__S_L_CDTE], 30, 90);
            int64_t rdate = sdate + tp__unif(&s[TP__S_L_RDTE], 1, 30);
            const char *rf = "N";
            if (rdate <= TP__CURRENT_OFFSET)
                rf = rflags->words[tp__pick(rflags, &s[TP__S_L_RFLG])];
            int f = sdate <= TP__CURRENT_OFFSET;
            shipped += f;
            if (lineitem) {
                TP__I64(lineitem, 0)[lr] = okey;
                TP__I32(lineitem, 1)[lr] = (int32_t)pk;
                TP__I32(lineitem, 2)[lr] = (int32_t)sk;
                TP__I32(lineitem, 3)[lr] = (int32_t)(l + 1);
                TP__I64(lineitem, 4)[lr] = qty * 100;
                TP__I64(lineitem, 5)[lr] = eprice;
                TP__I64(lineitem, 6)[lr] = disc;
                TP__I64(lineitem, 7)[lr] = tax;
                tp__put_str(&lineitem->cols[8], lr, rf, 1);
                tp__put_str(&lineitem->cols[9], lr, f ? "F" : "O", 1);
                TP__I32(lineitem, 10)[lr] = (int32_t)(TP__EPOCH_1992 + sdate);
                TP__I32(lineitem, 11)[lr] = (int32_t)(TP__EPOCH_1992 + cdate);
                TP__I32(lineitem, 12)[lr] = (int32_t)(TP__EPOCH_1992 + rdate);
                tp__put_str(&lineitem->cols[13], lr, instr->words[ins], instr->lens[ins]);
                tp__put_str(&lineitem->cols[14], lr, modes->words[mode], modes->lens[mode]);
                lr++;
            }
        }
        if (orders) {
            const char *st = shipped == lines ? "F" : shipped > 0 ? "P" : "O";
            tp__put_str(&orders->cols[2], u, st, 1);
            TP__I64(orders, 3)[u] = total;
        }
        for (int k = 0; k < N_O; k++)
            tp__next_unit(&s[o_ids[k]]);
        for (int k = 0; k < N_L; k++)
            tp__next_unit(&s[l_ids[k]]);
    }
    if (orders) {
        tp__text_fill(g, &orders->cols[8], osrc, n);
        orders->n_rows = n;
    }
    if (lineitem) {
        tp__text_fill(g, &lineitem->cols[15], lsrc, lr);
        lineitem->n_rows = lr;
    }
    pa_free(osrc);
    pa_free(lsrc);
    return PA_OK;
}

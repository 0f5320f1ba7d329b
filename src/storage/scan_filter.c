/*
 * scan_filter.c - the exact row filter of a scan and the in-place
 * compaction of decoded columns (scan_int.h, "Rows and positions"). The
 * selection holds row ids of the row group, increasing; a column maps a row
 * to its decoded position through its segments (each a run of consecutive
 * rows at consecutive positions).
 */
#include "storage/scan_int.h"

#include <math.h>
#include <string.h>

static inline bool bit_get(const uint8_t *v, int64_t i)
{
    return (v[i >> 3] >> (i & 7)) & 1;
}

static inline int64_t int_at(const scan_dcol *c, int64_t p)
{
    switch (c->type.id) {
    case PA_TYPE_BOOLEAN: return ((const uint8_t *)c->values)[p];
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return ((const int32_t *)c->values)[p];
    default: return ((const int64_t *)c->values)[p];
    }
}

/* DuckDB's order for doubles: NaN above everything, equal to itself. */
static inline int dbl_cmp(double a, double b)
{
    if (isnan(a))
        return isnan(b) ? 0 : 1;
    if (isnan(b))
        return -1;
    return (a > b) - (a < b);
}

static inline bool cmp_ok(int c, pq_op op)
{
    switch (op) {
    case PQ_OP_EQ: return c == 0;
    case PQ_OP_NE: return c != 0;
    case PQ_OP_LT: return c < 0;
    case PQ_OP_LE: return c <= 0;
    case PQ_OP_GT: return c > 0;
    default: return c >= 0;
    }
}

static bool row_matches(const scan_pred *p, const scan_dcol *c, int64_t pos)
{
    bool valid = !c->validity || bit_get(c->validity, pos);
    if (p->op == PQ_OP_IS_NULL)
        return !valid;
    if (p->op == PQ_OP_IS_NOT_NULL || !valid)
        return valid;
    if (p->kind == SCAN_K_INT) {
        int64_t v = int_at(c, pos), q = p->c.q;
        switch (p->op) {
        case PQ_OP_EQ: return p->c.exact && v == q;
        case PQ_OP_NE: return !(p->c.exact && v == q);
        case PQ_OP_LT: return p->c.exact ? v < q : v <= q;
        case PQ_OP_LE: return v <= q;
        case PQ_OP_GT: return v > q;
        default: return p->c.exact ? v >= q : v > q;
        }
    }
    if (p->kind == SCAN_K_DOUBLE)
        return cmp_ok(dbl_cmp(((const double *)c->values)[pos], p->c.d), p->op);
    int32_t a = c->offsets[pos], b = c->offsets[pos + 1];
    size_t n = (size_t)(b - a), m = p->c.len;
    int r = memcmp(c->bytes + a, p->c.s, n < m ? n : m);
    if (!r)
        r = (n > m) - (n < m);
    return cmp_ok(r, p->op);
}

/* Integer predicate as a closed range [lo, hi] (or its complement for
 * NE); false when no value can match. */
static bool int_range(const scan_pred *p, int64_t *lo, int64_t *hi)
{
    int64_t q = p->c.q;
    *lo = INT64_MIN, *hi = INT64_MAX;
    switch (p->op) {
    case PQ_OP_EQ:
    case PQ_OP_NE: *lo = *hi = q; return p->c.exact;
    case PQ_OP_LT: if (p->c.exact) { if (q == INT64_MIN) return false; *hi = q - 1; } else *hi = q; return true;
    case PQ_OP_LE: *hi = q; return true;
    case PQ_OP_GT: if (q == INT64_MAX) return false; *lo = q + 1; return true;
    default: if (p->c.exact) *lo = q; else { if (q == INT64_MAX) return false; *lo = q + 1; } return true;
    }
}

#define FILTER_RANGE(T)                                                                    \
    do {                                                                                   \
        const T *v = (const T *)c->values + base;                                          \
        for (uint64_t i = 0; i < m; i++) {                                                 \
            uint32_t r = in[i];                                                            \
            int64_t x = v[r];                                                              \
            out[w] = r;                                                                    \
            w += (uint64_t)((x >= lo) & (x <= hi) & 1) ^ ne;                               \
        }                                                                                  \
    } while (0)

/* Filter the m rows in[] (positions row + base) by p into out[] (may be in;
 * out <= in); returns how many survive. REQUIRED integer columns take a
 * branch-free loop; everything else goes row by row. */
static uint64_t filter_span(const scan_pred *p, const scan_dcol *c, const uint32_t *in, uint64_t m, int64_t base,
                            uint32_t *out)
{
    uint64_t w = 0;
    bool i32 = c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE;   /* as int_at reads them */
    if (p->kind == SCAN_K_INT && !c->validity && p->op != PQ_OP_IS_NULL && p->op != PQ_OP_IS_NOT_NULL &&
        (i32 || (c->type.id != PA_TYPE_BOOLEAN && pa_type_width(c->type.id) == 8))) {
        int64_t lo, hi;
        uint64_t ne = p->op == PQ_OP_NE;
        if (!int_range(p, &lo, &hi)) {   /* nothing equals: NE keeps all, the rest none */
            if (!ne)
                return 0;
            memmove(out, in, (size_t)m * sizeof *out);
            return m;
        }
        if (i32)
            FILTER_RANGE(int32_t);
        else
            FILTER_RANGE(int64_t);
        return w;
    }
    for (uint64_t i = 0; i < m; i++)
        if (row_matches(p, c, (int64_t)in[i] + base))
            out[w++] = in[i];
    return w;
}

int scan__select(pq_scan *s, scan_unit *u, scan_dcol *const *cols, uint32_t **sel, uint64_t *n,
                 pa_err *err)
{
    bool filter = s->opt.filter_rows && s->n_preds > 0;
    *sel = NULL;
    *n = (uint64_t)u->num_rows;
    if (u->all_rows && !filter)
        return PA_OK;
    uint64_t count = 0;
    for (uint32_t k = 0; k < u->rows.n; k++)
        count += (uint64_t)(u->rows.hi[k] - u->rows.lo[k]);
    uint32_t *out = pa_malloc((size_t)(count ? count : 1) * sizeof *out);
    if (!out)
        return pa_error(err, PA_ENOMEM, "%s: row group %u: out of memory for the row selection", SCAN_WHERE(s, u));
    uint64_t m = 0;
    for (uint32_t k = 0; k < u->rows.n; k++)
        for (int64_t r = u->rows.lo[k]; r < u->rows.hi[k]; r++)
            out[m++] = (uint32_t)r;
    for (int k = 0; filter && k < s->n_preds; k++) {
        const scan_pred *p = &s->preds[k];
        const scan_dcol *c = cols[p->col];
        if (!c)
            continue;
        uint64_t w = 0, i = 0;
        for (uint32_t g = 0; g < c->n_segs && i < m; g++) {   /* the rows of segment g: out[i..e) */
            const scan_seg *sg = &c->segs[g];
            if (out[i] < sg->row)
                break;
            uint64_t e = i;
            while (e < m && out[e] < sg->row + sg->n)
                e++;
            w += filter_span(p, c, out + i, e - i, sg->pos - sg->row, out + w);
            i = e;
        }
        if (i < m) {
            pa_free(out);
            return pa_error(err, PA_EINTERNAL, "%s: row group %u: row %u was not decoded", SCAN_WHERE(s, u), out[i]);
        }
        m = w;
    }
    if (u->all_rows && m == (uint64_t)u->num_rows) {   /* nothing dropped: no compaction */
        pa_free(out);
        return PA_OK;
    }
    *sel = out;
    *n = m;
    return PA_OK;
}

/* Move the rows sel[k0..k1) (increasing, consecutive row ids whose
 * positions p0.. are consecutive too) to positions k0..k1-1. */
static void compact_run(scan_dcol *c, int w, bool str, int32_t *at, uint64_t k0, uint64_t k1, int64_t p0)
{
    uint64_t len = k1 - k0;
    if (str) {
        int32_t a = c->offsets[p0], b = c->offsets[p0 + (int64_t)len];
        int32_t shift = a - *at;   /* >= 0 */
        if (shift)
            memmove(c->bytes + *at, c->bytes + a, (size_t)(b - a));
        if (shift || (int64_t)k0 != p0) {
            const int32_t *src = c->offsets + p0;   /* src >= dst: forward is safe */
            int32_t *dst = c->offsets + k0;
            for (uint64_t j = 0; j < len; j++)
                dst[j] = src[j] - shift;
        }
        *at += b - a;
    } else if ((int64_t)k0 != p0) {
        uint8_t *vals = c->values;
        memmove(vals + k0 * (uint64_t)w, vals + (uint64_t)p0 * (uint64_t)w, (size_t)(len * (uint64_t)w));
    }
    if (c->validity && (int64_t)k0 != p0)
        for (uint64_t j = 0; j < len; j++) {
            bool v = bit_get(c->validity, p0 + (int64_t)j);
            uint8_t *byte = &c->validity[(k0 + j) >> 3];
            *byte = (uint8_t)((*byte & ~(1u << ((k0 + j) & 7))) | ((unsigned)v << ((k0 + j) & 7)));
        }
}

/* Runs of consecutive selected rows inside one segment move as one block
 * (one memmove of values or string bytes), so a selective-free filter costs
 * about one pass over the data instead of a call per row. */
void scan__compact(scan_dcol *c, const uint32_t *sel, uint64_t n)
{
    bool str = c->type.id == PA_TYPE_VARCHAR;
    int w = str ? 0 : pa_type_width(c->type.id);
    int32_t at = 0;
    uint64_t k = 0;
    uint32_t s = 0;
    while (k < n) {
        int64_t row = sel[k];
        while (s < c->n_segs && c->segs[s].row + c->segs[s].n <= row)
            s++;
        if (s == c->n_segs || row < c->segs[s].row)   /* unreachable: scan__select checked every row */
            break;
        const scan_seg *g = &c->segs[s];
        int64_t p0 = g->pos + (row - g->row), end = g->row + g->n;
        uint64_t k1 = k + 1;
        while (k1 < n && (int64_t)sel[k1] == row + (int64_t)(k1 - k) && (int64_t)sel[k1] < end)
            k1++;
        compact_run(c, w, str, &at, k, k1, p0);
        k = k1;
    }
    if (str)
        c->offsets[n] = at;
    c->rows = n;
}

/*
 * scan_filter.c - the exact row filter of a scan and the in-place
 * compaction of decoded columns (scan_int.h, "Rows and positions"). The
 * selection holds row ids of the row group, increasing; a column maps a row
 * to its decoded position through its segments, walked with a cursor.
 */
#include "storage/scan_int.h"

#include <math.h>
#include <string.h>

typedef struct cursor {
    const scan_seg *segs;
    uint32_t n, k;
} cursor;

/* Position of row (rows asked in increasing order); -1 if no segment holds
 * it (cannot happen for rows of the unit's ranges). */
static inline int64_t cursor_pos(cursor *c, int64_t row)
{
    while (c->k < c->n && c->segs[c->k].row + c->segs[c->k].n <= row)
        c->k++;
    if (c->k == c->n || row < c->segs[c->k].row)
        return -1;
    return c->segs[c->k].pos + (row - c->segs[c->k].row);
}

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
        cursor cur = {c->segs, c->n_segs, 0};
        uint64_t w = 0;
        for (uint64_t i = 0; i < m; i++) {
            int64_t pos = cursor_pos(&cur, out[i]);
            if (pos < 0) {
                pa_free(out);
                return pa_error(err, PA_EINTERNAL, "%s: row group %u: row %u was not decoded", SCAN_WHERE(s, u), out[i]);
            }
            if (row_matches(p, c, pos))
                out[w++] = out[i];
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

void scan__compact(scan_dcol *c, const uint32_t *sel, uint64_t n)
{
    cursor cur = {c->segs, c->n_segs, 0};
    bool str = c->type.id == PA_TYPE_VARCHAR;
    int w = str ? 0 : pa_type_width(c->type.id);
    uint8_t *vals = c->values;
    int32_t at = 0;
    for (uint64_t k = 0; k < n; k++) {
        int64_t p = cursor_pos(&cur, sel[k]);   /* >= k: data only moves down */
        if (p < 0)
            p = (int64_t)k;   /* unreachable: scan__select checked every row */
        if (str) {
            int32_t a = c->offsets[p], b = c->offsets[p + 1];
            if (at != a)
                memmove(c->bytes + at, c->bytes + a, (size_t)(b - a));
            c->offsets[k] = at;
            at += b - a;
        } else if ((int64_t)k != p) {
            memcpy(vals + k * (uint64_t)w, vals + (uint64_t)p * (uint64_t)w, (size_t)w);
        }
        if (c->validity) {
            bool v = bit_get(c->validity, p);
            uint8_t *byte = &c->validity[k >> 3];
            *byte = (uint8_t)((*byte & ~(1u << (k & 7))) | ((unsigned)v << (k & 7)));
        }
    }
    if (str)
        c->offsets[n] = at;
    c->rows = n;
}

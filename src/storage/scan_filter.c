/*
 * scan_filter.c - the exact row filter of a scan and the in-place
 * compaction of decoded columns (scan_int.h, "Rows and positions"). The
 * selection holds row ids of the row group, increasing; a column maps a row
 * to its decoded position through its segments (each a run of consecutive
 * rows at consecutive positions).
 */
#include "storage/scan_int.h"

#include <math.h>
#include <pthread.h>
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

/* One filtering step: a predicate, or consecutive integer range predicates
 * on the same column merged into one range [lo, hi] (fast). */
typedef struct fstep {
    const scan_pred *p;
    const scan_dcol *c;
    bool fast;
    uint64_t ne;           /* fast: keep rows outside [lo, hi] (a lone NE) */
    int64_t lo, hi;
    int k;                 /* index of its first predicate (selectivity stats) */
} fstep;

static bool step_fast(const scan_pred *p, const scan_dcol *c)
{
    bool i32 = c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE;   /* as int_at reads them */
    return p->kind == SCAN_K_INT && !c->validity && p->op != PQ_OP_IS_NULL && p->op != PQ_OP_IS_NOT_NULL &&
           (i32 || (c->type.id != PA_TYPE_BOOLEAN && pa_type_bytes(c->type) == 8));
}

#define STEP_RANGE(T, GEN)                                                                 \
    do {                                                                                   \
        const T *v = (const T *)st->c->values + base;                                      \
        for (uint64_t i = 0; i < m; i++) {                                                 \
            uint32_t r = GEN;                                                              \
            int64_t x = v[r];                                                              \
            out[w] = r;                                                                    \
            w += (uint64_t)((x >= lo) & (x <= hi) & 1) ^ ne;                               \
        }                                                                                  \
    } while (0)

/* sel_tab[b]: the positions of b's set bits, in order (expansion of an
 * 8-row pass mask into row ids). */
static uint8_t sel_tab[256][8], sel_cnt[256];
static pthread_once_t sel_tab_once = PTHREAD_ONCE_INIT;

static void sel_tab_init(void)
{
    for (int b = 0; b < 256; b++) {
        int n = 0;
        for (int j = 0; j < 8; j++)
            if (b >> j & 1)
                sel_tab[b][n++] = (uint8_t)j;
        sel_cnt[b] = (uint8_t)n;
    }
}

#define SPAN_MASK(T)                                                                       \
    do {                                                                                   \
        const T *v = (const T *)st->c->values + base + first;                              \
        for (; i + 8 <= m; i += 8) {                                                       \
            unsigned bits = 0;                                                             \
            for (int j = 0; j < 8; j++)                                                    \
                bits |= (unsigned)(((uint64_t)(int64_t)v[i + j] - ulo <= span) ^ ne) << j; \
            const uint8_t *t = sel_tab[bits];                                              \
            uint32_t r0 = first + (uint32_t)i;                                             \
            for (int j = 0; j < 8; j++)                                                    \
                out[w + (uint64_t)j] = r0 + t[j];                                          \
            w += sel_cnt[bits];                                                            \
        }                                                                                  \
    } while (0)

/* Consecutive rows first.. through a fast step: pass masks of 8 rows,
 * expanded by table. Writes up to 7 entries past the survivors, never past
 * out + m (w <= i there). Returns how many survive. */
static uint64_t span_consecutive(const fstep *st, uint32_t first, uint64_t m, int64_t base, uint32_t *out)
{
    pthread_once(&sel_tab_once, sel_tab_init);
    uint64_t w = 0, i = 0, ne = st->ne;
    uint64_t ulo = (uint64_t)st->lo, span = (uint64_t)st->hi - (uint64_t)st->lo;   /* lo <= hi */
    if (st->c->type.id == PA_TYPE_INTEGER || st->c->type.id == PA_TYPE_DATE)
        SPAN_MASK(int32_t);
    else
        SPAN_MASK(int64_t);
    int64_t lo = st->lo, hi = st->hi;
    for (; i < m; i++) {
        uint32_t r = first + (uint32_t)i;
        int64_t x = int_at(st->c, (int64_t)r + base);
        out[w] = r;
        w += (uint64_t)((x >= lo) & (x <= hi) & 1) ^ ne;
    }
    return w;
}

/* Filter rows by st into out[]: the m rows in[] (in may be out; out <= in),
 * or when in is NULL the m consecutive rows first.. (positions row + base). */
static uint64_t step_span(const fstep *st, const uint32_t *in, uint32_t first, uint64_t m, int64_t base,
                          uint32_t *out)
{
    uint64_t w = 0;
    if (st->fast && !in)
        return span_consecutive(st, first, m, base, out);
    if (st->fast) {
        int64_t lo = st->lo, hi = st->hi;
        uint64_t ne = st->ne;
        bool i32 = st->c->type.id == PA_TYPE_INTEGER || st->c->type.id == PA_TYPE_DATE;
        if (in) {
            if (i32)
                STEP_RANGE(int32_t, in[i]);
            else
                STEP_RANGE(int64_t, in[i]);
        } else {
            if (i32)
                STEP_RANGE(int32_t, first + (uint32_t)i);
            else
                STEP_RANGE(int64_t, first + (uint32_t)i);
        }
        return w;
    }
    for (uint64_t i = 0; i < m; i++) {
        uint32_t r = in ? in[i] : first + (uint32_t)i;
        if (row_matches(st->p, st->c, (int64_t)r + base))
            out[w++] = r;
    }
    return w;
}

/* The steps of the filter, most selective first (by the pass rates seen in
 * earlier units of this scan; plan order until then). Returns how many, or
 * -1 when no row can pass. */
static int build_steps(pq_scan *s, scan_dcol *const *cols, const double *rate, fstep *steps)
{
    int n = 0;
    for (int k = 0; k < s->n_preds; k++) {
        const scan_pred *p = &s->preds[k];
        const scan_dcol *c = cols[p->col];
        if (!c)
            continue;
        fstep st = {p, c, false, 0, 0, 0, k};
        if (step_fast(p, c)) {
            st.fast = true;
            st.ne = p->op == PQ_OP_NE;
            if (!int_range(p, &st.lo, &st.hi)) {   /* nothing equals: NE keeps all, the rest none */
                if (st.ne)
                    continue;
                return -1;
            }
            fstep *prev = n ? &steps[n - 1] : NULL;
            if (prev && prev->fast && !prev->ne && !st.ne && prev->c == c) {
                if (st.lo > prev->lo)
                    prev->lo = st.lo;
                if (st.hi < prev->hi)
                    prev->hi = st.hi;
                if (prev->lo > prev->hi)
                    return -1;
                continue;
            }
        }
        steps[n++] = st;
    }
    for (int i = 1; i < n; i++) {   /* insertion sort by pass rate (stable) */
        fstep t = steps[i];
        double rt = rate[t.k];
        int j = i;
        while (j > 0) {
            const fstep *q = &steps[j - 1];
            double rq = rate[q->k];
            if (rq <= rt)
                break;
            steps[j] = steps[j - 1];
            j--;
        }
        steps[j] = t;
    }
    return n;
}

/* The selection buffer is the decoder's, kept from unit to unit, so its
 * pages are faulted in once. */
static uint32_t *sel_buffer(scan_wctx *w, uint64_t count)
{
    if (count < 1)
        count = 1;
    if (count > w->sel_cap) {
        pa_free(w->sel_buf);
        w->sel_cap = 0;
        if (!(w->sel_buf = pa_malloc((size_t)count * sizeof *w->sel_buf)))
            return NULL;
        w->sel_cap = count;
    }
    return w->sel_buf;
}

/* Each predicate's pass rate so far (1 before any row), under the lock:
 * units decoding at once share the counts. */
static bool pass_rates(pq_scan *s, double *rate)
{
    pthread_mutex_lock(&s->mu);
    if (!s->pred_in) {
        s->pred_in = pa_calloc((size_t)s->n_preds, sizeof *s->pred_in);
        s->pred_out = pa_calloc((size_t)s->n_preds, sizeof *s->pred_out);
    }
    bool ok = s->pred_in && s->pred_out;
    for (int k = 0; ok && k < s->n_preds; k++)
        rate[k] = s->pred_in[k] ? (double)s->pred_out[k] / (double)s->pred_in[k] : 1.0;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* The rows of a unit are filtered in up to SEL_SLICES slices of row ids,
 * in parallel: slice i starts its output at out + at (the rows of R before
 * it, so it never overtakes the next slice), then the slices are joined. */
#define SEL_SLICES 8
#define SEL_STEPS 64

typedef struct sel_slice {
    int64_t row_lo, row_hi;
    uint64_t at, n;
    uint64_t in[SEL_STEPS], out[SEL_STEPS];   /* per step: rows tested / passed */
    int64_t bad_row;   /* >= 0: a row not decoded */
} sel_slice;

typedef struct sel_ctx {
    const scan_unit *u;
    const fstep *steps;
    int n_steps;
    uint32_t *out;
    sel_slice sl[SEL_SLICES];
    int n_sl;
} sel_ctx;

static void select_task(void *ctx, size_t idx)
{
    sel_ctx *sc = ctx;
    sel_slice *sl = &sc->sl[idx];
    const scan_unit *u = sc->u;
    uint32_t *out = sc->out + sl->at;
    uint64_t m = 0, count = 0, covered = 0;
    sl->bad_row = -1;
    const fstep *st = &sc->steps[0];
    const scan_dcol *c = st->c;
    uint32_t g = 0;
    for (uint32_t k = 0; k < u->rows.n; k++) {   /* the first step reads the row ranges directly */
        int64_t lo = u->rows.lo[k] > sl->row_lo ? u->rows.lo[k] : sl->row_lo;
        int64_t hi = u->rows.hi[k] < sl->row_hi ? u->rows.hi[k] : sl->row_hi;
        if (lo >= hi)
            continue;
        count += (uint64_t)(hi - lo);
        while (g < c->n_segs && c->segs[g].row + c->segs[g].n <= lo)
            g++;
        for (uint32_t h = g; h < c->n_segs && c->segs[h].row < hi; h++) {
            const scan_seg *sg = &c->segs[h];
            int64_t a = lo > sg->row ? lo : sg->row, b = hi < sg->row + sg->n ? hi : sg->row + sg->n;
            if (a >= b)
                continue;
            covered += (uint64_t)(b - a);
            m += step_span(st, NULL, (uint32_t)a, (uint64_t)(b - a), sg->pos - sg->row, out + m);
        }
        if (covered != count) {
            sl->bad_row = lo;
            return;
        }
    }
    sl->in[0] = count;
    sl->out[0] = m;
    for (int k = 1; k < sc->n_steps; k++) {
        st = &sc->steps[k];
        c = st->c;
        uint64_t w = 0, i = 0;
        for (g = 0; g < c->n_segs && i < m; g++) {   /* the rows of segment g: out[i..e) */
            const scan_seg *sg = &c->segs[g];
            if (out[i] < sg->row)
                break;
            uint64_t e = i;
            while (e < m && out[e] < sg->row + sg->n)
                e++;
            w += step_span(st, out + i, 0, e - i, sg->pos - sg->row, out + w);
            i = e;
        }
        if (i < m) {
            sl->bad_row = out[i];
            return;
        }
        if (k < SEL_STEPS) {
            sl->in[k] = m;
            sl->out[k] = w;
        }
        m = w;
    }
    sl->n = m;
}

int scan__select(pq_scan *s, scan_wctx *w, scan_unit *u, scan_dcol *const *cols, uint32_t **sel, uint64_t *n,
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
    uint32_t *out = sel_buffer(w, count);
    fstep *steps = NULL;
    double *rate = NULL;
    int n_steps = 0;
    if (out && filter) {
        steps = pa_malloc((size_t)s->n_preds * sizeof *steps);
        rate = pa_malloc((size_t)s->n_preds * sizeof *rate);
        if (!steps || !rate || !pass_rates(s, rate))
            out = NULL;
    }
    if (!out) {
        pa_free(steps);
        pa_free(rate);
        return pa_error(err, PA_ENOMEM, "%s: row group %u: out of memory for the row selection", SCAN_WHERE(s, u));
    }
    n_steps = filter ? build_steps(s, cols, rate, steps) : 0;
    pa_free(rate);
    if (n_steps < 0) {   /* no row can pass */
        pa_free(steps);
        *sel = out;
        *n = 0;
        return PA_OK;
    }
    uint64_t m = 0;
    if (n_steps == 0 || u->rows.n == 0) {
        for (uint32_t k = 0; k < u->rows.n; k++)
            for (int64_t r = u->rows.lo[k]; r < u->rows.hi[k]; r++)
                out[m++] = (uint32_t)r;
    } else {   /* slices of the rows filtered in parallel, then joined */
        int workers = w->tp ? pa_threadpool_size(w->tp) : 1;
        int n_sl = count >= 65536 && workers > 1 ? (workers < SEL_SLICES ? workers : SEL_SLICES) : 1;
        sel_ctx sc = {u, steps, n_steps, out, {{0}}, n_sl};
        int64_t lo = u->rows.lo[0], hi = u->rows.hi[u->rows.n - 1];
        uint64_t before = 0;
        uint32_t k = 0;
        for (int i = 0; i < n_sl; i++) {   /* slice i: rows [row_lo, row_hi) */
            sel_slice *sl = &sc.sl[i];
            sl->row_lo = i == 0 ? lo : sc.sl[i - 1].row_hi;
            sl->row_hi = i == n_sl - 1 ? hi : lo + (hi - lo) / n_sl * (i + 1);
            for (; k < u->rows.n && u->rows.hi[k] <= sl->row_lo; k++)
                ;
            sl->at = before;
            for (uint32_t j = k; j < u->rows.n && u->rows.lo[j] < sl->row_hi; j++) {
                int64_t a = u->rows.lo[j] > sl->row_lo ? u->rows.lo[j] : sl->row_lo;
                int64_t b = u->rows.hi[j] < sl->row_hi ? u->rows.hi[j] : sl->row_hi;
                if (a < b)
                    before += (uint64_t)(b - a);
            }
        }
        if (n_sl > 1)
            pa_parallel_for(w->tp, (size_t)n_sl, select_task, &sc);
        else
            select_task(&sc, 0);
        for (int i = 0; i < n_sl; i++) {
            sel_slice *sl = &sc.sl[i];
            if (sl->bad_row >= 0) {
                pa_free(steps);
                return pa_error(err, PA_EINTERNAL, "%s: row group %u: row %lld was not decoded", SCAN_WHERE(s, u),
                                (long long)sl->bad_row);
            }
            if (m != sl->at)
                memmove(out + m, out + sl->at, (size_t)sl->n * sizeof *out);
            m += sl->n;
        }
        pthread_mutex_lock(&s->mu);
        for (int i = 0; i < n_sl; i++)
            for (int j = 0; j < n_steps && j < SEL_STEPS; j++) {
                s->pred_in[steps[j].k] += sc.sl[i].in[j];
                s->pred_out[steps[j].k] += sc.sl[i].out[j];
            }
        pthread_mutex_unlock(&s->mu);
    }
    pa_free(steps);
    if (u->all_rows && m == (uint64_t)u->num_rows)   /* nothing dropped: no compaction */
        return PA_OK;
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
    bool str = pa_type_is_varlen(c->type.id);
    int w = str ? 0 : pa_type_bytes(c->type);
    if (!str && !c->validity && (w == 4 || w == 8)) {   /* element-wise gather: no call per run */
        uint64_t k = 0;
        for (uint32_t g = 0; g < c->n_segs && k < n; g++) {
            const scan_seg *sg = &c->segs[g];
            int64_t end = sg->row + sg->n, base = sg->pos - sg->row;
            uint64_t e = k;
            while (e < n && (int64_t)sel[e] < end)
                e++;
            if (w == 4) {
                int32_t *v = c->values;
                for (uint64_t j = k; j < e; j++)
                    v[j] = v[(int64_t)sel[j] + base];
            } else {
                int64_t *v = c->values;
                for (uint64_t j = k; j < e; j++)
                    v[j] = v[(int64_t)sel[j] + base];
            }
            k = e;
        }
        c->rows = n;
        return;
    }
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

/*
 * test_kconf_agg.c - conformance of the group-by kernels (kn_agg_*), run
 * against the device named by PISTA_TEST_DEVICE (default "cpu").
 *
 * Random columns of every type (NULLs, duplicates, skew, long and empty
 * strings) are grouped by the kernels - chunk by chunk (empty chunks
 * included) into several partial tables that are then merged, with growth
 * by table moves - and every result row is compared, as text, with a
 * reference that sorts the rows (qsort) and aggregates each run of equal
 * keys. Also: the dense path and its fall-back to hashing, global
 * aggregation of empty input, DECIMAL sums beyond int64, COUNT(DISTINCT)
 * through pair tables, and argument errors. Every case is also merged the
 * parallel way: partials reordered by hash bucket, ranges of buckets
 * merged separately.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/datetime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kconf_testutil.h"

#define OK(call)                                                                                \
    do {                                                                                        \
        int rc_ = (call);                                                                       \
        if (rc_ != PA_OK)                                                                       \
            fail_msg("%s -> %s: %s", #call, pa_status_name(rc_), err.msg);                      \
    } while (0)

static dv_device *g_dev;
static dv_stream *g_s;
static pa_err err;

static int setup(void **state)
{
    const char *spec = getenv("PISTA_TEST_DEVICE");
    dv_options o = {.spec = spec && *spec ? spec : "cpu"};
    pa_err_init(&err);
    if (dv_open(&o, &g_dev, &err) != PA_OK)
        return -1;
    return dv_stream_create(g_dev, &g_s, NULL);
}

static int teardown(void **state)
{
    dv_stream_destroy(g_s);
    dv_close(g_dev);
    pa_err_close(&err);
    return 0;
}

static uint64_t g_rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}
static int64_t below(int64_t n) { return n > 0 ? (int64_t)(rnd() % (uint64_t)n) : 0; }

static const pa_type T_BOOL = {PA_TYPE_BOOLEAN, 0, 0}, T_INT = {PA_TYPE_INTEGER, 0, 0},
                     T_BIG = {PA_TYPE_BIGINT, 0, 0}, T_DBL = {PA_TYPE_DOUBLE, 0, 0},
                     T_DATE = {PA_TYPE_DATE, 0, 0}, T_STR = {PA_TYPE_VARCHAR, 0, 0},
                     T_DEC = {PA_TYPE_DECIMAL, 12, 2}, T_DEC128 = {PA_TYPE_DECIMAL, 30, 3};

/* ------------------------------------------------------------- host data */

/* A host column with n rows: `domain` distinct values (skewed when skew),
 * NULL with probability null_pct/100. Free with col_free. */
static pa_column make_col(pa_type t, int64_t n, int64_t domain, int null_pct, bool skew)
{
    pa_column c = {.type = t, .length = n};
    int w = t.id == PA_TYPE_VARCHAR ? 4 : pa_type_bytes(t);
    c.data = calloc((size_t)(n ? n : 1), (size_t)(t.id == PA_TYPE_VARCHAR ? 16 : w));
    if (t.id == PA_TYPE_VARCHAR)
        c.offsets = calloc((size_t)n + 1, 4);
    if (null_pct)
        c.validity = calloc((size_t)(n + 8) / 8, 1);
    int32_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = below(domain);
        if (skew && below(4) != 0)
            v = below(3);
        bool null = null_pct && below(100) < null_pct;
        if (c.validity && !null)
            c.validity[i / 8] |= (uint8_t)(1u << (i % 8));
        int64_t sv = (v % 2 ? -v : v) * 37 + (v % 5 == 3 ? 100000 : 0);
        switch (t.id) {
        case PA_TYPE_BOOLEAN: ((uint8_t *)c.data)[i] = (uint8_t)(v & 1); break;
        case PA_TYPE_INTEGER:
        case PA_TYPE_DATE: ((int32_t *)c.data)[i] = (int32_t)sv; break;
        case PA_TYPE_BIGINT: ((int64_t *)c.data)[i] = sv * 1000003LL + (v > 40 ? INT64_C(1) << 40 : 0); break;
        case PA_TYPE_DOUBLE: ((double *)c.data)[i] = v == 7 ? -0.0 : (double)sv; break;
        case PA_TYPE_INTERVAL:
            /* Distinct values have distinct normalised lengths (micros = v < a day), ordered
             * unlike their raw bytes (the micros are the high half). */
            ((pa_interval *)c.data)[i] = (pa_interval){(int32_t)(v % 7) - 3, (int32_t)((v * 13) % 61) - 30, v};
            break;
        case PA_TYPE_DECIMAL:
            if (w == 16)
                ((__int128 *)c.data)[i] = (__int128)sv * (__int128)1000000000000LL * 1000000;
            else
                ((int64_t *)c.data)[i] = sv * 101;
            break;
        case PA_TYPE_VARCHAR: {
            /* value v -> a string of length v % 13 (0 = empty) */
            int len = (int)(v % 13);
            for (int k = 0; k < len; k++)
                ((char *)c.data)[pos + k] = (char)('a' + (v * 7 + k * 3) % 26);
            if (len > 5)
                ((char *)c.data)[pos + len - 1] = (char)('A' + v % 26);   /* differ after the prefix */
            pos += len;
            c.offsets[i + 1] = pos;
            break;
        }
        default: break;
        }
        if (t.id == PA_TYPE_VARCHAR && i + 1 <= n)
            c.offsets[i + 1] = pos;
    }
    return c;
}

static void col_free(pa_column *c)
{
    free(c->data);
    free(c->offsets);
    free(c->validity);
}

/* pa_format_value, with the time types as the test compares them (the
 * printing of core may not know them): int64 ones as BIGINT, INTERVAL in
 * PostgreSQL's text (core/datetime.h). */
static size_t fmt_value(const pa_column *c, int64_t row, char *buf, size_t cap)
{
    pa_column b = *c;
    if (pa_type_is_time64(c->type.id))
        b.type.id = PA_TYPE_BIGINT;
    if (c->type.id == PA_TYPE_INTERVAL && pa_column_valid(c, row)) {
        pa_interval v;
        memcpy(&v, (const char *)c->data + row * 16, sizeof v);
        return (size_t)pa_dt_format_interval(v, buf, (int)cap);
    }
    if (c->type.id == PA_TYPE_INTERVAL)
        b.type.id = PA_TYPE_BOOLEAN;   /* NULL: as any NULL */
    return pa_format_value(&b, row, PA_FMT_FULL, buf, cap);
}

/* Compare rows a and b of c (NULL first, then value order; strings bytes). */
static int cmp_val(const pa_column *c, int64_t a, int64_t b)
{
    bool va = pa_column_valid(c, a), vb = pa_column_valid(c, b);
    if (!va || !vb)
        return (int)va - (int)vb;
    switch (c->type.id) {
    case PA_TYPE_BOOLEAN: return (int)((uint8_t *)c->data)[a] - (int)((uint8_t *)c->data)[b];
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: {
        int32_t x = ((int32_t *)c->data)[a], y = ((int32_t *)c->data)[b];
        return (x > y) - (x < y);
    }
    case PA_TYPE_DOUBLE: {
        double x = ((double *)c->data)[a], y = ((double *)c->data)[b];
        return (x > y) - (x < y);
    }
    case PA_TYPE_VARCHAR: {
        int32_t la = c->offsets[a + 1] - c->offsets[a], lb = c->offsets[b + 1] - c->offsets[b];
        int r = memcmp((char *)c->data + c->offsets[a], (char *)c->data + c->offsets[b], (size_t)(la < lb ? la : lb));
        return r ? r : (la > lb) - (la < lb);
    }
    case PA_TYPE_INTERVAL: {
        __int128 x = pa_interval_norm(((pa_interval *)c->data)[a]), y = pa_interval_norm(((pa_interval *)c->data)[b]);
        return (x > y) - (x < y);
    }
    default:
        if (pa_type_bytes(c->type) == 16) {
            __int128 x = ((__int128 *)c->data)[a], y = ((__int128 *)c->data)[b];
            return (x > y) - (x < y);
        } else {
            int64_t x = ((int64_t *)c->data)[a], y = ((int64_t *)c->data)[b];
            return (x > y) - (x < y);
        }
    }
}

static const pa_column *g_sort_cols;
static int g_sort_n;
static int cmp_rows(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    for (int k = 0; k < g_sort_n; k++) {
        int r = cmp_val(&g_sort_cols[k], a, b);
        if (r)
            return r;
    }
    return (a > b) - (a < b);
}

static __int128 num128(const pa_column *c, int64_t i)
{
    switch (c->type.id) {
    case PA_TYPE_INTEGER: return ((int32_t *)c->data)[i];
    case PA_TYPE_DOUBLE: return (__int128)((double *)c->data)[i];
    default: return pa_type_bytes(c->type) == 16 ? ((__int128 *)c->data)[i] : ((int64_t *)c->data)[i];
    }
}

/* Format one value of type t held in v into buf. */
static void fmt1(pa_type t, const void *v, bool valid, char *buf, size_t cap)
{
    uint8_t val = valid;
    pa_column c = {.type = t, .length = 1, .data = (void *)v, .validity = &val};
    fmt_value(&c, 0, buf, cap);
}

/* ----------------------------------------------------------- the harness */

typedef struct agg_spec {
    kn_agg_fin_kind kind;
    kn_agg_op op;      /* for MINMAX: MIN or MAX; for COUNT: COUNT or COUNT_STAR */
    int col;
} agg_spec;

static pa_type out_type(const agg_spec *a, pa_type at)
{
    switch (a->kind) {
    case KN_AGG_FIN_COUNT: return T_BIG;
    case KN_AGG_FIN_AVG: return T_DBL;
    case KN_AGG_FIN_SUM:
        if (at.id == PA_TYPE_DOUBLE)
            return T_DBL;
        if (at.id == PA_TYPE_DECIMAL)
            return (pa_type){PA_TYPE_DECIMAL, 38, at.scale};
        return T_BIG;
    default: return at;
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* -0 and 0 are one value: print both as 0 (a MIN over {0, -0} may keep either). */
static void canon_line(char *l)
{
    char *p;
    while ((p = strstr(l, "|-0|")) != NULL)
        memmove(p + 1, p + 2, strlen(p + 2) + 1);
    if (!strncmp(l, "-0|", 3))
        memmove(l, l + 1, strlen(l));
}

static bool same_keys(int64_t a, int64_t b)
{
    for (int k = 0; k < g_sort_n; k++)
        if (cmp_val(&g_sort_cols[k], a, b))
            return false;
    return true;
}

/* Reference: one line per group ("k1|k2|a1|a2"), sorted; *n_groups set. */
static char **reference(const pa_column *cols, int64_t n, const int *keys, int nk, const agg_spec *aggs, int na,
                        int64_t *n_groups)
{
    int64_t *idx = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    pa_column kc[8];
    for (int k = 0; k < nk; k++)
        kc[k] = cols[keys[k]];
    g_sort_cols = kc;
    g_sort_n = nk;
    qsort(idx, (size_t)n, 8, cmp_rows);
    char **lines = calloc((size_t)n + 2, sizeof *lines);
    int64_t ng = 0;
    for (int64_t s = 0; s < n || (nk == 0 && ng == 0);) {
        int64_t e = s;
        while (e < n && (e == s || same_keys(idx[s], idx[e])))
            e++;
        char line[4096] = "", buf[512];
        for (int k = 0; k < nk; k++) {
            fmt_value(&kc[k], idx[s], buf, sizeof buf);
            strcat(line, buf);
            strcat(line, "|");
        }
        for (int a = 0; a < na; a++) {
            const agg_spec *ag = &aggs[a];
            const pa_column *c = ag->col >= 0 ? &cols[ag->col] : NULL;
            int64_t cnt = 0, best = -1;
            __int128 sum = 0;
            double dsum = 0;
            for (int64_t r = s; r < e; r++) {
                int64_t row = idx[r];
                if (c && !pa_column_valid(c, row))
                    continue;
                cnt++;
                if (!c || ag->kind == KN_AGG_FIN_COUNT)
                    continue;
                if (ag->kind == KN_AGG_FIN_MINMAX) {
                    if (best < 0 || (ag->op == KN_AGG_MIN ? cmp_val(c, row, best) < 0 : cmp_val(c, row, best) > 0))
                        best = row;
                } else if (c->type.id == PA_TYPE_DOUBLE) {
                    dsum += ((double *)c->data)[row];
                } else {
                    sum += num128(c, row);
                }
            }
            pa_type at = c ? c->type : T_BIG, ot = out_type(ag, at);
            if (ag->kind == KN_AGG_FIN_COUNT) {
                fmt1(ot, &cnt, true, buf, sizeof buf);
            } else if (ag->kind == KN_AGG_FIN_MINMAX) {
                if (best >= 0)
                    fmt_value(c, best, buf, sizeof buf);
                else
                    buf[0] = 0;
            } else if (ag->kind == KN_AGG_FIN_SUM) {
                int64_t s64 = (int64_t)sum;
                fmt1(ot, ot.id == PA_TYPE_DOUBLE ? (void *)&dsum : ot.id == PA_TYPE_BIGINT ? (void *)&s64 : (void *)&sum,
                     cnt > 0, buf, sizeof buf);
            } else {
                long double scale = 1;
                for (int d = 0; at.id == PA_TYPE_DECIMAL && d < at.scale; d++)
                    scale *= 10;
                double avg = at.id == PA_TYPE_DOUBLE ? dsum / (double)cnt
                                                      : (double)((long double)sum / ((long double)cnt * scale));
                fmt1(ot, &avg, cnt > 0, buf, sizeof buf);
            }
            strcat(line, buf);
            strcat(line, "|");
        }
        canon_line(line);
        lines[ng++] = strdup(line);
        s = e;
        if (n == 0)
            break;
    }
    free(idx);
    qsort(lines, (size_t)ng, sizeof *lines, cmp_str);
    *n_groups = ng;
    return lines;
}

/* ---------------------------------------------------------- device side */

/* Device copy of host column h (zero-copy on the cpu device). */
static pa_column col_up(const pa_column *h)
{
    pa_column d = *h;
    int64_t n = h->length;
    size_t vb = h->type.id == PA_TYPE_VARCHAR ? (size_t)(n ? h->offsets[n] : 0) : (size_t)n * pa_type_bytes(h->type);
    OK(dv_upload(g_s, h->data, vb ? vb : 1, &d.data, &err));
    if (h->offsets)
        OK(dv_upload(g_s, h->offsets, (size_t)(n + 1) * 4, (void **)&d.offsets, &err));
    if (h->validity)
        OK(dv_upload(g_s, h->validity, (size_t)(n + 8) / 8, (void **)&d.validity, &err));
    return d;
}

static void col_up_free(pa_column *d)
{
    dv_release_upload(g_dev, d->data);
    if (d->offsets)
        dv_release_upload(g_dev, d->offsets);
    if (d->validity)
        dv_release_upload(g_dev, d->validity);
}

/* Rows [start, start+n) of device column c (start a multiple of 8). */
static pa_column col_slice(const pa_column *c, int64_t start, int64_t n)
{
    pa_column v = *c;
    v.length = n;
    if (c->validity)
        v.validity = c->validity + start / 8;
    if (c->offsets)
        v.offsets = c->offsets + start;
    else
        v.data = (uint8_t *)c->data + start * pa_type_bytes(c->type);
    return v;
}

typedef struct tab {
    kn_agg_table t;
    void *mem;
    int64_t *sizes;
} tab;

static void tab_make(tab *t, const kn_agg_layout *L, int64_t groups, int64_t arena)
{
    kn_ctx ctx = {g_dev, g_s};
    OK(dv_alloc(g_dev, kn_agg_table_bytes(L, groups, arena), &t->mem, &err));
    OK(dv_host_alloc(g_dev, 16, (void **)&t->sizes, &err));
    OK(kn_agg_table_init(&ctx, &t->t, L, t->mem, groups, arena, t->sizes, &err));
}

/* Stream-ordered: kernels enqueued before may still read the table. */
static void tab_free(tab *t)
{
    OK(dv_free_async(g_s, t->mem, &err));
    OK(dv_host_free_async(g_s, t->sizes, &err));
}

/* Grow t (doubling) until it can take g more groups and a more arena bytes. */
static void tab_reserve(tab *t, int64_t g, int64_t a)
{
    OK(dv_stream_sync(g_s, &err));
    if (kn_agg_groups(&t->t) + g <= t->t.cap_groups && kn_agg_arena_used(&t->t) + a <= t->t.cap_arena)
        return;
    tab n;
    int64_t cg = t->t.cap_groups, ca = t->t.cap_arena;
    while (cg < kn_agg_groups(&t->t) + g)
        cg *= 2;
    while (ca < kn_agg_arena_used(&t->t) + a)
        ca = ca * 2 + 16;
    tab_make(&n, &t->t.L, cg, ca);
    kn_ctx ctx = {g_dev, g_s};
    OK(kn_agg_table_move(&ctx, &n.t, &t->t, &err));
    tab_free(t);
    *t = n;
}

/* Result lines of table t (emitted to device buffers, read back), sorted. */
static char **emit_lines(const tab *t, const kn_agg_fin *fins, int na)
{
    kn_ctx ctx = {g_dev, g_s};
    OK(dv_stream_sync(g_s, &err));
    int64_t ng = kn_agg_groups(&t->t);
    const kn_agg_layout *L = &t->t.L;
    char **lines = calloc((size_t)ng + 1, sizeof *lines);
    for (int64_t g = 0; g < ng; g++)
        lines[g] = calloc(4096, 1);
    /* Emit in two ranges to exercise `first`. */
    for (int part = 0; part < 2; part++) {
        int64_t first = part ? ng / 3 : 0, count = part ? ng - ng / 3 : ng / 3;
        for (int c = 0; c < L->n_keys + na; c++) {
            bool key = c < L->n_keys;
            const kn_agg_fin *f = key ? NULL : &fins[c - L->n_keys];
            pa_type ty = key ? L->key_types[c] : f->out_type;
            int64_t *bytes;
            OK(dv_host_alloc(g_dev, 8, (void **)&bytes, &err));
            *bytes = 0;
            if (ty.id == PA_TYPE_VARCHAR)
                OK(kn_agg_emit_bytes(&ctx, &t->t, key ? c : -1, f, first, count, bytes, &err));
            OK(dv_stream_sync(g_s, &err));
            pa_column d = {.type = ty, .length = count};
            size_t vb = ty.id == PA_TYPE_VARCHAR ? (size_t)*bytes : (size_t)count * pa_type_bytes(ty);
            OK(dv_alloc(g_dev, vb + 1, &d.data, &err));
            OK(dv_alloc(g_dev, (size_t)(count + 8) / 8, (void **)&d.validity, &err));
            if (ty.id == PA_TYPE_VARCHAR)
                OK(dv_alloc(g_dev, (size_t)(count + 1) * 4, (void **)&d.offsets, &err));
            if (key)
                OK(kn_agg_emit_key(&ctx, &t->t, c, first, count, &d, &err));
            else
                OK(kn_agg_emit(&ctx, &t->t, f, first, count, &d, &err));
            pa_column h = d;
            OK(dv_download(g_s, d.data, vb + 1, &h.data, &err));
            OK(dv_download(g_s, d.validity, (size_t)(count + 8) / 8, (void **)&h.validity, &err));
            if (d.offsets)
                OK(dv_download(g_s, d.offsets, (size_t)(count + 1) * 4, (void **)&h.offsets, &err));
            OK(dv_stream_sync(g_s, &err));
            for (int64_t i = 0; i < count; i++) {
                char buf[512];
                fmt_value(&h, i, buf, sizeof buf);
                strcat(lines[first + i], buf);
                strcat(lines[first + i], "|");
            }
            dv_release_download(g_dev, h.data);
            dv_release_download(g_dev, h.validity);
            if (d.offsets) {
                dv_release_download(g_dev, h.offsets);
                dv_free(g_dev, d.offsets);
            }
            dv_free(g_dev, d.data);
            dv_free(g_dev, d.validity);
            dv_host_free(g_dev, bytes);
        }
    }
    for (int64_t g = 0; g < ng; g++)
        canon_line(lines[g]);
    qsort(lines, (size_t)ng, sizeof *lines, cmp_str);
    return lines;
}

static void free_lines(char **l, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

/* The parallel merge's way: reorder each partial by bucket
 * (kn_agg_partition), cut the buckets into random ranges, merge each range
 * of every partial into a table of its own (kn_agg_merge_range) with room
 * for exactly the range's groups, and compare all ranges' rows with want. */
static void merge_partitioned(tab *part, int parts, const kn_agg_fin *fins, int na, char **want, int64_t ng)
{
    enum { NB = 1 << KN_AGG_PART_BITS };
    kn_ctx ctx = {g_dev, g_s};
    int64_t (*start)[NB + 1], (*arena)[NB];   /* pinned, as the kernels write them */
    OK(dv_host_alloc(g_dev, sizeof *start * 4, (void **)&start, &err));
    OK(dv_host_alloc(g_dev, sizeof *arena * 4, (void **)&arena, &err));
    for (int p = 0; p < parts; p++) {
        const kn_agg_layout *L = &part[p].t.L;
        int64_t n = kn_agg_groups(&part[p].t);
        size_t sb = kn_agg_partition_scratch(L, n);
        void *scratch;
        OK(dv_alloc(g_dev, sb, &scratch, &err));
        /* too little scratch is refused before anything moves */
        assert_int_equal(KC_STATUS(g_dev, g_s, &err,
                                   kn_agg_partition(&ec, &part[p].t, scratch, sb - 32, start[p], arena[p], &err)),
                         PA_EINVAL);
        pa_err_clear(&err);
        OK(kn_agg_partition(&ctx, &part[p].t, scratch, sb, start[p], arena[p], &err));
        uint64_t *ghash = malloc((size_t)(n ? n : 1) * 8);
        if (n)
            OK(dv_copy_async(g_s, ghash, part[p].t.ghash, (size_t)n * 8, DV_COPY_D2H, &err));
        OK(dv_stream_sync(g_s, &err));
        dv_free(g_dev, scratch);
        /* groups now in bucket order, start[] marking the buckets */
        assert_int_equal(start[p][0], 0);
        assert_int_equal(start[p][NB], n);
        for (int b = 0; b < NB; b++)
            for (int64_t g = start[p][b]; g < start[p][b + 1]; g++)
                assert_int_equal((int)(ghash[g] >> (64 - KN_AGG_PART_BITS)), b);
        free(ghash);
    }
    char **got = calloc((size_t)ng + 1, sizeof *got);
    int64_t got_n = 0;
    for (int lo = 0; lo < NB;) {
        int hi = lo + 1 + (int)below(below(3) == 0 ? NB : 24);
        if (hi > NB)
            hi = NB;
        int64_t cap = 0, ab = 0;
        for (int p = 0; p < parts; p++) {
            cap += start[p][hi] - start[p][lo];
            for (int b = lo; b < hi; b++)
                ab += arena[p][b];
        }
        if (cap == 0) {
            lo = hi;
            continue;
        }
        tab r;
        tab_make(&r, &part[0].t.L, cap, ab);
        for (int p = 0; p < parts; p++)
            OK(kn_agg_merge_range(&ctx, &r.t, &part[p].t, start[p][lo], start[p][hi] - start[p][lo], &err));
        OK(dv_stream_sync(g_s, &err));
        int64_t rn = kn_agg_groups(&r.t);
        assert_true(got_n + rn <= ng);
        char **lines = emit_lines(&r, fins, na);
        for (int64_t i = 0; i < rn; i++)
            got[got_n++] = lines[i];
        free(lines);
        tab_free(&r);
        lo = hi;
    }
    assert_int_equal(got_n, ng);
    qsort(got, (size_t)got_n, sizeof *got, cmp_str);
    for (int64_t i = 0; i < ng; i++)
        if (strcmp(want[i], got[i]) != 0)
            fail_msg("partitioned merge, group %lld: want '%s' got '%s'", (long long)i, want[i], got[i]);
    free_lines(got, got_n);
    /* a range past the groups is refused */
    if (parts > 0) {
        tab r;
        tab_make(&r, &part[0].t.L, 16, 16);
        int64_t past = kn_agg_groups(&part[0].t) + 1;
        assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_agg_merge_range(&ec, &r.t, &part[0].t, 0, past, &err)),
                         PA_EINVAL);
        pa_err_clear(&err);
        tab_free(&r);
    }
    OK(dv_stream_sync(g_s, &err));
    dv_host_free(g_dev, start);
    dv_host_free(g_dev, arena);
}

/* Group n rows of cols by keys with aggs through `parts` partial tables fed
 * chunk by chunk, merge them, and compare with the reference. Returns the
 * number of groups. dense_state receives the merged-into table's dense flag
 * of partial 0 (2 = dense path stayed on). */
static int64_t run_case(const pa_column *cols, int ncols, int64_t n, const int *keys, int nk, const agg_spec *aggs,
                        int na, int parts, int *dense_state)
{
    kn_ctx ctx = {g_dev, g_s};
    kn_agg_slot slots[2 * 16];
    kn_agg_fin fins[16];
    int slot_col[32], ns = 0;
    pa_type kt[8];
    for (int k = 0; k < nk; k++)
        kt[k] = cols[keys[k]].type;
    for (int a = 0; a < na; a++) {
        const agg_spec *ag = &aggs[a];
        pa_type at = ag->col >= 0 ? cols[ag->col].type : T_BIG;
        fins[a] = (kn_agg_fin){.kind = ag->kind, .out_type = out_type(ag, at)};
        kn_agg_op vop = ag->kind == KN_AGG_FIN_COUNT ? ag->op
                        : ag->kind == KN_AGG_FIN_MINMAX ? ag->op : KN_AGG_SUM;
        slot_col[ns] = ag->col;
        slots[ns] = (kn_agg_slot){vop, at};
        fins[a].value_slot = ns++;
        if (ag->kind != KN_AGG_FIN_COUNT) {
            slot_col[ns] = ag->col;
            slots[ns] = (kn_agg_slot){KN_AGG_COUNT, at};
            fins[a].count_slot = ns++;
        }
    }
    kn_agg_layout L;
    OK(kn_agg_layout_init(&L, kt, nk, slots, ns, &err));
    pa_column dc[16];
    for (int c = 0; c < ncols; c++)
        dc[c] = col_up(&cols[c]);
    tab part[4];
    for (int p = 0; p < parts; p++)
        tab_make(&part[p], &L, 16, 16);
    size_t sb = kn_agg_update_scratch(&L, 4096);
    void *scratch;
    OK(dv_alloc(g_dev, sb, &scratch, &err));
    int64_t start = 0;
    while (start < n) {
        /* chunk sizes: 0, small, odd, up to 4096; multiples of 8 but the last */
        int64_t m = below(5) == 0 ? 0 : 8 * (1 + below(512));
        if (start + m > n)
            m = n - start;
        tab *t = &part[below(parts)];
        pa_column kcol[8], acol[32];
        for (int k = 0; k < nk; k++)
            kcol[k] = col_slice(&dc[keys[k]], start, m);
        for (int s = 0; s < ns; s++)
            acol[s] = slot_col[s] >= 0 ? col_slice(&dc[slot_col[s]], start, m) : (pa_column){0};
        int64_t *need;
        OK(dv_host_alloc(g_dev, 8, (void **)&need, &err));
        OK(kn_agg_input_bytes(&ctx, &t->t, kcol, acol, m, need, &err));
        OK(dv_stream_sync(g_s, &err));
        tab_reserve(t, m, *need);
        dv_host_free(g_dev, need);
        uint32_t *gids = NULL;
        OK(kn_agg_update(&ctx, &t->t, kcol, acol, m, scratch, sb, gids, &err));
        start += m;
    }
    if (dense_state) {
        kn_agg_hdr h;
        OK(dv_copy_async(g_s, &h, part[0].t.hdr, sizeof h, DV_COPY_D2H, &err));
        OK(dv_stream_sync(g_s, &err));
        *dense_state = h.dense;
    }
    /* merge partials into a fresh table */
    tab fin;
    tab_make(&fin, &L, 16, 16);
    for (int p = 0; p < parts; p++) {
        OK(dv_stream_sync(g_s, &err));
        tab_reserve(&fin, kn_agg_groups(&part[p].t), kn_agg_arena_used(&part[p].t));
        OK(kn_agg_merge(&ctx, &fin.t, &part[p].t, NULL, NULL, &err));
    }
    int64_t ng, got_ng;
    char **want = reference(cols, n, keys, nk, aggs, na, &ng);
    OK(dv_stream_sync(g_s, &err));
    got_ng = kn_agg_groups(&fin.t);
    char **got = emit_lines(&fin, fins, na);
    for (int64_t i = 0; i < ng && i < got_ng; i++)
        if (strcmp(want[i], got[i]) != 0)
            fail_msg("group %lld: want '%s' got '%s'", (long long)i, want[i], got[i]);
    assert_int_equal(got_ng, ng);
    free_lines(got, got_ng);
    tab_free(&fin);
    merge_partitioned(part, parts, fins, na, want, ng);
    free_lines(want, ng);
    for (int p = 0; p < parts; p++)
        tab_free(&part[p]);
    dv_free(g_dev, scratch);
    for (int c = 0; c < ncols; c++)
        col_up_free(&dc[c]);
    return ng;
}

/* ------------------------------------------------------------------ tests */

enum { NCOL = 9 };
static pa_column g_cols[NCOL];

static void make_dataset(int64_t n)
{
    g_cols[0] = make_col(T_INT, n, 20, 10, false);
    g_cols[1] = make_col(T_STR, n, 30, 10, false);
    g_cols[2] = make_col(T_BIG, n, 5000, 10, false);
    g_cols[3] = make_col(T_DBL, n, 50, 5, false);
    g_cols[4] = make_col(T_DEC, n, 1000, 10, false);
    g_cols[5] = make_col(T_DEC128, n, 100, 10, true);
    g_cols[6] = make_col(T_DATE, n, 40, 0, false);
    g_cols[7] = make_col(T_BOOL, n, 2, 20, false);
    g_cols[8] = make_col(T_STR, n, 500, 0, true);
}

static void free_dataset(void)
{
    for (int c = 0; c < NCOL; c++)
        col_free(&g_cols[c]);
}

/* Every aggregate over every type, grouped by every key type and a few
 * combinations, fed to 1..3 partial tables. */
static void test_every_type(void **state)
{
    int64_t n = 12000;
    make_dataset(n);
    agg_spec aggs[48];
    int na = 0;
    aggs[na++] = (agg_spec){KN_AGG_FIN_COUNT, KN_AGG_COUNT_STAR, -1};
    for (int c = 0; c < NCOL; c++) {
        pa_type_id t = g_cols[c].type.id;
        aggs[na++] = (agg_spec){KN_AGG_FIN_COUNT, KN_AGG_COUNT, c};
        aggs[na++] = (agg_spec){KN_AGG_FIN_MINMAX, KN_AGG_MIN, c};
        aggs[na++] = (agg_spec){KN_AGG_FIN_MINMAX, KN_AGG_MAX, c};
        if (t == PA_TYPE_INTEGER || t == PA_TYPE_BIGINT || t == PA_TYPE_DOUBLE || t == PA_TYPE_DECIMAL) {
            aggs[na++] = (agg_spec){KN_AGG_FIN_SUM, KN_AGG_SUM, c};
            aggs[na++] = (agg_spec){KN_AGG_FIN_AVG, KN_AGG_SUM, c};
        }
    }
    /* 1 + 9 * 3 + 5 * 2 = 38 aggregates: split in two runs (16 per run). */
    static const int keysets[][4] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {0, 1}, {1, 8, 7}, {2, 5, 6}, {3, 7}};
    static const int nks[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 3, 2};
    for (size_t ks = 0; ks <= sizeof nks / sizeof nks[0]; ks++) {
        int nk = ks < sizeof nks / sizeof nks[0] ? nks[ks] : 0;
        for (int from = 0; from < na; from += 14) {
            int cnt = na - from < 14 ? na - from : 14;
            int64_t g = run_case(g_cols, NCOL, n, keysets[ks < 13 ? ks : 0], nk, aggs + from, cnt, 1 + (int)(ks % 3),
                                 NULL);
            assert_true(g >= 1);
        }
    }
    free_dataset();
}

/* The time types stored as int64 group and take MIN, MAX and COUNT as
 * BIGINT: the BIGINT column relabelled as each. INTERVAL MIN/MAX order by
 * the normalised length; INTERVAL keys and SUM are refused. */
static void test_time_types(void **state)
{
    int64_t n = 6000;
    make_dataset(n);
    const pa_type_id ids[] = {PA_TYPE_TIMESTAMP, PA_TYPE_TIMESTAMPTZ, PA_TYPE_TIME, PA_TYPE_TIMESTAMP_NS};
    agg_spec aggs[] = {{KN_AGG_FIN_COUNT, KN_AGG_COUNT_STAR, -1}, {KN_AGG_FIN_COUNT, KN_AGG_COUNT, 2},
                       {KN_AGG_FIN_MINMAX, KN_AGG_MIN, 2},        {KN_AGG_FIN_MINMAX, KN_AGG_MAX, 2},
                       {KN_AGG_FIN_MINMAX, KN_AGG_MIN, 0}};
    static const int keysets[][2] = {{2}, {0, 2}, {6}};
    for (int t = 0; t < 4; t++) {
        g_cols[2].type.id = ids[t];
        for (int ks = 0; ks < 3; ks++)
            assert_true(run_case(g_cols, NCOL, n, keysets[ks], ks == 1 ? 2 : 1, aggs, 5, 1 + ks, NULL) >= 1);
    }
    g_cols[2].type.id = PA_TYPE_BIGINT;
    free_dataset();
    /* MIN and MAX of INTERVALs by the normalised length (a month as 30
     * days), grouped and not, over 1..3 partial tables. */
    const pa_type T_IV = {PA_TYPE_INTERVAL, 0, 0};
    pa_column cols[2] = {make_col(T_INT, n, 20, 10, false), make_col(T_IV, n, 3000, 10, false)};
    agg_spec iv_aggs[] = {{KN_AGG_FIN_MINMAX, KN_AGG_MIN, 1}, {KN_AGG_FIN_MINMAX, KN_AGG_MAX, 1},
                          {KN_AGG_FIN_COUNT, KN_AGG_COUNT, 1}};
    const int key0[1] = {0};
    for (int parts = 1; parts <= 3; parts++) {
        assert_true(run_case(cols, 2, n, key0, 1, iv_aggs, 3, parts, NULL) > 1);
        if (parts == 2)   /* as test_every_type's ungrouped case (one partial: see the report) */
            assert_int_equal(run_case(cols, 2, n, key0, 0, iv_aggs, 3, parts, NULL), 1);
    }
    col_free(&cols[0]);
    col_free(&cols[1]);
    /* INTERVAL keys and SUM are refused, naming the type. */
    kn_agg_layout L;
    kn_agg_slot cnt = {KN_AGG_COUNT, T_IV}, sum = {KN_AGG_SUM, T_IV};
    assert_int_equal(kn_agg_layout_init(&L, &T_IV, 1, &cnt, 1, &err), PA_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "INTERVAL"));
    pa_err_clear(&err);
    assert_int_equal(kn_agg_layout_init(&L, &T_INT, 1, &sum, 1, &err), PA_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "INTERVAL"));
    pa_err_clear(&err);
}

/* Many groups (more than a chunk, forcing several growths) and a single group. */
static void test_many_and_one_group(void **state)
{
    int64_t n = 40000;
    pa_column c[3];
    c[0] = make_col(T_BIG, n, 1 << 30, 0, false);
    c[1] = make_col(T_STR, n, 1 << 20, 3, false);
    c[2] = make_col(T_INT, n, 1, 0, false);
    agg_spec aggs[] = {{KN_AGG_FIN_COUNT, KN_AGG_COUNT_STAR, -1}, {KN_AGG_FIN_SUM, KN_AGG_SUM, 2},
                       {KN_AGG_FIN_MINMAX, KN_AGG_MAX, 1}};
    int k0[] = {0}, k1[] = {1, 0}, k2[] = {2};
    assert_true(run_case(c, 3, n, k0, 1, aggs, 3, 2, NULL) > 30000);
    assert_true(run_case(c, 3, n, k1, 2, aggs, 3, 3, NULL) > 30000);
    assert_int_equal(run_case(c, 3, n, k2, 1, aggs, 3, 2, NULL), 1);
    for (int i = 0; i < 3; i++)
        col_free(&c[i]);
}

/* Small domains take the dense path; a chunk out of its range turns it off
 * without changing results. */
static void test_dense_path(void **state)
{
    int64_t n = 20000;
    pa_column c[4];
    /* like TPC-H Q1's flags: 1-character strings, here with NULLs too */
    c[0] = make_col(T_STR, n, 2, 0, false);
    c[1] = make_col(T_STR, n, 2, 10, false);
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; i < n; i++) {
            ((char *)c[k].data)[i] = k ? "FO"[below(2)] : "ANR"[below(3)];
            c[k].offsets[i + 1] = (int32_t)i + 1;
        }
    }
    c[2] = make_col(T_INT, n, 10, 5, false);
    c[3] = make_col(T_DEC, n, 1000, 0, false);
    for (int64_t i = 0; i < n; i++)
        ((int32_t *)c[2].data)[i] = (int32_t)(i % 10) - 5;
    agg_spec aggs[] = {{KN_AGG_FIN_COUNT, KN_AGG_COUNT_STAR, -1}, {KN_AGG_FIN_SUM, KN_AGG_SUM, 3},
                       {KN_AGG_FIN_AVG, KN_AGG_SUM, 3}, {KN_AGG_FIN_MINMAX, KN_AGG_MIN, 3}};
    int keys[] = {0, 1, 2};
    int dense = -1;
    /* The dense map is the cpu loops' path; the GPU kernels (cuda, and
     * their emulation on sim) group through the hash index and say so. */
    bool cpu = dv_kind_of(g_dev) == DV_KIND_CPU;
    run_case(c, 4, n, keys, 3, aggs, 4, 1, &dense);
    assert_int_equal(dense, cpu ? 2 : 0);
    /* Later rows leave the range of the first chunk. */
    for (int64_t i = n / 2; i < n; i++)
        ((int32_t *)c[2].data)[i] += (int32_t)(i % 3) * 100000;
    run_case(c, 4, n, keys, 3, aggs, 4, 1, &dense);
    assert_int_equal(dense, 0);
    for (int i = 0; i < 4; i++)
        col_free(&c[i]);
}

/* Empty input: a global aggregate has one row (COUNT 0, NULL sums), a
 * grouped one none. */
static void test_empty(void **state)
{
    pa_column c[2];
    c[0] = make_col(T_INT, 0, 10, 0, false);
    c[1] = make_col(T_DEC, 0, 10, 0, false);
    agg_spec aggs[] = {{KN_AGG_FIN_COUNT, KN_AGG_COUNT_STAR, -1}, {KN_AGG_FIN_COUNT, KN_AGG_COUNT, 1},
                       {KN_AGG_FIN_SUM, KN_AGG_SUM, 1}, {KN_AGG_FIN_AVG, KN_AGG_SUM, 1},
                       {KN_AGG_FIN_MINMAX, KN_AGG_MIN, 0}};
    int keys[] = {0};
    assert_int_equal(run_case(c, 2, 0, keys, 0, aggs, 5, 2, NULL), 1);
    assert_int_equal(run_case(c, 2, 0, keys, 1, aggs, 5, 2, NULL), 0);
    /* and the global row is "0|0|||" */
    int64_t ng;
    char **l = reference(c, 0, keys, 0, aggs, 5, &ng);
    assert_string_equal(l[0], "0|0||||");
    free_lines(l, ng);
    col_free(&c[0]);
    col_free(&c[1]);
}

/* DECIMAL sums are exact beyond int64; a BIGINT sum that leaves int64 is
 * PA_EOVERFLOW. */
static void test_wide_sums(void **state)
{
    kn_ctx ctx = {g_dev, g_s};
    int64_t n = 100;
    pa_column d = make_col((pa_type){PA_TYPE_DECIMAL, 18, 2}, n, 1, 0, false);
    pa_column b = make_col(T_BIG, n, 1, 0, false);
    for (int64_t i = 0; i < n; i++) {
        ((int64_t *)d.data)[i] = 999999999999999999LL;   /* 9999999999999999.99 */
        ((int64_t *)b.data)[i] = INT64_MAX / 50;
    }
    kn_agg_slot slots[] = {{KN_AGG_SUM, d.type}, {KN_AGG_COUNT, d.type}, {KN_AGG_SUM, b.type}};
    kn_agg_layout L;
    OK(kn_agg_layout_init(&L, NULL, 0, slots, 3, &err));
    tab t;
    tab_make(&t, &L, 4, 0);
    pa_column dd = col_up(&d), db = col_up(&b);
    pa_column args[3] = {dd, dd, db};
    size_t sb = kn_agg_update_scratch(&L, n);
    void *scratch;
    OK(dv_alloc(g_dev, sb, &scratch, &err));
    OK(kn_agg_update(&ctx, &t.t, NULL, args, n, scratch, sb, NULL, &err));
    kn_agg_fin f = {KN_AGG_FIN_SUM, 0, 1, {PA_TYPE_DECIMAL, 38, 2}};
    char **l = emit_lines(&t, &f, 1);
    assert_string_equal(l[0], "999999999999999999.00|");   /* > INT64_MAX scaled */
    free_lines(l, 1);
    f = (kn_agg_fin){KN_AGG_FIN_SUM, 2, 1, T_BIG};
    pa_column o = {.type = T_BIG, .length = 1};
    OK(dv_alloc(g_dev, 8, &o.data, &err));
    OK(dv_alloc(g_dev, 1, (void **)&o.validity, &err));
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_agg_emit(&ec, &t.t, &f, 0, 1, &o, &err)), PA_EOVERFLOW);
    pa_err_clear(&err);
    dv_free(g_dev, o.data);
    dv_free(g_dev, o.validity);
    dv_free(g_dev, scratch);
    col_up_free(&dd);
    col_up_free(&db);
    tab_free(&t);
    col_free(&d);
    col_free(&b);
}

/* AVG of BIGINT and DECIMAL is DuckDB's long double quotient
 * sum / (count * 10^scale) rounded to double (kn_agg_emit.c); the GPU
 * kernels redo each x87 rounding in integers. Random sums of every size
 * and counts 1..9, each AVG compared bit for bit with the host's long
 * double. */
static void test_avg_rounding(void **state)
{
    kn_ctx ctx = {g_dev, g_s};
    static const pa_type types[] = {{PA_TYPE_BIGINT, 0, 0},   {PA_TYPE_DECIMAL, 18, 2},
                                    {PA_TYPE_DECIMAL, 18, 7}, {PA_TYPE_DECIMAL, 18, 17},
                                    {PA_TYPE_DECIMAL, 38, 3}, {PA_TYPE_DECIMAL, 38, 21},
                                    {PA_TYPE_DECIMAL, 38, 37}};
    enum { G = 600 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        pa_type vt = types[ti];
        bool wide = pa_type_bytes(vt) == 16;
        int64_t n = 0, cnt[G];
        for (int g = 0; g < G; g++)
            n += cnt[g] = 1 + below(9);
        pa_column k = make_col(T_INT, n, 1, 0, false), v = make_col(vt, n, 1, 0, false);
        __int128 sum[G] = {0};
        int64_t left[G];
        memcpy(left, cnt, sizeof left);
        /* rows of group g until its count is used up, groups interleaved */
        for (int64_t i = 0, g = 0; i < n; g = (g + 1) % G) {
            if (!left[g])
                continue;
            left[g]--;
            ((int32_t *)k.data)[i] = (int32_t)g;
            /* magnitudes from 1 digit to the type's limit (sums stay inside 128 bits) */
            int bits = 1 + (int)below(wide ? 122 : 62);
            unsigned __int128 r = (unsigned __int128)rnd() << 64 | rnd();
            __int128 x = (__int128)(r & ((((unsigned __int128)1) << bits) - 1));
            if (rnd() & 1)
                x = -x;
            if (wide)
                ((__int128 *)v.data)[i] = x;
            else
                ((int64_t *)v.data)[i] = (int64_t)x;
            sum[g] += x;
            i++;
        }
        kn_agg_slot slots[] = {{KN_AGG_SUM, vt}, {KN_AGG_COUNT, vt}};
        kn_agg_layout L;
        OK(kn_agg_layout_init(&L, &T_INT, 1, slots, 2, &err));
        tab t;
        tab_make(&t, &L, n, 0);   /* room for n new groups, as the contract asks */
        pa_column dk = col_up(&k), dv = col_up(&v);
        pa_column args[2] = {dv, dv};
        size_t sb = kn_agg_update_scratch(&L, n);
        void *scratch;
        OK(dv_alloc(g_dev, sb, &scratch, &err));
        OK(kn_agg_update(&ctx, &t.t, &dk, args, n, scratch, sb, NULL, &err));
        kn_agg_fin f = {KN_AGG_FIN_AVG, 0, 1, T_DBL};
        pa_column ok = {.type = T_INT, .length = G}, oa = {.type = T_DBL, .length = G};
        OK(dv_alloc(g_dev, G * 4, &ok.data, &err));
        OK(dv_alloc(g_dev, G / 8 + 1, (void **)&ok.validity, &err));
        OK(dv_alloc(g_dev, G * 8, &oa.data, &err));
        OK(dv_alloc(g_dev, G / 8 + 1, (void **)&oa.validity, &err));
        OK(kn_agg_emit_key(&ctx, &t.t, 0, 0, G, &ok, &err));
        OK(kn_agg_emit(&ctx, &t.t, &f, 0, G, &oa, &err));
        int32_t keys[G];
        double avg[G];
        OK(dv_copy_async(g_s, keys, ok.data, sizeof keys, DV_COPY_D2H, &err));
        OK(dv_copy_async(g_s, avg, oa.data, sizeof avg, DV_COPY_D2H, &err));
        OK(dv_stream_sync(g_s, &err));
        assert_int_equal(kn_agg_groups(&t.t), G);
        for (int i = 0; i < G; i++) {
            int g = keys[i];
            assert_true(g >= 0 && g < G);
            long double scale = 1;
            for (int d = 0; vt.id == PA_TYPE_DECIMAL && d < vt.scale; d++)
                scale *= 10;
            double want = (double)((long double)sum[g] / ((long double)cnt[g] * scale));
            if (memcmp(&want, &avg[i], 8) != 0)
                fail_msg("type %zu group %d: AVG %.17g, want %.17g (count %lld)", ti, g, avg[i], want,
                         (long long)cnt[g]);
        }
        dv_free(g_dev, ok.data);
        dv_free(g_dev, ok.validity);
        dv_free(g_dev, oa.data);
        dv_free(g_dev, oa.validity);
        dv_free(g_dev, scratch);
        col_up_free(&dk);
        col_up_free(&dv);
        tab_free(&t);
        col_free(&k);
        col_free(&v);
    }
}

/* DOUBLE SUM, MIN and MAX depend on the order rows are folded in (rounding;
 * -0 against 0): every device must give the cpu's bits, which fold each
 * group's rows in row order. Values of every magnitude and sign, zeros of
 * both signs, batches large and small; each state compared bit for bit
 * with the host's fold in row order. */
static void test_double_order(void **state)
{
    kn_ctx ctx = {g_dev, g_s};
    enum { G = 37 };
    int64_t n = 9000;
    pa_column k = make_col(T_INT, n, 1, 0, false), v = make_col(T_DBL, n, 1, 5, false);
    double sum[G] = {0}, mn[G], mx[G];
    for (int g = 0; g < G; g++)
        mn[g] = 1.0 / 0.0, mx[g] = -1.0 / 0.0;
    for (int64_t i = 0; i < n; i++) {
        int g = (int)(below(4) == 0 ? below(3) : below(G));   /* a few big groups */
        ((int32_t *)k.data)[i] = g;
        double x = (double)(int64_t)(rnd() >> 12) * (below(2) ? 1e-9 : 1.0) * (below(5) ? 1.0 : 1e9);
        if (below(2))
            x = -x;
        if (below(20) == 0)
            x = below(2) ? 0.0 : -0.0;
        ((double *)v.data)[i] = x;
        if (!pa_column_valid(&v, i))
            continue;
        sum[g] += x;
        if (x < mn[g])
            mn[g] = x;
        if (x > mx[g])
            mx[g] = x;
    }
    kn_agg_slot slots[] = {{KN_AGG_SUM, T_DBL}, {KN_AGG_COUNT, T_DBL}, {KN_AGG_MIN, T_DBL}, {KN_AGG_MAX, T_DBL}};
    kn_agg_layout L;
    OK(kn_agg_layout_init(&L, &T_INT, 1, slots, 4, &err));
    tab t;
    tab_make(&t, &L, n, 0);
    pa_column dk = col_up(&k), dv = col_up(&v);
    size_t sb = kn_agg_update_scratch(&L, n);
    void *scratch;
    OK(dv_alloc(g_dev, sb, &scratch, &err));
    /* batches of 8 to 4096 rows (the GPU kernels fold small ones in one
     * thread, larger ones per group after a sort) */
    for (int64_t at = 0; at < n;) {
        int64_t m = 8 * (1 + below(below(2) ? 16 : 512));
        if (at + m > n)
            m = n - at;
        pa_column kc = col_slice(&dk, at, m), vc = col_slice(&dv, at, m);
        pa_column args[4] = {vc, vc, vc, vc};
        OK(kn_agg_update(&ctx, &t.t, &kc, args, m, scratch, sb, NULL, &err));
        at += m;
    }
    pa_column ok = {.type = T_INT, .length = G}, o[3];
    OK(dv_alloc(g_dev, G * 4, &ok.data, &err));
    OK(dv_alloc(g_dev, G / 8 + 1, (void **)&ok.validity, &err));
    OK(kn_agg_emit_key(&ctx, &t.t, 0, 0, G, &ok, &err));
    kn_agg_fin f[3] = {{KN_AGG_FIN_SUM, 0, 1, T_DBL}, {KN_AGG_FIN_MINMAX, 2, 1, T_DBL}, {KN_AGG_FIN_MINMAX, 3, 1, T_DBL}};
    double got[3][G];
    int32_t keys[G];
    for (int j = 0; j < 3; j++) {
        o[j] = (pa_column){.type = T_DBL, .length = G};
        OK(dv_alloc(g_dev, G * 8, &o[j].data, &err));
        OK(dv_alloc(g_dev, G / 8 + 1, (void **)&o[j].validity, &err));
        OK(kn_agg_emit(&ctx, &t.t, &f[j], 0, G, &o[j], &err));
        OK(dv_copy_async(g_s, got[j], o[j].data, sizeof got[j], DV_COPY_D2H, &err));
    }
    OK(dv_copy_async(g_s, keys, ok.data, sizeof keys, DV_COPY_D2H, &err));
    OK(dv_stream_sync(g_s, &err));
    assert_int_equal(kn_agg_groups(&t.t), G);
    for (int i = 0; i < G; i++) {
        int g = keys[i];
        const double *want[3] = {&sum[g], &mn[g], &mx[g]};
        for (int j = 0; j < 3; j++)
            if (memcmp(want[j], &got[j][i], 8) != 0)
                fail_msg("group %d, %s: %.17g, want %.17g", g, j == 0 ? "SUM" : j == 1 ? "MIN" : "MAX", got[j][i],
                         *want[j]);
    }
    for (int j = 0; j < 3; j++) {
        dv_free(g_dev, o[j].data);
        dv_free(g_dev, o[j].validity);
    }
    dv_free(g_dev, ok.data);
    dv_free(g_dev, ok.validity);
    dv_free(g_dev, scratch);
    col_up_free(&dk);
    col_up_free(&dv);
    tab_free(&t);
    col_free(&k);
    col_free(&v);
}

/* COUNT(DISTINCT x) per group through (group id, x) pair tables: two
 * workers, merged with ids rewritten, counted into an EXTERN slot. */
static void test_count_distinct(void **state)
{
    kn_ctx ctx = {g_dev, g_s};
    int64_t n = 9000;
    pa_column g = make_col(T_STR, n, 40, 10, false);
    pa_column x = make_col(T_BIG, n, 60, 15, true);
    pa_column dg = col_up(&g), dx = col_up(&x);
    kn_agg_slot slot = {KN_AGG_EXTERN, T_BIG};
    kn_agg_layout L, P;
    OK(kn_agg_layout_init(&L, &g.type, 1, &slot, 1, &err));
    pa_type pk[2] = {T_INT, T_BIG};
    OK(kn_agg_layout_init(&P, pk, 2, NULL, 0, &err));
    tab w[2], pw[2], glob, gpairs;
    size_t sb = kn_agg_update_scratch(&L, n) + kn_agg_update_scratch(&P, n);
    void *scratch;
    uint32_t *gids, *map;
    OK(dv_alloc(g_dev, sb, &scratch, &err));
    OK(dv_alloc(g_dev, (size_t)n * 4, (void **)&gids, &err));
    OK(dv_alloc(g_dev, (size_t)n * 4, (void **)&map, &err));
    tab_make(&glob, &L, n, n * 16);
    tab_make(&gpairs, &P, n, 0);
    for (int i = 0; i < 2; i++) {
        int64_t start = i ? 4000 : 0, m = i ? n - 4000 : 4000;
        tab_make(&w[i], &L, m, m * 16);
        tab_make(&pw[i], &P, m, 0);
        pa_column k = col_slice(&dg, start, m), xs = col_slice(&dx, start, m);
        OK(kn_agg_update(&ctx, &w[i].t, &k, NULL, m, scratch, sb, gids, &err));
        pa_column pair[2] = {{.type = T_INT, .length = m, .data = gids}, xs};
        OK(kn_agg_update(&ctx, &pw[i].t, pair, NULL, m, scratch, sb, NULL, &err));
        OK(kn_agg_merge(&ctx, &glob.t, &w[i].t, NULL, map, &err));
        OK(kn_agg_merge(&ctx, &gpairs.t, &pw[i].t, map, NULL, &err));
    }
    OK(kn_agg_count_distinct(&ctx, &glob.t, 0, &gpairs.t, &err));
    kn_agg_fin f = {KN_AGG_FIN_COUNT, 0, -1, T_BIG};
    OK(dv_stream_sync(g_s, &err));   /* the sizes are pinned outputs */
    int64_t ng = kn_agg_groups(&glob.t);
    char **got = emit_lines(&glob, &f, 1);
    /* reference: for each distinct key, the distinct non-NULL x */
    char **want = calloc((size_t)ng + 1, sizeof *want);
    int64_t nw = 0;
    for (int64_t i = 0; i < n; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = cmp_val(&g, i, j) == 0;
        if (seen)
            continue;
        int64_t cnt = 0;
        for (int64_t j = 0; j < n; j++) {
            if (cmp_val(&g, i, j) != 0 || !pa_column_valid(&x, j))
                continue;
            bool dup = false;
            for (int64_t q = 0; q < j && !dup; q++)
                dup = cmp_val(&g, i, q) == 0 && pa_column_valid(&x, q) && cmp_val(&x, q, j) == 0;
            cnt += !dup;
        }
        char buf[256], line[512];
        fmt_value(&g, i, buf, sizeof buf);
        snprintf(line, sizeof line, "%s|%lld|", buf, (long long)cnt);
        want[nw++] = strdup(line);
    }
    assert_int_equal(nw, ng);
    qsort(want, (size_t)nw, sizeof *want, cmp_str);
    for (int64_t i = 0; i < ng; i++)
        assert_string_equal(want[i], got[i]);
    free_lines(want, nw);
    free_lines(got, ng);
    for (int i = 0; i < 2; i++) {
        tab_free(&w[i]);
        tab_free(&pw[i]);
    }
    tab_free(&glob);
    tab_free(&gpairs);
    dv_free(g_dev, scratch);
    dv_free(g_dev, gids);
    dv_free(g_dev, map);
    col_up_free(&dg);
    col_up_free(&dx);
    col_free(&g);
    col_free(&x);
}

static void test_errors(void **state)
{
    kn_agg_layout L;
    kn_agg_slot bad = {KN_AGG_SUM, T_STR};
    assert_int_equal(kn_agg_layout_init(&L, NULL, 0, &bad, 1, &err), PA_EINVAL);
    pa_err_clear(&err);
    kn_agg_slot cnt = {KN_AGG_COUNT_STAR, T_INT};
    OK(kn_agg_layout_init(&L, &T_INT, 1, &cnt, 1, &err));
    tab t;
    tab_make(&t, &L, 8, 0);
    pa_column c = make_col(T_INT, 64, 100, 0, false), dc = col_up(&c);
    size_t sb = kn_agg_update_scratch(&L, 64);
    void *scratch;
    OK(dv_alloc(g_dev, sb, &scratch, &err));
    /* 64 rows into a table with room for 8 groups: refused, table unchanged */
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_agg_update(&ec, &t.t, &dc, &dc, 64, scratch, sb, NULL, &err)),
                     PA_EINVAL);
    pa_err_clear(&err);
    assert_int_equal(kn_agg_groups(&t.t), 0);
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_agg_update(&ec, &t.t, &dc, &dc, 8, scratch, 8, NULL, &err)),
                     PA_EINVAL);
    pa_err_clear(&err);
    dv_free(g_dev, scratch);
    col_up_free(&dc);
    col_free(&c);
    tab_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type),    cmocka_unit_test(test_time_types),
        cmocka_unit_test(test_many_and_one_group),
        cmocka_unit_test(test_dense_path),    cmocka_unit_test(test_empty),
        cmocka_unit_test(test_wide_sums),     cmocka_unit_test(test_avg_rounding),
        cmocka_unit_test(test_double_order),  cmocka_unit_test(test_count_distinct),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

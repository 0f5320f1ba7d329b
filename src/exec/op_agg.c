/*
 * op_agg.c - AGGREGATE and DISTINCT: builders (output schema, aggregates
 * mapped to shared kernel slots), table memory (create, grow, free) and
 * the operator's global state. The hooks are in op_agg_run.c.
 */
#include "exec/op_agg_int.h"

#include <stdio.h>
#include <string.h>

const ex_op_vt agg_vt = {
    .kind = EX_OP_AGGREGATE,
    .local_init = agg_local_init,
    .local_free = agg_local_free,
    .source_open = agg_source_open,
    .source_next = agg_source_next,
    .sink = agg_sink,
    .combine = agg_combine,
    .finalize = agg_finalize,
    .destroy = agg_destroy,
};

const ex_op_vt distinct_vt = {
    .kind = EX_OP_DISTINCT,
    .local_init = agg_local_init,
    .local_free = agg_local_free,
    .source_open = agg_source_open,
    .source_next = agg_source_next,
    .sink = agg_sink,
    .combine = agg_combine,
    .finalize = agg_finalize,
    .destroy = agg_destroy,
};

/* ------------------------------------------------------------ table memory */

/* Pinned sizes go back once stream ran the kernels that publish to them
 * (at once without a stream; on failure to enqueue it syncs and frees). */
static void sizes_free(dv_device *d, dv_stream *stream, int64_t *sizes)
{
    ex_pinned_free(d, stream, sizes);
}

void agg_tab_free(ex_op *op, dv_stream *stream, agg_tab *a)
{
    if (a->mem)
        ex_free(op, a->mem, a->bytes);
    if (a->sizes)
        sizes_free(a->dev, stream, a->sizes);
    memset(a, 0, sizeof *a);
}

void agg_tab_learn(agg_tab *a, int64_t extra_arena)
{
    if (!a->mem)
        return;
    a->groups = kn_agg_groups(&a->t);
    a->arena = kn_agg_arena_used(&a->t) + extra_arena;
}

int agg_tab_reserve(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t need_groups,
                    int64_t need_arena, pa_err *err)
{
    return agg_tab_reserve_hint(op, kn, a, L, need_groups, need_arena, 0, err);
}

int agg_tab_reserve_hint(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t need_groups,
                         int64_t need_arena, int64_t hint, pa_err *err)
{
    /* A new table starts with the single group of a global aggregate. */
    int64_t groups = a->mem ? a->groups : L->n_keys == 0, used = a->mem ? a->arena : 0;
    if (a->mem && groups + need_groups <= a->t.cap_groups && used + need_arena <= a->t.cap_arena)
        return PA_OK;
    int64_t cg = a->mem ? a->t.cap_groups : 0, ca = a->mem ? a->t.cap_arena : 0;
    int64_t want_g = groups + need_groups, want_a = used + need_arena;
    if (cg < want_g) {
        cg = cg * 2 > want_g ? cg * 2 : want_g;
        /* A table that will clearly need more grows there in one move
         * (each move copies every group so far). */
        if (hint > cg)
            cg = hint + hint / 4;
    }
    if (cg < AGG_MIN_GROUPS)
        cg = AGG_MIN_GROUPS;
    if (ca < want_a)
        ca = ca * 2 > want_a ? ca * 2 : want_a;
    if (L->n_str && ca < 16 * AGG_MIN_GROUPS)
        ca = 16 * AGG_MIN_GROUPS;
    if (cg >= (int64_t)UINT32_MAX - 1)
        return pa_error(err, PA_EUNSUPPORTED, "%s: more than 2^32 groups", op->label);
    agg_tab n = {.dev = kn->dev, .groups = groups, .arena = used};
    int rc;
    n.bytes = kn_agg_table_bytes(L, cg, ca);
    if ((rc = ex_alloc(op, n.bytes, &n.mem, err)) != PA_OK) {
        if (rc != PA_ENOMEM || hint <= 0)
            return rc;
        pa_err_clear(err);   /* the hint was a guess: grow by what is needed */
        return agg_tab_reserve_hint(op, kn, a, L, need_groups, need_arena, 0, err);
    }
    if (a->sizes) {
        n.sizes = a->sizes;   /* the pinned pair is reused across growth */
    } else if ((rc = dv_host_alloc(kn->dev, 2 * sizeof(int64_t), (void **)&n.sizes, err)) != PA_OK) {
        ex_free(op, n.mem, n.bytes);
        return ex_oom(op, rc, err);
    }
    /* The move reads the old block's header, not its pinned sizes. */
    if ((rc = kn_agg_table_init(kn, &n.t, L, n.mem, cg, ca, n.sizes, err)) != PA_OK ||
        (a->mem && (rc = kn_agg_table_move(kn, &n.t, &a->t, err)) != PA_OK)) {
        ex_free(op, n.mem, n.bytes);
        if (!a->sizes)
            sizes_free(kn->dev, kn->stream, n.sizes);
        return rc;
    }
    if (a->mem)
        ex_free(op, a->mem, a->bytes);
    *a = n;
    return PA_OK;
}

int agg_tab_fresh(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t cap, int64_t arena,
                  pa_err *err)
{
    if (!a->mem || cap < 1 || kn_agg_table_bytes(L, cap, arena) > a->bytes) {
        agg_tab_free(op, kn->stream, a);
        return agg_tab_reserve(op, kn, a, L, cap, arena, err);
    }
    int rc = kn_agg_table_init(kn, &a->t, L, a->mem, cap, arena, a->sizes, err);
    a->groups = L->n_keys == 0;
    a->arena = 0;
    return rc;
}

/* ------------------------------------------------------------------ build */

static const char *kind_name(ex_agg_kind k)
{
    switch (k) {
    case EX_AGG_SUM: return "sum";
    case EX_AGG_COUNT: return "count";
    case EX_AGG_COUNT_STAR: return "count_star";
    case EX_AGG_COUNT_DISTINCT: return "count_distinct";
    case EX_AGG_AVG: return "avg";
    case EX_AGG_MIN: return "min";
    case EX_AGG_MAX: return "max";
    }
    return "?";
}

int ex_agg_type(ex_agg_kind k, pa_type arg, pa_type *out, pa_err *err)
{
    const pa_type t_bigint = {PA_TYPE_BIGINT, 0, 0}, t_double = {PA_TYPE_DOUBLE, 0, 0};
    bool numeric = arg.id == PA_TYPE_INTEGER || arg.id == PA_TYPE_BIGINT || arg.id == PA_TYPE_DECIMAL ||
                   pa_type_is_float(arg.id);
    switch (k) {
    case EX_AGG_COUNT_STAR:
    case EX_AGG_COUNT:
    case EX_AGG_COUNT_DISTINCT:
        *out = t_bigint;
        break;
    case EX_AGG_SUM:
    case EX_AGG_AVG:
        if (!numeric)
            return pa_error(err, PA_EINVAL, "aggregate: %s of a %s column", kind_name(k),
                            (unsigned)arg.id < PA_TYPE__COUNT ? pa_type_name(arg.id) : "bad");
        if (k == EX_AGG_AVG || pa_type_is_float(arg.id))   /* SUM(REAL) is DOUBLE, as DuckDB's */
            *out = t_double;
        else if (arg.id == PA_TYPE_DECIMAL)
            *out = (pa_type){PA_TYPE_DECIMAL, 38, arg.scale};
        else
            *out = t_bigint;
        break;
    case EX_AGG_MIN:
    case EX_AGG_MAX:
        if ((unsigned)arg.id >= PA_TYPE__COUNT)
            return pa_error(err, PA_EINVAL, "aggregate: %s of a bad type", kind_name(k));
        *out = arg;
        break;
    default:
        return pa_error(err, PA_EINVAL, "aggregate: unknown kind %d", (int)k);
    }
    return PA_OK;
}

/* Index of slot (op, column), added if new. */
static int slot_of(agg_state *s, kn_agg_slot *slots, int *n, kn_agg_op kop, int col, pa_type type, bool share)
{
    for (int i = 0; share && i < *n; i++)
        if (slots[i].op == kop && s->slot_col[i] == col)
            return i;
    if (*n >= KN_AGG_MAX_SLOTS)
        return -1;
    slots[*n] = (kn_agg_slot){kop, type};
    s->slot_col[*n] = col;
    return (*n)++;
}

/* Which tables keep strings in their arena (string keys, MIN/MAX of
 * VARCHAR) and whether a result column is VARCHAR: where the sizes of
 * string bytes must be counted. */
static void string_flags(agg_state *s)
{
    s->str_in[0] = s->str_out = s->L.n_str > 0;
    for (int i = 0; i < s->L.n_slots; i++) {
        const kn_agg_slot *sl = &s->L.slots[i];
        s->str_in[0] |= (sl->op == KN_AGG_MIN || sl->op == KN_AGG_MAX) && pa_type_is_varlen(sl->type.id);
    }
    for (int j = 0; j < s->n_dist; j++)
        s->str_in[1 + j] = s->Ld[j].n_str > 0;
    for (int i = 0; i < s->n_aggs; i++)
        s->str_out |= pa_type_is_varlen(s->fin[i].out_type.id);
}

static int build(ex_plan *p, const ex_op_vt *vt, ex_op *input, const int *group_cols, int n_groups,
                 const ex_agg *aggs, int n_aggs, const char *const *names, ex_op **out, pa_err *err)
{
    if (!p || !input || n_groups < 0 || n_aggs < 0 || (n_groups && !group_cols) || (n_aggs && !aggs))
        return pa_error(err, PA_EINVAL, "aggregate: bad arguments");
    int nin = ex_op_columns(input);
    agg_state *s = ex_plan_alloc(p, sizeof *s);
    int *kc = ex_plan_alloc(p, (size_t)(n_groups + 1) * sizeof *kc);
    kn_agg_fin *fin = ex_plan_alloc(p, (size_t)(n_aggs + 1) * sizeof *fin);
    if (!s || !kc || !fin)
        return pa_error(err, PA_ENOMEM, "aggregate: out of memory");
    pa_type ktypes[KN_AGG_MAX_KEYS];
    if (n_groups > KN_AGG_MAX_KEYS)
        return pa_error(err, PA_EINVAL, "aggregate: %d group columns (at most %d)", n_groups, KN_AGG_MAX_KEYS);
    for (int k = 0; k < n_groups; k++) {
        if (group_cols[k] < 0 || group_cols[k] >= nin)
            return pa_error(err, PA_EINVAL, "aggregate: group column %d out of range", group_cols[k]);
        kc[k] = group_cols[k];
        ktypes[k] = ex_op_column_type(input, kc[k]);
    }
    kn_agg_slot slots[KN_AGG_MAX_SLOTS];
    int ns = 0;
    pa_type otypes[KN_AGG_MAX_SLOTS];
    const pa_type t_bigint = {PA_TYPE_BIGINT, 0, 0};
    for (int i = 0; i < n_aggs; i++) {
        const ex_agg *a = &aggs[i];
        bool star = a->kind == EX_AGG_COUNT_STAR;
        if (!star && (a->column < 0 || a->column >= nin))
            return pa_error(err, PA_EINVAL, "aggregate %d: column %d out of range", i, a->column);
        pa_type at = star ? t_bigint : ex_op_column_type(input, a->column);
        int trc = ex_agg_type(a->kind, at, &otypes[i], err);
        if (trc != PA_OK)
            return trc;
        kn_agg_fin *f = &fin[i];
        int c = star ? -1 : a->column;
        switch (a->kind) {
        case EX_AGG_COUNT_STAR:
        case EX_AGG_COUNT:
            f->kind = KN_AGG_FIN_COUNT;
            f->value_slot = slot_of(s, slots, &ns, star ? KN_AGG_COUNT_STAR : KN_AGG_COUNT, c, at, true);
            break;
        case EX_AGG_COUNT_DISTINCT: {
            int j = 0;
            while (j < s->n_dist && s->dist_col[j] != c)
                j++;
            if (j == AGG_MAX_DISTINCT)
                return pa_error(err, PA_EUNSUPPORTED, "aggregate: more than %d COUNT(DISTINCT) columns",
                                AGG_MAX_DISTINCT);
            if (j == s->n_dist) {
                s->dist_col[s->n_dist++] = c;
                f->value_slot = slot_of(s, slots, &ns, KN_AGG_EXTERN, -2 - j, at, false);
            } else {
                f->value_slot = slot_of(s, slots, &ns, KN_AGG_EXTERN, -2 - j, at, true);
            }
            f->kind = KN_AGG_FIN_COUNT;
            break;
        }
        case EX_AGG_SUM:
        case EX_AGG_AVG:
            f->kind = a->kind == EX_AGG_SUM ? KN_AGG_FIN_SUM : KN_AGG_FIN_AVG;
            f->value_slot = slot_of(s, slots, &ns, KN_AGG_SUM, c, at, true);
            f->count_slot = slot_of(s, slots, &ns, KN_AGG_COUNT, c, at, true);
            break;
        case EX_AGG_MIN:
        case EX_AGG_MAX:
            f->kind = KN_AGG_FIN_MINMAX;
            f->value_slot = slot_of(s, slots, &ns, a->kind == EX_AGG_MIN ? KN_AGG_MIN : KN_AGG_MAX, c, at, true);
            f->count_slot = slot_of(s, slots, &ns, KN_AGG_COUNT, c, at, true);
            break;
        }
        if (f->value_slot < 0 || (f->kind != KN_AGG_FIN_COUNT && f->count_slot < 0))
            return pa_error(err, PA_EINVAL, "aggregate: more than %d aggregate slots", KN_AGG_MAX_SLOTS);
        f->out_type = otypes[i];
    }
    int rc = kn_agg_layout_init(&s->L, ktypes, n_groups, slots, ns, err);
    for (int j = 0; rc == PA_OK && j < s->n_dist; j++) {
        pa_type dk[2] = {{PA_TYPE_INTEGER, 0, 0}, ex_op_column_type(input, s->dist_col[j])};
        rc = kn_agg_layout_init(&s->Ld[j], dk, 2, NULL, 0, err);
    }
    if (rc != PA_OK)
        return rc;
    s->n_keys = n_groups;
    s->key_cols = kc;
    s->n_aggs = n_aggs;
    s->fin = fin;
    string_flags(s);

    ex_op *op;
    if ((rc = ex_op_new(p, vt, n_groups + n_aggs, &op, err)) != PA_OK)
        return rc;
    for (int k = 0; k < n_groups && rc == PA_OK; k++)
        rc = ex_op_set_column(op, k, ex_op_column_name(input, kc[k]), ktypes[k], err);
    for (int i = 0; i < n_aggs && rc == PA_OK; i++) {
        char buf[160];
        const char *nm = names ? names[i] : NULL;
        if (!nm) {
            if (aggs[i].kind == EX_AGG_COUNT_STAR)
                snprintf(buf, sizeof buf, "count_star()");
            else if (aggs[i].kind == EX_AGG_COUNT_DISTINCT)
                snprintf(buf, sizeof buf, "count(DISTINCT %s)", ex_op_column_name(input, aggs[i].column));
            else
                snprintf(buf, sizeof buf, "%s(%s)", kind_name(aggs[i].kind), ex_op_column_name(input, aggs[i].column));
            nm = buf;
        }
        rc = ex_op_set_column(op, n_groups + i, nm, otypes[i], err);
    }
    if (rc != PA_OK)
        return rc;
    op->child[0] = input;
    op->n_child = 1;
    op->state = s;
    if (vt == &agg_vt)
        snprintf(op->label, sizeof op->label, "AGGREGATE %d keys, %d aggregates", n_groups, n_aggs);
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        return pa_error(err, PA_EINTERNAL, "aggregate: mutex");
    *out = op;
    return PA_OK;
}

static bool is_iv(const ex_op *input, int col)
{
    return col >= 0 && col < ex_op_columns(input) && ex_op_column_type(input, col).id == PA_TYPE_INTERVAL;
}

/* Aggregation with INTERVAL group columns or COUNT(DISTINCT interval): the
 * group tables key by bytes, and equal INTERVALs may differ in bytes ('1 mon',
 * '30 days'). So a projection below adds each one's normalised length
 * (ex_expr_interval_key), the aggregation groups (or counts distinct) by that,
 * MIN of the INTERVAL gives a group's value (one of its values, as
 * PostgreSQL gives the first it saw), and a projection above puts it where
 * the group column was. */
static int interval_keys(ex_plan *p, ex_op *input, const int *group_cols, int n_groups, const ex_agg *aggs,
                         int n_aggs, const char *const *names, ex_op **out, pa_err *err)
{
    int nin = ex_op_columns(input);
    if (n_groups > KN_AGG_MAX_KEYS || n_aggs > KN_AGG_MAX_SLOTS)
        return pa_error(err, PA_EINVAL, "aggregate: %d group columns and %d aggregates (at most %d and %d)",
                        n_groups, n_aggs, KN_AGG_MAX_KEYS, KN_AGG_MAX_SLOTS);
    int *cols = ex_plan_alloc(p, (size_t)(n_groups + n_aggs + 1) * sizeof *cols);
    ex_expr **ex = ex_plan_alloc(p, (size_t)(nin + n_groups + n_aggs + 1) * sizeof *ex);
    int *g = ex_plan_alloc(p, (size_t)(n_groups + 1) * sizeof *g);
    ex_agg *a = ex_plan_alloc(p, (size_t)(n_aggs + n_groups + 1) * sizeof *a);
    const char **an = ex_plan_alloc(p, (size_t)(n_aggs + n_groups + 1) * sizeof *an);
    if (!cols || !ex || !g || !a || !an)
        return pa_error(err, PA_ENOMEM, "aggregate: out of memory");
    int nx = nin;   /* input columns, then one key per INTERVAL column used */
    for (int i = 0; i < nin; i++)
        if (!(ex[i] = ex_expr_col(p, input, i, err)))
            return err->code;
    int n_src = 0;   /* cols[j]: the INTERVAL input column of key nin + j */
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? n_aggs : n_groups;
        for (int i = 0; i < n; i++) {
            int c = pass ? (aggs[i].kind == EX_AGG_COUNT_DISTINCT ? aggs[i].column : -1) : group_cols[i];
            if (!is_iv(input, c))
                continue;
            int j = 0;
            while (j < n_src && cols[j] != c)
                j++;
            if (j == n_src) {
                cols[n_src++] = c;
                if (!(ex[nx++] = ex_expr_interval_key(p, ex_expr_col(p, input, c, err), err)))
                    return err->code ? err->code : PA_EINTERNAL;
            }
        }
    }
    ex_op *below;
    int rc = ex_project(p, input, ex, NULL, nx, &below, err);
    if (rc != PA_OK)
        return rc;
    int na = n_aggs;
    for (int i = 0; i < n_aggs; i++) {
        a[i] = aggs[i];
        an[i] = names ? names[i] : NULL;
    }
    for (int i = 0; i < n_groups; i++) {
        g[i] = group_cols[i];
        for (int j = 0; j < n_src; j++)
            if (cols[j] == group_cols[i]) {
                g[i] = nin + j;
                an[na] = "interval";
                a[na++] = (ex_agg){EX_AGG_MIN, group_cols[i]};
            }
    }
    for (int i = 0; i < n_aggs; i++)
        for (int j = 0; j < n_src; j++)
            if (a[i].kind == EX_AGG_COUNT_DISTINCT && cols[j] == a[i].column)
                a[i].column = nin + j;
    ex_op *agg;
    if ((rc = build(p, &agg_vt, below, g, n_groups, a, na, an, &agg, err)) != PA_OK)
        return rc;
    /* Above: the group columns (an INTERVAL one from its MIN), then the aggregates. */
    const char **on = ex_plan_alloc(p, (size_t)(n_groups + n_aggs + 1) * sizeof *on);
    if (!on)
        return pa_error(err, PA_ENOMEM, "aggregate: out of memory");
    for (int i = 0, m = n_groups + n_aggs; i < n_groups + n_aggs; i++) {
        int from = i;
        if (i < n_groups && is_iv(input, group_cols[i]))
            from = m++;
        on[i] = i < n_groups ? ex_op_column_name(input, group_cols[i]) : ex_op_column_name(agg, i);
        if (!(ex[i] = ex_expr_col(p, agg, from, err)))
            return err->code;
    }
    return ex_project(p, agg, ex, on, n_groups + n_aggs, out, err);
}

static bool needs_interval_keys(const ex_op *input, const int *group_cols, int n_groups, const ex_agg *aggs,
                                int n_aggs)
{
    for (int i = 0; i < n_groups; i++)
        if (is_iv(input, group_cols[i]))
            return true;
    for (int i = 0; i < n_aggs; i++)
        if (aggs[i].kind == EX_AGG_COUNT_DISTINCT && is_iv(input, aggs[i].column))
            return true;
    return false;
}

int ex_aggregate(ex_plan *p, ex_op *input, const int *group_cols, int n_groups, const ex_agg *aggs, int n_aggs,
                 const char *const *names, ex_op **out, pa_err *err)
{
    if (p && input && n_groups >= 0 && n_aggs >= 0 && (!n_groups || group_cols) && (!n_aggs || aggs) &&
        needs_interval_keys(input, group_cols, n_groups, aggs, n_aggs))
        return interval_keys(p, input, group_cols, n_groups, aggs, n_aggs, names, out, err);
    return build(p, &agg_vt, input, group_cols, n_groups, aggs, n_aggs, names, out, err);
}

int ex_distinct(ex_plan *p, ex_op *input, ex_op **out, pa_err *err)
{
    if (!input)
        return pa_error(err, PA_EINVAL, "distinct: no input");
    int n = ex_op_columns(input);
    if (n < 1 || n > KN_AGG_MAX_KEYS)
        return pa_error(err, PA_EINVAL, "distinct: %d columns (1 to %d)", n, KN_AGG_MAX_KEYS);
    int cols[KN_AGG_MAX_KEYS];
    for (int i = 0; i < n; i++)
        cols[i] = i;
    if (needs_interval_keys(input, cols, n, NULL, 0))
        return interval_keys(p, input, cols, n, NULL, 0, NULL, out, err);
    return build(p, &distinct_vt, input, cols, n, NULL, 0, NULL, out, err);
}

void agg_destroy(ex_op *op)
{
    agg_state *s = op->state;
    if (!s)
        return;
    agg_tab_free(op, NULL, &s->g);
    agg_free_parts(op, NULL, s);
    for (int j = 0; j < s->n_dist; j++)
        agg_tab_free(op, NULL, &s->gd[j]);
    dv_event_destroy(s->g_ev);
    s->g_ev = NULL;
    pthread_mutex_destroy(&s->mu);
    op->state = NULL;
}

/*
 * batch.c - table names and schemas, column batches, and the generator
 * object: dbgen's row counts for a scale factor and dispatch of a unit range
 * to the table generators of gen_*.c.
 */
#include "tpch/tpch_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const table_names[] = {
#define TP__NAME(id, name) name,
    TP_TABLE_LIST(TP__NAME)
#undef TP__NAME
};

const char *tp_table_name(tp_table t)
{
    return (unsigned)t < TP_TABLE__COUNT ? table_names[t] : NULL;
}

int tp_table_from_name(const char *name, tp_table *out, pa_err *err)
{
    for (int t = 0; t < TP_TABLE__COUNT; t++)
        if (!strcmp(name, table_names[t])) {
            *out = (tp_table)t;
            return PA_OK;
        }
    return pa_error(err, PA_EINVAL,
                    "unknown TPC-H table '%s' (tables: region, nation, supplier, customer, "
                    "part, partsupp, orders, lineitem)", name);
}

int tp_table_mask_parse(const char *list, unsigned *mask, pa_err *err)
{
    unsigned m = 0;
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[32];
        if (n == 0 || n >= sizeof name)
            return pa_error(err, PA_EINVAL, "bad table list '%s'", list);
        memcpy(name, p, n);
        name[n] = '\0';
        if (!strcmp(name, "all")) {
            m |= TP_ALL_TABLES;
        } else {
            tp_table t = TP_REGION;
            int rc = tp_table_from_name(name, &t, err);
            if (rc != PA_OK)
                return rc;
            m |= 1u << t;
        }
        p += n + (e ? 1 : 0);
    }
    if (!m)
        return pa_error(err, PA_EINVAL, "empty table list");
    *mask = m;
    return PA_OK;
}

#define INT {PA_TYPE_INTEGER, 0, 0}
#define BIG {PA_TYPE_BIGINT, 0, 0}
#define DEC {PA_TYPE_DECIMAL, 15, 2}
#define DAT {PA_TYPE_DATE, 0, 0}
#define STR {PA_TYPE_VARCHAR, 0, 0}

/* max_len: the longest value dbgen writes (comments: 1.6 x average; names:
 * keys padded to 9 digits, with room for larger keys). */
static const tp_column_info c_region[] = {
    {"r_regionkey", INT, 0}, {"r_name", STR, 11}, {"r_comment", STR, 115}};
static const tp_column_info c_nation[] = {
    {"n_nationkey", INT, 0}, {"n_name", STR, 14}, {"n_regionkey", INT, 0},
    {"n_comment", STR, 115}};
static const tp_column_info c_supplier[] = {
    {"s_suppkey", INT, 0}, {"s_name", STR, 28}, {"s_address", STR, 40},
    {"s_nationkey", INT, 0}, {"s_phone", STR, 15}, {"s_acctbal", DEC, 0},
    {"s_comment", STR, 100}};
static const tp_column_info c_customer[] = {
    {"c_custkey", INT, 0}, {"c_name", STR, 28}, {"c_address", STR, 40},
    {"c_nationkey", INT, 0}, {"c_phone", STR, 15}, {"c_acctbal", DEC, 0},
    {"c_mktsegment", STR, 10}, {"c_comment", STR, 116}};
static const tp_column_info c_part[] = {
    {"p_partkey", INT, 0}, {"p_name", STR, 55}, {"p_mfgr", STR, 14}, {"p_brand", STR, 8},
    {"p_type", STR, 25}, {"p_size", INT, 0}, {"p_container", STR, 10},
    {"p_retailprice", DEC, 0}, {"p_comment", STR, 22}};
static const tp_column_info c_partsupp[] = {
    {"ps_partkey", INT, 0}, {"ps_suppkey", INT, 0}, {"ps_availqty", INT, 0},
    {"ps_supplycost", DEC, 0}, {"ps_comment", STR, 198}};
static const tp_column_info c_orders[] = {
    {"o_orderkey", BIG, 0}, {"o_custkey", INT, 0}, {"o_orderstatus", STR, 1},
    {"o_totalprice", DEC, 0}, {"o_orderdate", DAT, 0}, {"o_orderpriority", STR, 15},
    {"o_clerk", STR, 25}, {"o_shippriority", INT, 0}, {"o_comment", STR, 78}};
static const tp_column_info c_lineitem[] = {
    {"l_orderkey", BIG, 0}, {"l_partkey", INT, 0}, {"l_suppkey", INT, 0},
    {"l_linenumber", INT, 0}, {"l_quantity", DEC, 0}, {"l_extendedprice", DEC, 0},
    {"l_discount", DEC, 0}, {"l_tax", DEC, 0}, {"l_returnflag", STR, 1},
    {"l_linestatus", STR, 1}, {"l_shipdate", DAT, 0}, {"l_commitdate", DAT, 0},
    {"l_receiptdate", DAT, 0}, {"l_shipinstruct", STR, 17}, {"l_shipmode", STR, 7},
    {"l_comment", STR, 43}};

static const struct {
    const tp_column_info *cols;
    int n;
} schemas[TP_TABLE__COUNT] = {
    {c_region, 3}, {c_nation, 4}, {c_supplier, 7}, {c_customer, 8},
    {c_part, 9},   {c_partsupp, 5}, {c_orders, 9}, {c_lineitem, 16}};

int tp_table_columns(tp_table t, const tp_column_info **cols)
{
    if ((unsigned)t >= TP_TABLE__COUNT)
        return 0;
    *cols = schemas[t].cols;
    return schemas[t].n;
}

void tp_batch_init(tp_batch *b, tp_table t)
{
    memset(b, 0, sizeof *b);
    b->table = t;
    const tp_column_info *cols;
    b->n_columns = tp_table_columns(t, &cols);
    for (int i = 0; i < b->n_columns; i++)
        b->cols[i].info = &cols[i];
}

void tp_batch_close(tp_batch *b)
{
    for (int i = 0; i < b->n_columns; i++) {
        pa_free(b->cols[i].values);
        pa_free(b->cols[i].offsets);
        pa_free(b->cols[i].bytes);
    }
    memset(b->cols, 0, sizeof b->cols);
    b->n_rows = b->rows_cap_ = 0;
}

int tp__batch_reserve(tp_batch *b, int64_t rows, pa_err *err)
{
    b->n_rows = 0;
    if (rows < 1)
        rows = 1;
    for (int i = 0; i < b->n_columns; i++) {
        tp_column *c = &b->cols[i];
        if (c->info->type.id != PA_TYPE_VARCHAR)
            continue;
        int64_t need = rows * c->info->max_len;
        if (need > INT32_MAX)
            return pa_error(err, PA_EOVERFLOW, "%s batch of %lld rows is too large",
                            tp_table_name(b->table), (long long)rows);
        if (need > c->bytes_cap_) {
            char *p = pa_realloc(c->bytes, (size_t)need);
            if (!p)
                goto nomem;
            c->bytes = p;
            c->bytes_cap_ = need;
        }
    }
    if (rows > b->rows_cap_) {
        for (int i = 0; i < b->n_columns; i++) {
            tp_column *c = &b->cols[i];
            if (c->info->type.id == PA_TYPE_VARCHAR) {
                int32_t *p = pa_realloc(c->offsets, (size_t)(rows + 1) * sizeof(int32_t));
                if (!p)
                    goto nomem;
                c->offsets = p;
            } else {
                void *p = pa_realloc(c->values, (size_t)rows * (size_t)pa_type_width(c->info->type.id));
                if (!p)
                    goto nomem;
                c->values = p;
            }
        }
        b->rows_cap_ = rows;
    }
    for (int i = 0; i < b->n_columns; i++)
        if (b->cols[i].offsets)
            b->cols[i].offsets[0] = 0;
    return PA_OK;
nomem:
    return pa_error(err, PA_ENOMEM, "%s batch of %lld rows", tp_table_name(b->table),
                    (long long)rows);
}

/* --------------------------------------------------------------- tp_gen */

/* Base row counts at SF 1 (spec clause 4.2.5). */
#define BASE_SUPP 10000
#define BASE_CUST 150000
#define BASE_PART 200000
#define BASE_ORDERS 1500000

int tp_gen_create(double sf, tp_gen **out, pa_err *err)
{
    return tp_gen_create_ex(sf, 0, out, err);
}

int tp_gen_create_ex(double sf, int threads, tp_gen **out, pa_err *err)
{
    if (!(sf > 0) || !isfinite(sf))
        return pa_error(err, PA_EINVAL, "scale factor must be a positive number (got %g)", sf);
    if (sf >= 30000)
        return pa_error(err, PA_EUNSUPPORTED,
                        "scale factors from 30000 on use dbgen's 64-bit streams, "
                        "which this generator does not implement");
    tp_gen *g = pa_calloc(1, sizeof *g);
    if (!g)
        return pa_error(err, PA_ENOMEM, "TPC-H generator");
    int64_t supp = BASE_SUPP, cust = BASE_CUST, part = BASE_PART, ord = BASE_ORDERS;
    if (sf < 1.0) {
        /* dbgen: thousandths of the base counts, at least one row. */
        int k = (int)(1000 * sf);
        int64_t *b[] = {&supp, &cust, &part, &ord};
        for (int i = 0; i < 4; i++) {
            *b[i] = (int64_t)k * *b[i] / 1000;
            if (*b[i] < 1)
                *b[i] = 1;
        }
        g->scale = 1;
        g->sf = k / 1000.0;
    } else {
        g->scale = (int64_t)sf;
        g->sf = (double)g->scale;
    }
    g->n_supp = supp * g->scale;
    g->n_cust = cust * g->scale;
    g->n_part = part * g->scale;
    g->n_orders = ord * g->scale;
    g->clerks = g->scale * 1000;   /* dbgen: max(scale * 1000, 1000) */
    g->d = tp__dists();
    int rc = tp__pool_acquire(threads, &g->pool, err);
    if (rc != PA_OK) {
        pa_free(g);
        return rc;
    }
    *out = g;
    return PA_OK;
}

void tp_gen_destroy(tp_gen *g)
{
    if (!g)
        return;
    tp__pool_release();
    pa_free(g);
}

double tp_gen_effective_sf(const tp_gen *g) { return g->sf; }

int64_t tp_gen_units(const tp_gen *g, tp_table t)
{
    switch (t) {
    case TP_REGION: return 5;
    case TP_NATION: return 25;
    case TP_SUPPLIER: return g->n_supp;
    case TP_CUSTOMER: return g->n_cust;
    case TP_PART: case TP_PARTSUPP: return g->n_part;
    case TP_ORDERS: case TP_LINEITEM: return g->n_orders;
    default: return 0;
    }
}

int64_t tp_gen_rows_estimate(const tp_gen *g, tp_table t)
{
    int64_t u = tp_gen_units(g, t);
    return t == TP_PARTSUPP || t == TP_LINEITEM ? 4 * u : u;
}

int tp_gen_batch(const tp_gen *g, tp_table t, int64_t first, int64_t n, tp_batch *out,
                 tp_batch *child, pa_err *err)
{
    int64_t units = tp_gen_units(g, t);
    if (first < 0 || n < 0 || first > units || n > units - first)
        return pa_error(err, PA_EINVAL, "%s: units [%lld, %lld) outside [0, %lld)",
                        tp_table_name(t), (long long)first, (long long)(first + n),
                        (long long)units);
    if (out->table != t)
        return pa_error(err, PA_EINVAL, "batch of %s used for %s", tp_table_name(out->table),
                        tp_table_name(t));
    switch (t) {
    case TP_REGION: return tp__gen_region(g, first, n, out, err);
    case TP_NATION: return tp__gen_nation(g, first, n, out, err);
    case TP_SUPPLIER: return tp__gen_supplier(g, first, n, out, err);
    case TP_CUSTOMER: return tp__gen_customer(g, first, n, out, err);
    case TP_PART:
        if (child && child->table != TP_PARTSUPP)
            return pa_error(err, PA_EINVAL, "child batch of part must be partsupp");
        return tp__gen_part(g, first, n, out, child, err);
    case TP_PARTSUPP: return tp__gen_part(g, first, n, NULL, out, err);
    case TP_ORDERS:
        if (child && child->table != TP_LINEITEM)
            return pa_error(err, PA_EINVAL, "child batch of orders must be lineitem");
        return tp__gen_orders(g, first, n, out, child, err);
    case TP_LINEITEM: return tp__gen_orders(g, first, n, NULL, out, err);
    default: return pa_error(err, PA_EINVAL, "bad table id %d", (int)t);
    }
}

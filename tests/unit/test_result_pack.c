/*
 * test_result_pack.c - ex_result_pack / ex_result_unpack, how a rank's rows
 * travel to rank 0: every type (NULLs, text, DECIMAL, DATE, DOUBLE) comes
 * back with the same rows; several buffers concatenate in order; a buffer
 * cut at any length, or with a damaged header, is PA_ECORRUPT naming the
 * rank, never a crash or a read past the end (the sanitizers watch).
 * ex_result_pack_parts (repartitioning between ranks): the parts hold every
 * row once, each key value in one part only, NULL keys together; packing
 * one part alone gives the same bytes; columns past n_keep are left out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sql/sql.h"

static dv_device *dev;
static sql_session *ses;

static int setup(void **state)
{
    (void)state;
    const char *d = getenv("PISTA_TEST_DATA");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/parquet/sf0.01", d ? d : "tests/data");
    dv_options o = {.spec = "cpu", .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &dev, &e) != PA_OK)
        fail_msg("open: %s", e.msg);
    sql_options so = {.dev = dev, .data_dir = dir};
    if (sql_session_create(&so, &ses, &e) != PA_OK)
        fail_msg("session: %s", e.msg);
    pa_err_close(&e);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sql_session_destroy(ses);
    dv_close(dev);
    return 0;
}

static char *csv(const ex_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(ex_result_write_csv(r, f, '|', true) >= 0);
    fclose(f);
    return buf;
}

static sql_result *query(const char *sql)
{
    sql_result *r = NULL;
    pa_err e;
    pa_err_init(&e);
    if (sql_execute(ses, sql, &r, &e) != PA_OK)
        fail_msg("%s: %s", sql, e.msg);
    pa_err_close(&e);
    return r;
}

#define SQL                                                                                                        \
    "select n_nationkey, n_name, case when n_nationkey % 3 = 0 then null else n_comment end as c, "                \
    "cast(n_nationkey as decimal(12,2)) * 1.5 as d, date '1995-01-01' + n_regionkey as dt, "                       \
    "n_nationkey / 7.0 as f, n_nationkey > 10 as b from nation order by n_nationkey"

static void test_round_trip(void **state)
{
    (void)state;
    sql_result *r = query(SQL);
    const ex_result *x = r->rows;
    void *buf;
    int64_t n;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(ex_result_pack(x, &buf, &n, &e), PA_OK);
    /* Twice, as from two ranks: the rows twice, in order. */
    const void *bufs[2] = {buf, buf};
    int64_t sizes[2] = {n, n};
    ex_result *y;
    assert_int_equal(ex_result_unpack(dev, x->n_columns, x->names, x->types, bufs, sizes, 2, &y, &e), PA_OK);
    assert_int_equal(y->n_rows, 2 * x->n_rows);
    char *a = csv(x), *b = csv(y);
    size_t la = strlen(a), nl = strcspn(a, "\n") + 1;   /* b = header, rows, rows */
    assert_int_equal(strlen(b), la + la - nl);
    assert_memory_equal(b, a, la);
    assert_memory_equal(b + la, a + nl, la - nl);
    free(a), free(b);
    ex_result_destroy(y);

    /* Cut short anywhere, or a damaged header: an error naming rank 1. */
    for (int64_t cut = 0; cut < n; cut += cut < 200 ? 1 : 97) {
        sizes[1] = cut;
        y = NULL;
        pa_err_clear(&e);
        assert_int_equal(ex_result_unpack(dev, x->n_columns, x->names, x->types, bufs, sizes, 2, &y, &e),
                         PA_ECORRUPT);
        assert_null(y);
        assert_non_null(strstr(e.msg, "rank 1"));
    }
    sizes[1] = n;
    char *bad = malloc((size_t)n);
    for (int at = 0; at < 40; at++) {   /* magic, column count and types, chunk count */
        memcpy(bad, buf, (size_t)n);
        bad[at] ^= 0x5a;
        bufs[1] = bad;
        pa_err_clear(&e);
        y = NULL;
        int rc = ex_result_unpack(dev, x->n_columns, x->names, x->types, bufs, sizes, 2, &y, &e);
        assert_int_equal(rc, PA_ECORRUPT);
        assert_null(y);
    }
    free(bad);
    pa_free(buf);
    pa_err_close(&e);
    sql_result_destroy(r);
}

static void test_empty(void **state)
{
    (void)state;
    sql_result *r = query("select n_name from nation where n_nationkey < 0");
    void *buf;
    int64_t n;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(ex_result_pack(r->rows, &buf, &n, &e), PA_OK);
    const void *bufs[1] = {buf};
    ex_result *y;
    assert_int_equal(ex_result_unpack(dev, 1, r->rows->names, r->rows->types, bufs, &n, 1, &y, &e), PA_OK);
    assert_int_equal(y->n_rows, 0);
    /* The wrong columns: refused. */
    pa_type other = {.id = PA_TYPE_BIGINT};
    ex_result *z = NULL;
    assert_int_equal(ex_result_unpack(dev, 1, r->rows->names, &other, bufs, &n, 1, &z, &e), PA_ECORRUPT);
    assert_null(z);
    ex_result_destroy(y);
    pa_free(buf);
    pa_err_close(&e);
    sql_result_destroy(r);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The lines of a CSV text after its header, sorted, joined. */
static char *sorted_rows(char *text)
{
    char **v = NULL;
    size_t n = 0, cap = 0, len = 0;
    char *save = NULL;
    strtok_r(text, "\n", &save);   /* the header */
    for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (n == cap) {   /* doubling: one realloc per row was quadratic copying (100 s under ASan) */
            cap = cap ? 2 * cap : 1024;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[n++] = l;
        len += strlen(l) + 1;
    }
    qsort(v, n, sizeof *v, cmp_str);
    char *out = calloc(len + 1, 1), *at = out;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(v[i]);
        memcpy(at, v[i], k);
        at[k] = '\n';
        at += k + 1;
    }
    free(v);
    return out;
}

static void test_parts(void **state)
{
    (void)state;
    /* 60 175 rows; key 0: orders' keys, key 1: a flag
     * with NULLs, key 2 (not packed): a DOUBLE. */
    sql_result *r = query("select l_orderkey, case when l_linenumber = 1 then null else l_returnflag end as f, "
                          "l_comment, l_extendedprice, l_shipdate, l_tax * 1.0e0 as t from lineitem");
    const ex_result *x = r->rows;
    enum { P = 3 };
    pa_err e;
    pa_err_init(&e);
    const char *names[5];
    for (int j = 0; j < 5; j++)
        names[j] = x->names[j];
    int key_sets[3][3] = {{0, -1, -1}, {1, -1, -1}, {0, 5, -1}};
    int n_keys[3] = {1, 1, 2};
    for (int ks = 0; ks < 3; ks++) {
        void *buf[P];
        int64_t n[P];
        assert_int_equal(ex_result_pack_parts(x, 5, key_sets[ks], n_keys[ks], P, -1, buf, n, &e), PA_OK);
        ex_result *part[P];
        int64_t total = 0;
        char *all = NULL;
        size_t all_len = 0;
        FILE *f = open_memstream(&all, &all_len);
        for (int p = 0; p < P; p++) {
            const void *b = buf[p];
            assert_int_equal(ex_result_unpack(dev, 5, names, x->types, &b, &n[p], 1, &part[p], &e), PA_OK);
            assert_true(ks == 1 || part[p]->n_rows > 0);   /* the flag has 4 values only */
            total += part[p]->n_rows;
            assert_true(ex_result_write_csv(part[p], f, '|', false) >= 0);
        }
        fclose(f);
        assert_int_equal(total, x->n_rows);
        /* Every row once: the parts' rows are the input's (columns 0-4). */
        sql_result *r5 = query("select l_orderkey, case when l_linenumber = 1 then null else l_returnflag end as f, "
                               "l_comment, l_extendedprice, l_shipdate from lineitem");
        char *want = csv(r5->rows);
        char *hdr = calloc(strlen(all) + 3, 1);
        strcat(strcat(hdr, "h\n"), all);
        char *a = sorted_rows(want), *b = sorted_rows(hdr);
        assert_string_equal(a, b);
        free(a), free(b), free(want), free(hdr), free(all);
        sql_result_destroy(r5);
        /* A key value lands in one part: (key, part) pairs sorted, a key
         * never next to itself with another part; NULL keys (empty) too. */
        if (ks < 2) {
            char **pairs = malloc((size_t)x->n_rows * sizeof *pairs);
            size_t np = 0;
            for (int p = 0; p < P; p++) {
                char *t = csv(part[p]), *save = NULL;
                strtok_r(t, "\n", &save);
                for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                    char *bar = strchr(l, '|'), *bar2 = bar ? strchr(bar + 1, '|') : NULL;
                    assert_non_null(bar2);
                    const char *k = ks == 0 ? l : bar + 1;
                    int kl = ks == 0 ? (int)(bar - l) : (int)(bar2 - bar - 1);
                    pairs[np] = malloc((size_t)kl + 8);
                    snprintf(pairs[np++], (size_t)kl + 8, "%.*s\t%d", kl, k, p);
                }
                free(t);
            }
            assert_int_equal(np, x->n_rows);
            qsort(pairs, np, sizeof *pairs, cmp_str);
            for (size_t i = 1; i < np; i++) {
                size_t ka = strcspn(pairs[i - 1], "\t"), kb = strcspn(pairs[i], "\t");
                if (ka == kb && !memcmp(pairs[i - 1], pairs[i], ka) && strcmp(pairs[i - 1], pairs[i]))
                    fail_msg("key set %d: %s and %s", ks, pairs[i - 1], pairs[i]);
            }
            for (size_t i = 0; i < np; i++)
                free(pairs[i]);
            free(pairs);
        }
        /* One part alone: the same bytes. */
        void *one[P];
        int64_t n1[P];
        assert_int_equal(ex_result_pack_parts(x, 5, key_sets[ks], n_keys[ks], P, 1, one, n1, &e), PA_OK);
        assert_null(one[0]);
        assert_null(one[2]);
        assert_int_equal(n1[1], n[1]);
        assert_memory_equal(one[1], buf[1], (size_t)n[1]);
        pa_free(one[1]);
        for (int p = 0; p < P; p++) {
            ex_result_destroy(part[p]);
            pa_free(buf[p]);
        }
    }
    pa_err_close(&e);
    sql_result_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_parts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

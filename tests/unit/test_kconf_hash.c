/*
 * test_kconf_hash.c - conformance of the hashing and hash-partition kernels,
 * run against the device named by PISTA_TEST_DEVICE (default "cpu").
 *
 * Checks: equal keys hash alike across chunks and across the types that may
 * be joined with each other (INTEGER/BIGINT/DECIMAL widths, -0.0 and 0.0,
 * every NaN, NULLs); distinct random keys of every type (NULLs, duplicates,
 * skew, multi-column keys with strings) do not collide; pinned hash values
 * (the cross-rank contract of the shuffle); partition ids, offsets and the
 * stable row order against a counting reference; balance over sequential
 * keys; argument errors.
 */
#include "hj_testutil.h"

static dv_device *g_dev;
static dv_stream *g_s;

static int setup(void **state)
{
    g_dev = hj_open(0);
    return dv_stream_create(g_dev, &g_s, NULL);
}

static int teardown(void **state)
{
    dv_stream_destroy(g_s);
    dv_close(g_dev);
    return 0;
}

/* Hashes of n_keys host columns (uploaded, hashed, downloaded); free() it. */
static uint64_t *hash_host(const pa_column *h, int n_keys, int64_t rows)
{
    pa_err err;
    pa_err_init(&err);
    pa_column dc[8];
    for (int k = 0; k < n_keys; k++)
        dc[k] = hj_col_up(g_dev, g_s, &h[k]);
    uint64_t *dh;
    assert_int_equal(dv_alloc(g_dev, (size_t)(rows ? rows : 1) * 8, (void **)&dh, NULL), PA_OK);
    kn_ctx ctx = {g_dev, g_s};
    HJ_OK(kn_hash_keys(&ctx, dc, n_keys, rows, dh, &err));
    uint64_t *out = hj_down(g_s, dh, (size_t)rows * 8);
    dv_free(g_dev, dh);
    for (int k = 0; k < n_keys; k++)
        hj_col_dev_free(g_dev, &dc[k]);
    pa_err_close(&err);
    return out;
}

static uint64_t hash1(pa_type t, const void *value, bool null)
{
    pa_column c = {.type = t, .length = 1};
    uint8_t buf[16], val = null ? 0 : 1;
    int32_t offs[2] = {0, 0};
    memcpy(buf, value, (size_t)(t.id == PA_TYPE_VARCHAR ? 0 : pa_type_bytes(t)));
    if (t.id == PA_TYPE_VARCHAR) {
        offs[1] = (int32_t)strlen(value);
        c.data = (void *)value;
        c.offsets = offs;
    } else {
        c.data = buf;
    }
    c.validity = &val;
    uint64_t *h = hash_host(&c, 1, 1);
    uint64_t r = h[0];
    free(h);
    return r;
}

static void test_hash_equal_across_types(void **state)
{
    const int64_t vals[] = {-5, 0, 1, 42, 1000000, -2147483648LL};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        int64_t v = vals[i];
        int32_t v32 = (int32_t)v;
        __int128 v128 = v;
        uint64_t hb = hash1(hj_type(PA_TYPE_BIGINT, 0, 0), &v, false);
        assert_true(hash1(hj_type(PA_TYPE_INTEGER, 0, 0), &v32, false) == hb);
        assert_true(hash1(hj_type(PA_TYPE_DATE, 0, 0), &v32, false) == hb);
        assert_true(hash1(hj_type(PA_TYPE_DECIMAL, 15, 2), &v, false) == hb);
        assert_true(hash1(hj_type(PA_TYPE_DECIMAL, 38, 2), &v128, false) == hb);
        /* The time types stored as int64 hash as BIGINT. */
        assert_true(hash1(hj_type(PA_TYPE_TIMESTAMP, 0, 0), &v, false) == hb);
        assert_true(hash1(hj_type(PA_TYPE_TIMESTAMPTZ, 0, 0), &v, false) == hb);
        assert_true(hash1(hj_type(PA_TYPE_TIME, 0, 0), &v, false) == hb);
        assert_true(hash1(hj_type(PA_TYPE_TIMESTAMP_NS, 0, 0), &v, false) == hb);
    }
    /* 128-bit values beyond int64 differ from their low half. */
    __int128 big = ((__int128)1 << 64) + 5;
    int64_t five = 5;
    assert_true(hash1(hj_type(PA_TYPE_DECIMAL, 38, 0), &big, false) !=
                hash1(hj_type(PA_TYPE_BIGINT, 0, 0), &five, false));
    double pz = 0.0, nz = -0.0, nan1 = NAN, nan2;
    uint64_t bits = 0xfff0000000000123ull;   /* another NaN, negative, other payload */
    memcpy(&nan2, &bits, 8);
    pa_type dt = hj_type(PA_TYPE_DOUBLE, 0, 0);
    assert_true(hash1(dt, &pz, false) == hash1(dt, &nz, false));
    assert_true(hash1(dt, &nan1, false) == hash1(dt, &nan2, false));
    assert_true(hash1(dt, &nan1, false) != hash1(dt, &pz, false));
    /* NULL hashes to one constant whatever the type and the slot's bytes. */
    int32_t junk = 77;
    uint64_t hn = hash1(hj_type(PA_TYPE_INTEGER, 0, 0), &junk, true);
    assert_true(hash1(hj_type(PA_TYPE_VARCHAR, 0, 0), "xyz", true) == hn);
    assert_true(hash1(dt, &pz, true) == hn);
    int32_t zero = 0;
    assert_true(hash1(hj_type(PA_TYPE_INTEGER, 0, 0), &zero, false) != hn);
    assert_true(hash1(hj_type(PA_TYPE_VARCHAR, 0, 0), "", false) != hn);
    /* INTERVALs hash as their length (a month as 30 days): '1 mon', '30 days',
     * '720 hours' and '2 mons -30 days' alike, as the DECIMAL(38,0) of that
     * many microseconds; '1 day' and '1 mon 1 microsecond' otherwise. */
    pa_type it = hj_type(PA_TYPE_INTERVAL, 0, 0);
    const int64_t day = 86400000000LL;
    pa_interval mon = {1, 0, 0}, d30 = {0, 30, 0}, h720 = {0, 0, 30 * day}, mixed = {2, -30, 0};
    pa_interval d1 = {0, 1, 0}, mon1 = {1, 0, 1};
    __int128 len = (__int128)30 * day;
    uint64_t hm = hash1(it, &mon, false);
    assert_true(hash1(it, &d30, false) == hm);
    assert_true(hash1(it, &h720, false) == hm);
    assert_true(hash1(it, &mixed, false) == hm);
    assert_true(hash1(hj_type(PA_TYPE_DECIMAL, 38, 0), &len, false) == hm);
    assert_true(hash1(it, &d1, false) != hm);
    assert_true(hash1(it, &mon1, false) != hm);
    assert_true(hash1(it, &mon, true) == hn);
}

/* Pinned values: the hash decides which rank owns a key in a distributed
 * shuffle, so it must never change silently (a change here is a protocol
 * change: every rank must run the same build). */
static void test_hash_pinned_values(void **state)
{
    int32_t i42 = 42;
    int64_t b = 1234567890123LL;
    const char *s = "TPC-H BRASS";
    uint64_t h_i = hash1(hj_type(PA_TYPE_INTEGER, 0, 0), &i42, false);
    uint64_t h_b = hash1(hj_type(PA_TYPE_BIGINT, 0, 0), &b, false);
    uint64_t h_s = hash1(hj_type(PA_TYPE_VARCHAR, 0, 0), s, false);
    print_message("pinned: %016llx %016llx %016llx\n", (unsigned long long)h_i, (unsigned long long)h_b,
                  (unsigned long long)h_s);
    assert_true(h_i == 0x810879608e4259ccull);
    assert_true(h_b == 0x500d2923091e70c2ull);
    assert_true(h_s == 0xb603732b25ddac8cull);
    assert_int_equal(kn_partition_of(h_i, 16), 8);
}

/* Rows identical as keys: every component NULL on both sides or equal. */
static bool same_key(const pa_column *c, int n, int64_t i, int64_t j)
{
    for (int k = 0; k < n; k++) {
        bool vi = hj_bit(c[k].validity, i), vj = hj_bit(c[k].validity, j);
        if (vi != vj)
            return false;
        if (vi && hj_eq1(&c[k], i, &c[k], j) != 1)
            return false;
    }
    return true;
}

static void check_hash_columns(hj_rng *r, const pa_type *types, int n, int64_t rows, uint64_t domain)
{
    pa_column c[8];
    for (int k = 0; k < n; k++)
        c[k] = hj_gen(r, types[k], rows, domain, 0.1, 0.15);
    uint64_t *h = hash_host(c, n, rows);
    int64_t collisions = 0, equal_pairs = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = i + 1; j < rows; j++) {
            bool same = same_key(c, n, i, j);
            if (same) {
                equal_pairs++;
                if (h[i] != h[j])
                    fail_msg("rows %lld and %lld: equal keys, hashes %llx %llx", (long long)i, (long long)j,
                             (unsigned long long)h[i], (unsigned long long)h[j]);
            } else if (h[i] == h[j]) {
                collisions++;
            }
        }
    assert_true(equal_pairs > 0);
    assert_int_equal(collisions, 0);   /* 64-bit hashes of ~1000 rows: any collision is a bug */
    free(h);
    for (int k = 0; k < n; k++)
        hj_free(&c[k]);
}

static void test_hash_random_every_type(void **state)
{
    hj_rng r = {0x1234567};
    const pa_type singles[] = {
        hj_type(PA_TYPE_BOOLEAN, 0, 0), hj_type(PA_TYPE_INTEGER, 0, 0), hj_type(PA_TYPE_BIGINT, 0, 0),
        hj_type(PA_TYPE_DATE, 0, 0),    hj_type(PA_TYPE_DECIMAL, 15, 2), hj_type(PA_TYPE_DECIMAL, 38, 4),
        hj_type(PA_TYPE_DOUBLE, 0, 0),  hj_type(PA_TYPE_VARCHAR, 0, 0),
    };
    for (size_t t = 0; t < sizeof singles / sizeof singles[0]; t++)
        check_hash_columns(&r, &singles[t], 1, 800, 300);
    const pa_type multi[] = {hj_type(PA_TYPE_VARCHAR, 0, 0), hj_type(PA_TYPE_DATE, 0, 0),
                             hj_type(PA_TYPE_DECIMAL, 12, 2)};
    check_hash_columns(&r, multi, 3, 800, 6);
    const pa_type two[] = {hj_type(PA_TYPE_INTEGER, 0, 0), hj_type(PA_TYPE_INTEGER, 0, 0)};
    check_hash_columns(&r, two, 2, 800, 25);
    /* Column order matters: (a, b) and (b, a) are different keys. */
    int32_t a[2] = {1, 2}, b[2] = {2, 1};
    pa_column ab[2] = {{.type = two[0], .length = 2, .data = a}, {.type = two[1], .length = 2, .data = b}};
    uint64_t *h = hash_host(ab, 2, 2);
    assert_true(h[0] != h[1]);
    free(h);
}

/* ------------------------------------------------------------ partitions */

static void check_partition(hj_rng *r, int64_t rows, uint32_t n_parts)
{
    pa_err err;
    pa_err_init(&err);
    kn_ctx ctx = {g_dev, g_s};
    pa_type bt = hj_type(PA_TYPE_BIGINT, 0, 0);
    pa_column hc = hj_gen(r, bt, rows, rows / 3 + 2, 0.2, 0.05);
    uint64_t *h = hash_host(&hc, 1, rows);
    uint64_t *dh = hj_up(g_dev, g_s, h, (size_t)rows * 8);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    uint32_t *dpart;
    int32_t *dorder;
    int64_t *offs;
    void *scratch;
    size_t ss = kn_partition_order_scratch_size(n_parts);
    assert_int_equal(dv_alloc(g_dev, (size_t)rows * 4 + 4, (void **)&dpart, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_dev, (size_t)rows * 4 + 4, (void **)&dorder, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_dev, ss, &scratch, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(g_dev, ((size_t)n_parts + 1) * 8, (void **)&offs, NULL), PA_OK);
    HJ_OK(kn_partition_ids(&ctx, dh, rows, n_parts, dpart, &err));
    HJ_OK(kn_partition_offsets(&ctx, dpart, rows, n_parts, offs, &err));
    HJ_OK(kn_partition_order(&ctx, dpart, rows, n_parts, offs, scratch, ss, dorder, &err));
    uint32_t *part = hj_down(g_s, dpart, (size_t)rows * 4);
    int32_t *order = hj_down(g_s, dorder, (size_t)rows * 4);

    /* Reference: the id is the high 32 bits scaled to n_parts; counting sort. */
    int64_t *cnt = calloc(n_parts + 1, sizeof *cnt);
    for (int64_t i = 0; i < rows; i++) {
        uint32_t p = (uint32_t)(((h[i] >> 32) * n_parts) >> 32);
        assert_int_equal(part[i], p);
        cnt[p + 1]++;
    }
    for (uint32_t p = 0; p < n_parts; p++)
        cnt[p + 1] += cnt[p];
    for (uint32_t p = 0; p <= n_parts; p++)
        assert_int_equal(offs[p], cnt[p]);
    int64_t k = 0;
    for (uint32_t p = 0; p < n_parts; p++)
        for (int64_t i = 0; i < rows; i++)
            if (part[i] == p)
                assert_int_equal(order[k++], i);
    assert_int_equal(k, rows);
    free(cnt);
    free(part);
    free(order);
    free(h);
    hj_free(&hc);
    dv_free(g_dev, dh);
    dv_free(g_dev, dpart);
    dv_free(g_dev, dorder);
    dv_free(g_dev, scratch);
    dv_host_free(g_dev, offs);
    pa_err_close(&err);
}

static void test_partition_random(void **state)
{
    hj_rng r = {99};
    const int64_t rows[] = {0, 1, 17, 1000, 20000};
    const uint32_t parts[] = {1, 2, 3, 8, 61, 256, 1025};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t j = 0; j < sizeof parts / sizeof parts[0]; j++)
            check_partition(&r, rows[i], parts[j]);
}

/* Sequential keys (the shape of TPC-H keys) spread evenly over partitions,
 * and a key is in the same partition whichever chunk it arrives in. */
static void test_partition_balance_and_stability(void **state)
{
    enum { N = 160000, P = 16 };
    int64_t *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = i + 1;
    pa_column c = {.type = hj_type(PA_TYPE_BIGINT, 0, 0), .length = N, .data = v};
    uint64_t *h = hash_host(&c, 1, N);
    int64_t cnt[P] = {0};
    for (int i = 0; i < N; i++)
        cnt[kn_partition_of(h[i], P)]++;
    for (int p = 0; p < P; p++)
        assert_true(cnt[p] > N / P * 95 / 100 && cnt[p] < N / P * 105 / 100);
    /* The same keys hashed as the last 1000 rows of a smaller chunk. */
    pa_column tail = {.type = c.type, .length = 1000, .data = v + N - 1000};
    uint64_t *h2 = hash_host(&tail, 1, 1000);
    for (int i = 0; i < 1000; i++)
        assert_true(h2[i] == h[N - 1000 + i]);
    free(h2);
    free(h);
    free(v);
}

static void test_errors(void **state)
{
    pa_err err;
    pa_err_init(&err);
    kn_ctx ctx = {g_dev, g_s};
    const uint64_t hh[2] = {1, 2};
    uint32_t hp[2] = {0, 5};
    uint64_t *h = hj_up(g_dev, g_s, hh, sizeof hh);
    uint32_t *part = hj_up(g_dev, g_s, hp, sizeof hp);
    int32_t *order;
    int64_t *offs, *scratch;
    assert_int_equal(dv_alloc(g_dev, 2 * sizeof *order, (void **)&order, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_dev, 4 * sizeof *scratch, (void **)&scratch, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(g_dev, 4 * sizeof *offs, (void **)&offs, NULL), PA_OK);
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_partition_ids(&ec, h, 2, 0, part, &err)), PA_EINVAL);
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_partition_offsets(&ec, part, 2, 2, offs, &err)),
                     PA_EINVAL);   /* id 5 of 2 */
    assert_non_null(strstr(err.msg, "partition"));
    pa_err_clear(&err);
    hp[1] = 1;
    assert_int_equal(dv_copy_async(g_s, part, hp, sizeof hp, DV_COPY_H2D, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);   /* cpu kernels do not wait for the stream */
    HJ_OK(kn_partition_offsets(&ctx, part, 2, 2, offs, &err));
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_partition_order(&ec, part, 2, 2, offs, scratch, 8, order, &err)),
                     PA_EINVAL);
    HJ_OK(kn_partition_order(&ctx, part, 2, 2, offs, scratch, 4 * sizeof *scratch, order, &err));
    int32_t *ho = hj_down(g_s, order, 2 * sizeof *order);
    assert_int_equal(ho[0], 0);
    assert_int_equal(ho[1], 1);
    free(ho);
    /* Offsets that do not match the ids (they come from a kernel, so only
     * the device sees them): an error on every device. */
    offs[1] = 2;
    pa_err_clear(&err);
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_partition_order(&ec, part, 2, 2, offs, scratch,
                                                                     4 * sizeof *scratch, order, &err)),
                     PA_EINVAL);
    assert_non_null(strstr(err.msg, "partition"));
    pa_column bad = {.type = {.id = PA_TYPE__COUNT}, .length = 2, .data = h};
    pa_err_clear(&err);
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_hash_keys(&ec, &bad, 1, 2, h, &err)), PA_EINVAL);
    assert_non_null(strstr(err.msg, "cannot be hashed"));
    assert_int_equal(KC_STATUS(g_dev, g_s, &err, kn_hash_keys(&ec, &bad, 0, 2, h, &err)), PA_EINVAL);
    dv_free(g_dev, h);
    dv_free(g_dev, part);
    dv_free(g_dev, order);
    dv_free(g_dev, scratch);
    dv_host_free(g_dev, offs);
    assert_true(kn_join_key_types_ok(hj_type(PA_TYPE_INTEGER, 0, 0), hj_type(PA_TYPE_BIGINT, 0, 0)));
    assert_true(kn_join_key_types_ok(hj_type(PA_TYPE_DECIMAL, 15, 2), hj_type(PA_TYPE_DECIMAL, 38, 2)));
    assert_false(kn_join_key_types_ok(hj_type(PA_TYPE_DECIMAL, 15, 2), hj_type(PA_TYPE_DECIMAL, 15, 3)));
    assert_false(kn_join_key_types_ok(hj_type(PA_TYPE_INTEGER, 0, 0), hj_type(PA_TYPE_DATE, 0, 0)));
    assert_false(kn_join_key_types_ok(hj_type(PA_TYPE_VARCHAR, 0, 0), hj_type(PA_TYPE_INTEGER, 0, 0)));
    assert_false(kn_join_key_types_ok(hj_type(PA_TYPE_DOUBLE, 0, 0), hj_type(PA_TYPE_BIGINT, 0, 0)));
    assert_true(kn_join_key_types_ok(hj_type(PA_TYPE_TIMESTAMP, 0, 0), hj_type(PA_TYPE_TIMESTAMP, 0, 0)));
    assert_true(kn_join_key_types_ok(hj_type(PA_TYPE_TIME, 0, 0), hj_type(PA_TYPE_TIME, 0, 0)));
    assert_false(kn_join_key_types_ok(hj_type(PA_TYPE_TIMESTAMP, 0, 0), hj_type(PA_TYPE_BIGINT, 0, 0)));
    assert_true(kn_join_key_types_ok(hj_type(PA_TYPE_INTERVAL, 0, 0), hj_type(PA_TYPE_INTERVAL, 0, 0)));
    assert_false(kn_join_key_types_ok(hj_type(PA_TYPE_INTERVAL, 0, 0), hj_type(PA_TYPE_BIGINT, 0, 0)));
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_equal_across_types),
        cmocka_unit_test(test_hash_pinned_values),
        cmocka_unit_test(test_hash_random_every_type),
        cmocka_unit_test(test_partition_random),
        cmocka_unit_test(test_partition_balance_and_stability),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

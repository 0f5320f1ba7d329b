/*
 * test_io_plan.c - the range coalescing planner (io_plan_ranges) on
 * hand-computed cases, plus a randomized check of its invariants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "storage/storage.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void expect_read(const io_plan *p, size_t i, uint64_t off, uint64_t len)
{
    assert_true(i < p->n_reads);
    assert_int_equal(p->reads[i].offset, off);
    assert_int_equal(p->reads[i].length, len);
}

static void expect_map(const io_plan *p, size_t range, size_t read, uint64_t pos)
{
    assert_int_equal(p->range_read[range], read);
    assert_int_equal(p->range_pos[range], pos);
}

/* Gap 5: [0,10) [10,15) [20,25) become one read [0,25); [100,110) stays. */
static void test_gap_joins(void **state)
{
    io_range r[] = {{0, 10}, {10, 5}, {20, 5}, {100, 10}};
    io_plan_options o = {.max_gap = 5, .max_read = 0};
    io_plan p;
    assert_int_equal(io_plan_ranges(r, N_OF(r), &o, &p, NULL), PA_OK);
    assert_int_equal(p.n_reads, 2);
    expect_read(&p, 0, 0, 25);
    expect_read(&p, 1, 100, 10);
    expect_map(&p, 0, 0, 0);
    expect_map(&p, 1, 0, 10);
    expect_map(&p, 2, 0, 20);
    expect_map(&p, 3, 1, 0);
    assert_int_equal(p.bytes_wanted, 30);
    assert_int_equal(p.bytes_read, 35);
    io_plan_free(&p);

    /* Gap 4 is one byte short of the hole [15,20): three reads. */
    o.max_gap = 4;
    assert_int_equal(io_plan_ranges(r, N_OF(r), &o, &p, NULL), PA_OK);
    assert_int_equal(p.n_reads, 3);
    expect_read(&p, 0, 0, 15);
    expect_read(&p, 1, 20, 5);
    expect_read(&p, 2, 100, 10);
    expect_map(&p, 2, 1, 0);
    assert_int_equal(p.bytes_read, 30);
    io_plan_free(&p);
}

/* Unsorted and overlapping input, gap 0 (touching or overlapping only). */
static void test_unsorted_overlapping(void **state)
{
    io_range r[] = {{50, 10}, {0, 10}, {55, 10}, {5, 2}, {10, 0}};
    io_plan p;
    assert_int_equal(io_plan_ranges(r, N_OF(r), NULL, &p, NULL), PA_OK);
    assert_int_equal(p.n_reads, 2);
    expect_read(&p, 0, 0, 10);    /* [0,10) holds [5,7) and the empty range at 10 */
    expect_read(&p, 1, 50, 15);   /* [50,60) and [55,65) overlap */
    expect_map(&p, 0, 1, 0);
    expect_map(&p, 1, 0, 0);
    expect_map(&p, 2, 1, 5);
    expect_map(&p, 3, 0, 5);
    expect_map(&p, 4, 0, 10);
    assert_int_equal(p.bytes_wanted, 32);
    assert_int_equal(p.bytes_read, 25);
    io_plan_free(&p);
}

/* max_read caps merging: 4 x 10 bytes, limit 25 -> two reads of 20. A single
 * range above the limit is a read of its own. */
static void test_max_read(void **state)
{
    io_range r[] = {{0, 10}, {10, 10}, {20, 10}, {30, 10}};
    io_plan_options o = {.max_gap = 100, .max_read = 25};
    io_plan p;
    assert_int_equal(io_plan_ranges(r, N_OF(r), &o, &p, NULL), PA_OK);
    assert_int_equal(p.n_reads, 2);
    expect_read(&p, 0, 0, 20);
    expect_read(&p, 1, 20, 20);
    expect_map(&p, 3, 1, 10);
    io_plan_free(&p);

    io_range big[] = {{1000, 100}, {1100, 10}, {0, 10}};
    o.max_read = 50;
    assert_int_equal(io_plan_ranges(big, N_OF(big), &o, &p, NULL), PA_OK);
    assert_int_equal(p.n_reads, 3);
    expect_read(&p, 0, 0, 10);
    expect_read(&p, 1, 1000, 100);
    expect_read(&p, 2, 1100, 10);
    expect_map(&p, 0, 1, 0);
    expect_map(&p, 1, 2, 0);
    io_plan_free(&p);
}

static void test_empty_and_invalid(void **state)
{
    io_plan p;
    assert_int_equal(io_plan_ranges(NULL, 0, NULL, &p, NULL), PA_OK);
    assert_int_equal(p.n_reads, 0);
    assert_int_equal(p.bytes_read, 0);
    io_plan_free(&p);

    io_range bad[] = {{0, 10}, {UINT64_MAX - 5, 10}};
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(io_plan_ranges(bad, 2, NULL, &p, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "range 1"));
    assert_null(p.reads);
    pa_err_close(&err);
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random inputs: every range lies inside its read at its position; reads are
 * sorted; a read beyond max_read holds one range; neighbouring reads are
 * separate only because the hole exceeds max_gap or max_read would be exceeded. */
static void test_random_invariants(void **state)
{
    uint64_t seed = 42;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + rng(&seed) % 60;
        io_range r[60];
        for (size_t i = 0; i < n; i++) {
            r[i].offset = rng(&seed) % 100000;
            r[i].length = rng(&seed) % 3000;
        }
        io_plan_options o = {.max_gap = rng(&seed) % 2000, .max_read = (round % 3) ? 8000 : 0};
        io_plan p;
        assert_int_equal(io_plan_ranges(r, n, &o, &p, NULL), PA_OK);
        uint64_t wanted = 0, read = 0;
        size_t *count = calloc(p.n_reads, sizeof *count);
        for (size_t i = 0; i < n; i++) {
            wanted += r[i].length;
            size_t k = p.range_read[i];
            assert_true(k < p.n_reads);
            count[k]++;
            assert_int_equal(p.reads[k].offset + p.range_pos[i], r[i].offset);
            assert_true(p.range_pos[i] + r[i].length <= p.reads[k].length);
        }
        for (size_t k = 0; k < p.n_reads; k++) {
            read += p.reads[k].length;
            assert_true(count[k] > 0);
            if (o.max_read && p.reads[k].length > o.max_read)
                assert_int_equal(count[k], 1);
            if (k > 0) {
                const io_range *a = &p.reads[k - 1], *b = &p.reads[k];
                assert_true(a->offset <= b->offset);
                uint64_t a_end = a->offset + a->length;
                bool gap_too_big = b->offset > a_end && b->offset - a_end > o.max_gap;
                bool too_long = o.max_read && b->offset + b->length - a->offset > o.max_read;
                assert_true(gap_too_big || too_long);
            }
        }
        assert_int_equal(p.bytes_wanted, wanted);
        assert_int_equal(p.bytes_read, read);
        free(count);
        io_plan_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gap_joins),
        cmocka_unit_test(test_unsorted_overlapping),
        cmocka_unit_test(test_max_read),
        cmocka_unit_test(test_empty_and_invalid),
        cmocka_unit_test(test_random_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_queue.c - the bounded queue: FIFO order, a full queue blocks its
 * producer until a consumer makes room (back-pressure), timeouts, and close
 * waking every blocked producer and consumer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "core/core.h"

#define MS 1000000ull

static void test_fifo_and_try(void **state)
{
    pa_queue *q;
    assert_int_equal(pa_queue_create(0, &q, NULL), PA_EINVAL);
    assert_int_equal(pa_queue_create(3, &q, NULL), PA_OK);
    assert_int_equal(pa_queue_capacity(q), 3);
    for (intptr_t i = 1; i <= 3; i++)
        assert_int_equal(pa_queue_push(q, (void *)i, 0), PA_OK);
    assert_int_equal(pa_queue_push(q, (void *)4, 0), PA_ETIMEDOUT);   /* full: try fails */
    assert_int_equal(pa_queue_length(q), 3);
    void *v;
    for (intptr_t i = 1; i <= 3; i++) {
        assert_int_equal(pa_queue_pop(q, &v, 0), PA_OK);
        assert_int_equal((intptr_t)v, i);
    }
    assert_int_equal(pa_queue_pop(q, &v, 0), PA_ETIMEDOUT);
    /* Wrap around the ring many times. */
    for (intptr_t i = 0; i < 100; i++) {
        assert_int_equal(pa_queue_push(q, (void *)i, 0), PA_OK);
        assert_int_equal(pa_queue_pop(q, &v, 0), PA_OK);
        assert_int_equal((intptr_t)v, i);
    }
    pa_queue_destroy(q);
}

static void test_timeouts(void **state)
{
    pa_queue *q;
    assert_int_equal(pa_queue_create(1, &q, NULL), PA_OK);
    void *v;
    uint64_t t0 = pa_now_ns();
    assert_int_equal(pa_queue_pop(q, &v, 50 * MS), PA_ETIMEDOUT);
    uint64_t waited = pa_now_ns() - t0;
    assert_true(waited >= 50 * MS);
    assert_int_equal(pa_queue_push(q, (void *)1, 0), PA_OK);
    t0 = pa_now_ns();
    assert_int_equal(pa_queue_push(q, (void *)2, 30 * MS), PA_ETIMEDOUT);
    assert_true(pa_now_ns() - t0 >= 30 * MS);
    assert_int_equal(pa_queue_length(q), 1);   /* the timed-out push added nothing */
    pa_queue_destroy(q);
}

typedef struct producer {
    pa_queue *q;
    int pushed;          /* items whose push returned */
    int rc;
    int n;
} producer;

static void *produce(void *p)
{
    producer *pr = p;
    for (intptr_t i = 0; i < pr->n; i++) {
        pr->rc = pa_queue_push(pr->q, (void *)(i + 1), PA_WAIT_FOREVER);
        if (pr->rc != PA_OK)
            return NULL;
        __atomic_add_fetch(&pr->pushed, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void test_full_queue_blocks_producer(void **state)
{
    pa_queue *q;
    assert_int_equal(pa_queue_create(2, &q, NULL), PA_OK);
    producer pr = {.q = q, .n = 5};
    pthread_t t;
    pthread_create(&t, NULL, produce, &pr);
    /* The producer fills the queue and then must stay blocked. */
    while (__atomic_load_n(&pr.pushed, __ATOMIC_SEQ_CST) < 2)
        usleep(1000);
    usleep(100 * 1000);
    assert_int_equal(__atomic_load_n(&pr.pushed, __ATOMIC_SEQ_CST), 2);
    assert_int_equal(pa_queue_length(q), 2);
    /* Each pop makes room for exactly one more push. */
    void *v;
    for (int expect = 3; expect <= 5; expect++) {
        assert_int_equal(pa_queue_pop(q, &v, PA_WAIT_FOREVER), PA_OK);
        while (__atomic_load_n(&pr.pushed, __ATOMIC_SEQ_CST) < expect)
            usleep(1000);
        usleep(20 * 1000);
        assert_int_equal(__atomic_load_n(&pr.pushed, __ATOMIC_SEQ_CST), expect);
        assert_true(pa_queue_length(q) <= 2);
    }
    pthread_join(t, NULL);
    assert_int_equal(pr.rc, PA_OK);
    /* 1..5 were pushed and 1, 2, 3 popped: 4 and 5 remain, in order. */
    assert_int_equal(pa_queue_pop(q, &v, 0), PA_OK);
    assert_int_equal((intptr_t)v, 4);
    assert_int_equal(pa_queue_pop(q, &v, 0), PA_OK);
    assert_int_equal((intptr_t)v, 5);
    pa_queue_destroy(q);
}

typedef struct consumer { pa_queue *q; int rc; int got; } consumer;
static void *consume(void *p)
{
    consumer *c = p;
    void *v;
    while ((c->rc = pa_queue_pop(c->q, &v, PA_WAIT_FOREVER)) == PA_OK)
        c->got++;
    return NULL;
}

static void test_close_wakes_everyone(void **state)
{
    /* Blocked producers on a full queue. */
    pa_queue *q;
    assert_int_equal(pa_queue_create(1, &q, NULL), PA_OK);
    assert_int_equal(pa_queue_push(q, (void *)1, 0), PA_OK);
    producer pr[3];
    pthread_t tp[3];
    for (int i = 0; i < 3; i++) {
        pr[i] = (producer){.q = q, .n = 1};
        pthread_create(&tp[i], NULL, produce, &pr[i]);
    }
    usleep(50 * 1000);
    pa_queue_close(q);
    for (int i = 0; i < 3; i++) {
        pthread_join(tp[i], NULL);
        assert_int_equal(pr[i].rc, PA_ECLOSED);
        assert_int_equal(pr[i].pushed, 0);
    }
    assert_true(pa_queue_closed(q));
    /* Pop drains what is left, then reports closed. */
    void *v;
    assert_int_equal(pa_queue_pop(q, &v, PA_WAIT_FOREVER), PA_OK);
    assert_int_equal((intptr_t)v, 1);
    assert_int_equal(pa_queue_pop(q, &v, PA_WAIT_FOREVER), PA_ECLOSED);
    assert_int_equal(pa_queue_push(q, (void *)9, PA_WAIT_FOREVER), PA_ECLOSED);
    pa_queue_destroy(q);

    /* Blocked consumers on an empty queue. */
    assert_int_equal(pa_queue_create(4, &q, NULL), PA_OK);
    consumer c[3];
    pthread_t tc[3];
    for (int i = 0; i < 3; i++) {
        c[i] = (consumer){.q = q};
        pthread_create(&tc[i], NULL, consume, &c[i]);
    }
    usleep(50 * 1000);
    pa_queue_close(q);
    for (int i = 0; i < 3; i++) {
        pthread_join(tc[i], NULL);
        assert_int_equal(c[i].rc, PA_ECLOSED);
    }
    pa_queue_destroy(q);
}

static void test_many_producers_consumers(void **state)
{
    pa_queue *q;
    assert_int_equal(pa_queue_create(8, &q, NULL), PA_OK);
    producer pr[4];
    consumer c[3];
    pthread_t tp[4], tc[3];
    for (int i = 0; i < 3; i++) {
        c[i] = (consumer){.q = q};
        pthread_create(&tc[i], NULL, consume, &c[i]);
    }
    for (int i = 0; i < 4; i++) {
        pr[i] = (producer){.q = q, .n = 20000};
        pthread_create(&tp[i], NULL, produce, &pr[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(tp[i], NULL);
        assert_int_equal(pr[i].rc, PA_OK);
    }
    pa_queue_close(q);
    int total = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(tc[i], NULL);
        total += c[i].got;
    }
    assert_int_equal(total, 80000);   /* nothing lost, nothing duplicated */
    pa_queue_destroy(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_and_try),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_full_queue_blocks_producer),
        cmocka_unit_test(test_close_wakes_everyone),
        cmocka_unit_test(test_many_producers_consumers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * scan_testutil.h - what the scan tests (test_scan, test_scan_pageindex)
 * share to run on the device named by PISTA_TEST_DEVICE (default "cpu"):
 * the scan's chunks live in that device's memory, which on `sim` the host
 * cannot read, so a test reads a host copy (st_host) and lets a chunk it
 * does not read go only after its uploads ran (st_drop). Their own
 * allocations are outside fault injection (a test faults the scan's).
 */
#ifndef SCAN_TESTUTIL_H
#define SCAN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "device/device.h"

/* The test device's spec: "cpu" unless PISTA_TEST_DEVICE says otherwise. */
static inline const char *st_spec(void)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    return s && *s ? s : "cpu";
}

/* Wait on the host until c's producer's work (the scan's uploads) ran. */
static inline void st_wait(dv_device *d, dv_chunk *c)
{
    if (dv_host_visible(d))
        return;
    int64_t faults = pa_fault_alloc_suspend();
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    assert_int_equal(dv_chunk_wait_ready(c, s, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    dv_stream_destroy(s);
    pa_fault_alloc_after(faults);
}

/* Wait on the host until c is ready and return what the wait reports: a
 * page the device refused to decode (a data fault of the scan's stream)
 * shows here, not in pq_scan_next. */
static inline int st_ready(dv_device *d, dv_chunk *c, pa_err *err)
{
    if (dv_host_visible(d))
        return PA_OK;
    int64_t faults = pa_fault_alloc_suspend();
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    int rc = dv_chunk_wait_ready(c, s, err);
    if (rc == PA_OK)
        rc = dv_stream_sync(s, err);
    dv_stream_destroy(s);
    pa_fault_alloc_after(faults);
    return rc;
}

/* Destroy a scan chunk the test did not read. */
static inline void st_drop(dv_device *d, dv_chunk *c)
{
    st_wait(d, c);
    dv_chunk_destroy(c);
}

/* c with its columns readable on the host: c itself on a host-visible
 * device, else a copy in pinned memory (and c is destroyed). */
static inline dv_chunk *st_host_try(dv_device *d, dv_chunk *c, pa_err *err)
{
    if (dv_host_visible(d))
        return c;
    int64_t faults = pa_fault_alloc_suspend();
    dv_chunk *h;
    dv_stream *s;
    assert_int_equal(dv_chunk_create(d, c->n_columns, &h, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    /* A fault of the scan's stream, also one after c was ready (a page the
     * device refused in a later row group), fails every later wait on it
     * and the syncs after it. */
    int rc = dv_chunk_wait_ready(c, s, err);
    int64_t n = c->length;
    for (int j = 0; rc == PA_OK && j < c->n_columns; j++) {
        const pa_column *x = &c->columns[j];
        pa_column *o = &h->columns[j];
        o->type = x->type;
        o->length = n;
        size_t vb = x->type.id == PA_TYPE_VARCHAR ? 0 : (size_t)n * (size_t)pa_type_bytes(x->type);
        if (x->type.id == PA_TYPE_VARCHAR) {
            assert_int_equal(dv_chunk_alloc_host(h, (size_t)(n + 1) * 4, (void **)&o->offsets, NULL), PA_OK);
            assert_int_equal(dv_copy_async(s, o->offsets, x->offsets, (size_t)(n + 1) * 4, DV_COPY_D2H, NULL), PA_OK);
            if ((rc = dv_stream_sync(s, err)) != PA_OK)
                break;
            vb = (size_t)o->offsets[n];
        }
        assert_int_equal(dv_chunk_alloc_host(h, vb ? vb : 1, &o->data, NULL), PA_OK);
        if (vb)
            assert_int_equal(dv_copy_async(s, o->data, x->data, vb, DV_COPY_D2H, NULL), PA_OK);
        if (x->validity) {
            size_t nb = (size_t)(n + 7) / 8;
            assert_int_equal(dv_chunk_alloc_host(h, nb ? nb : 1, (void **)&o->validity, NULL), PA_OK);
            if (nb)
                assert_int_equal(dv_copy_async(s, o->validity, x->validity, nb, DV_COPY_D2H, NULL), PA_OK);
        }
    }
    h->length = n;
    if (rc == PA_OK)
        rc = dv_stream_sync(s, err);
    dv_stream_destroy(s);
    dv_chunk_destroy(c);
    pa_fault_alloc_after(faults);
    if (rc != PA_OK) {
        dv_chunk_destroy(h);
        return NULL;
    }
    return h;
}

static inline dv_chunk *st_host(dv_device *d, dv_chunk *c)
{
    dv_chunk *h = st_host_try(d, c, NULL);
    assert_non_null(h);
    return h;
}

#endif /* SCAN_TESTUTIL_H */

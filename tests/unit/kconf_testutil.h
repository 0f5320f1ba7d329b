/*
 * kconf_testutil.h - what every kernel conformance test shares: the status
 * of a kernel call expected to fail. On a device whose kernels run later
 * (sim, cuda) a bad argument is reported by the stream, which keeps the
 * error, so such a call gets a stream of its own; an error only the data
 * shows is its stream's data fault (dv_stream_fault_words), which ends
 * with the stream.
 */
#ifndef KCONF_TESTUTIL_H
#define KCONF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernels/kernels.h"

/* A context on a new stream of d, after `after` (the stream that made the
 * call's inputs; may be NULL) finished its work. */
static inline kn_ctx kc_err_ctx(dv_device *d, dv_stream *after)
{
    kn_ctx c = {d, NULL};
    if (after)
        assert_int_equal(dv_stream_sync(after, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &c.stream, NULL), PA_OK);
    return c;
}

/* The call's status rc, or when it enqueued, its kernel's (message on
 * err); destroys the stream. */
static inline int kc_err_end(kn_ctx *c, int rc, pa_err *err)
{
    int s = dv_stream_sync(c->stream, rc == PA_OK ? err : NULL);
    dv_stream_destroy(c->stream);
    return rc != PA_OK ? rc : s;
}

/* The status of `call`, a kernel call that names its context `ec`, run on
 * a stream of its own after stream `after`. */
#define KC_STATUS(dev, after, err, call)                                                            \
    __extension__({                                                                                 \
        kn_ctx ec = kc_err_ctx((dev), (after));                                                     \
        kc_err_end(&ec, (call), (err));                                                             \
    })

#endif /* KCONF_TESTUTIL_H */

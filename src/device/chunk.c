/*
 * chunk.c - chunks: column views plus the device buffers that back them,
 * freed together. The buffer list grows by doubling; a chunk typically holds
 * two or three buffers per column (values, offsets, validity).
 */
#include "device/device_int.h"

#include <string.h>

int dv_chunk_create(dv_device *d, int n_columns, dv_chunk **out, pa_err *err)
{
    if (n_columns < 0)
        return pa_error(err, PA_EINVAL, "chunk with %d columns", n_columns);
    dv_chunk *c = pa_calloc(1, sizeof *c);
    pa_column *cols = pa_calloc(n_columns ? (size_t)n_columns : 1, sizeof *cols);
    if (!c || !cols) {
        pa_free(c);
        pa_free(cols);
        return pa_error(err, PA_ENOMEM, "out of host memory creating a chunk of %d columns", n_columns);
    }
    c->dev = d;
    c->refs_ = 1;
    c->n_columns = n_columns;
    c->columns = cols;
    *out = c;
    return PA_OK;
}

int dv_chunk_alloc(dv_chunk *c, size_t size, void **ptr, pa_err *err)
{
    if (c->n_buffers_ == c->cap_buffers_) {
        int cap = c->cap_buffers_ ? c->cap_buffers_ * 2 : 8;
        void **b = pa_realloc(c->buffers_, (size_t)cap * sizeof *b);
        if (!b)
            return pa_error(err, PA_ENOMEM, "out of host memory tracking chunk buffers");
        c->buffers_ = b;
        c->cap_buffers_ = cap;
    }
    void *p;
    int rc = dv_alloc(c->dev, size, &p, err);
    if (rc != PA_OK)
        return rc;
    c->buffers_[c->n_buffers_++] = p;
    *ptr = p;
    return PA_OK;
}

int dv_chunk_depend(dv_chunk *c, dv_chunk *other, pa_err *err)
{
    if (c->n_deps_ == c->cap_deps_) {
        int cap = c->cap_deps_ ? c->cap_deps_ * 2 : 4;
        dv_chunk **d = pa_realloc(c->deps_, (size_t)cap * sizeof *d);
        if (!d)
            return pa_error(err, PA_ENOMEM, "out of host memory tracking chunk references");
        c->deps_ = d;
        c->cap_deps_ = cap;
    }
    c->deps_[c->n_deps_++] = dv_chunk_retain(other);
    return PA_OK;
}

dv_chunk *dv_chunk_retain(dv_chunk *c)
{
    __atomic_add_fetch(&c->refs_, 1, __ATOMIC_RELAXED);
    return c;
}

void dv_chunk_destroy(dv_chunk *c)
{
    if (!c || __atomic_sub_fetch(&c->refs_, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    for (int i = 0; i < c->n_buffers_; i++)
        dv_free(c->dev, c->buffers_[i]);
    for (int i = 0; i < c->n_deps_; i++)
        dv_chunk_destroy(c->deps_[i]);
    pa_free(c->deps_);
    pa_free(c->buffers_);
    pa_free(c->columns);
    pa_free(c);
}

size_t dv_chunk_bytes(const dv_chunk *c)
{
    size_t n = 0;
    for (int i = 0; i < c->n_buffers_; i++)
        n += pa_mempool_block_size(c->dev->pool, c->buffers_[i]);
    return n;
}

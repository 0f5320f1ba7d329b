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

void dv_chunk_destroy(dv_chunk *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_buffers_; i++)
        dv_free(c->dev, c->buffers_[i]);
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

/*
 * net_gpu.c - the GPUs' communicator (net.h, nt_gpu_*): the agreement
 * rounds around NCCL's set-up, which net_nccl_cuda.c drives. Without the
 * CUDA backend (or NCCL's header) the NCCL calls below say so: every rank
 * fails nt_gpu_open with that error, together.
 */
#include "net/net_int.h"

#include <stdio.h>
#include <string.h>

struct nt_gpu {
    nt_world *w;
    dv_device *dev;
    void *impl;
};

#if !defined(PISTA_HAVE_CUDA) || !defined(PISTA_HAVE_NCCL_H)
#ifndef PISTA_HAVE_CUDA
#define NO_NCCL "NCCL needs the CUDA backend, and this build has none"
#else
#define NO_NCCL "this build found no NCCL header (nccl.h) with the CUDA toolkit"
#endif
int nt__nccl_prepare(dv_device *dev, void **impl, pa_err *err)
{
    (void)dev;
    *impl = NULL;
    return pa_error(err, PA_EUNSUPPORTED, NO_NCCL);
}
int nt__nccl_unique_id(void *impl, char id[NT__NCCL_ID_BYTES], pa_err *err)
{
    (void)impl, (void)id;
    return pa_error(err, PA_EUNSUPPORTED, NO_NCCL);
}
int nt__nccl_init(void *impl, const char id[NT__NCCL_ID_BYTES], int rank, int size, pa_err *err)
{
    (void)impl, (void)id, (void)rank, (void)size;
    return pa_error(err, PA_EUNSUPPORTED, NO_NCCL);
}
int nt__nccl_alltoallv(void *impl, void *stream, int size, const void *const *send, const int64_t *send_bytes,
                       void *const *recv, const int64_t *recv_bytes, pa_err *err)
{
    (void)impl, (void)stream, (void)size, (void)send, (void)send_bytes, (void)recv, (void)recv_bytes;
    return pa_error(err, PA_EUNSUPPORTED, NO_NCCL);
}
const char *nt__nccl_describe(const void *impl)
{
    (void)impl;
    return "none";
}
void nt__nccl_close(void *impl) { (void)impl; }
#endif

/* What every rank reports in an agreement round. */
typedef struct agree_msg {
    int32_t status;
    char msg[236];
} agree_msg;

/* Every rank's rc (with `mine` its error) to every rank: PA_OK when all
 * are PA_OK, else the lowest failing rank's error, as "rank R: message",
 * on every rank. */
static int agree(nt_world *w, int rc, const pa_err *mine, pa_err *err)
{
    agree_msg m;
    memset(&m, 0, sizeof m);
    m.status = rc;
    if (rc != PA_OK)
        snprintf(m.msg, sizeof m.msg, "%s", mine->msg[0] ? mine->msg : pa_status_message(rc));
    int size = nt_size(w);
    nt_buf *all = pa_calloc((size_t)size, sizeof *all);
    if (!all)
        return pa_error(err, PA_ENOMEM, "out of memory opening the GPUs' communicator");
    int r = nt_allgather(w, &m, sizeof m, all, err);
    for (int p = 0; r == PA_OK && p < size; p++) {
        agree_msg o;
        if (all[p].bytes != (int64_t)sizeof o) {
            r = pa_error(err, PA_ECORRUPT, "rank %d answered the GPUs' set-up with %lld bytes", p,
                         (long long)all[p].bytes);
            break;
        }
        memcpy(&o, all[p].data, sizeof o);
        if (o.status != PA_OK) {
            o.msg[sizeof o.msg - 1] = 0;
            r = pa_error(err, o.status, "rank %d: %s", p, o.msg);
        }
    }
    for (int p = 0; p < size; p++)
        nt_buf_release(w, all[p].data);
    pa_free(all);
    return r;
}

int nt_gpu_open(nt_world *w, dv_device *dev, nt_gpu **out, pa_err *err)
{
    *out = NULL;
    if (!w || !dev)
        return pa_error(err, PA_EINVAL, "nt_gpu_open: a world and a device are required");
    pa_err mine;
    pa_err_init(&mine);
    void *impl = NULL;
    int rc = dv_kind_of(dev) != DV_KIND_CUDA
                 ? pa_error(&mine, PA_EUNSUPPORTED, "NCCL moves GPU memory, and device %s is not a CUDA device",
                            dv_name(dev))
                 : nt__nccl_prepare(dev, &impl, &mine);
    rc = agree(w, rc, &mine, err);
    /* Rank 0's id to every rank: its status first, so a failure there
     * fails every rank here too. */
    struct {
        int32_t status;
        char msg[124];
        char id[NT__NCCL_ID_BYTES];
    } blob;
    memset(&blob, 0, sizeof blob);
    if (rc == PA_OK) {
        pa_err_clear(&mine);
        if (nt_rank(w) == 0 && (blob.status = nt__nccl_unique_id(impl, blob.id, &mine)) != PA_OK)
            snprintf(blob.msg, sizeof blob.msg, "%s", mine.msg);
        nt_buf b = {&blob, sizeof blob};
        if ((rc = nt_bcast(w, 0, &b, err)) == PA_OK) {
            if (nt_rank(w) != 0) {
                if (b.bytes == (int64_t)sizeof blob)
                    memcpy(&blob, b.data, sizeof blob);
                else
                    rc = pa_error(err, PA_ECORRUPT, "rank 0 sent a NCCL id of %lld bytes", (long long)b.bytes);
                nt_buf_release(w, b.data);
            }
            if (rc == PA_OK && blob.status != PA_OK) {
                blob.msg[sizeof blob.msg - 1] = 0;
                rc = pa_error(err, blob.status, "rank 0: %s", blob.msg);
            }
        }
    }
    if (rc == PA_OK) {
        pa_err_clear(&mine);
        int r = nt__nccl_init(impl, blob.id, nt_rank(w), nt_size(w), &mine);
        rc = agree(w, r, &mine, err);
    }
    nt_gpu *g = rc == PA_OK ? pa_calloc(1, sizeof *g) : NULL;
    if (rc == PA_OK && !g)
        rc = pa_error(err, PA_ENOMEM, "out of memory opening the GPUs' communicator");
    pa_err_close(&mine);
    if (rc != PA_OK) {
        nt__nccl_close(impl);
        return rc;
    }
    g->w = w;
    g->dev = dev;
    g->impl = impl;
    *out = g;
    return PA_OK;
}

int nt_gpu_alltoallv(nt_gpu *g, dv_stream *s, const void *const *send, const int64_t *send_bytes, void *const *recv,
                     const int64_t *recv_bytes, pa_err *err)
{
    void *h = dv_stream_handle(s);
    if (!g || !h)
        return pa_error(err, PA_EINVAL, "nt_gpu_alltoallv: a communicator and a stream of its CUDA device are required");
    return nt__nccl_alltoallv(g->impl, h, nt_size(g->w), send, send_bytes, recv, recv_bytes, err);
}

const char *nt_gpu_describe(const nt_gpu *g) { return g ? nt__nccl_describe(g->impl) : "none"; }

void nt_gpu_close(nt_gpu *g)
{
    if (!g)
        return;
    nt__nccl_close(g->impl);
    pa_free(g);
}

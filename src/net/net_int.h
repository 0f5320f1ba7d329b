/*
 * net_int.h - inside src/net: the round every collective is made of, and
 * the table of operations a backend provides (net.c: local; net_mpi.c: MPI).
 */
#ifndef PISTA_NET_INT_H
#define PISTA_NET_INT_H

#include <pthread.h>

#include "net/net.h"

/* What a rank tells a peer before the data of a round. */
#define NT__MSG_BYTES 240
typedef struct nt__hdr {
    int64_t bytes;    /* data that follows for that peer */
    int32_t status;   /* PA_OK, or the error the sender's round carries */
    int32_t flags;    /* NT__CLOSING: the world's last round */
    char msg[NT__MSG_BYTES];
} nt__hdr;
#define NT__CLOSING 1
#define NT__CACHE_BYTES ((size_t)1 << 30)

/* One round as the network thread runs it: out[p] and send[p] for every
 * peer p; the backend fills in[p] and, when every header is PA_OK,
 * recv[p] (pa_malloc'd, in[p].bytes; the caller's self copy included). */
typedef struct nt__round {
    nt__hdr *out, *in;
    const void **send;
    void **recv;
} nt__round;

typedef struct nt__ops {
    const char *name;
    /* Join the world: sets w->rank and w->size. */
    int (*open)(nt_world *w, pa_err *err);
    /* The round's headers, then (all PA_OK) its data. PA_ENET naming the
     * rank when a peer is lost; the world is then broken. */
    int (*round)(nt_world *w, nt__round *r, pa_err *err);
    /* Heartbeats, between rounds (the network thread calls it at least
     * every heartbeat interval). PA_ENET when a peer is lost. */
    int (*idle)(nt_world *w, pa_err *err);
    /* The rival for `pista bench net`: the library's own all-to-all of
     * `bytes` to every other rank, buffers allocated and touched once, best
     * of `runs`, the slowest rank's seconds (NULL: no such thing). */
    int (*raw_alltoall)(nt_world *w, int64_t bytes, int runs, double *secs, pa_err *err);
    /* Leave; `clean`: every rank got through the closing round. */
    void (*close)(nt_world *w, bool clean);
} nt__ops;

/* A receive buffer of at least n bytes from the world's cache (NULL: out
 * of memory); given back with nt_buf_release. */
void *nt__buf_get(nt_world *w, size_t n);

extern const nt__ops nt__local_ops;
#ifdef PISTA_HAVE_MPI
extern const nt__ops nt__mpi_ops;
#endif

/* NCCL through the CUDA backend (net_nccl_cuda.c; without it, net_gpu.c's
 * answers say so). impl is the backend's. */
#define NT__NCCL_ID_BYTES 128
int nt__nccl_prepare(dv_device *dev, void **impl, pa_err *err);
int nt__nccl_unique_id(void *impl, char id[NT__NCCL_ID_BYTES], pa_err *err);
int nt__nccl_init(void *impl, const char id[NT__NCCL_ID_BYTES], int rank, int size, pa_err *err);
int nt__nccl_alltoallv(void *impl, void *stream, int size, const void *const *send, const int64_t *send_bytes,
                       void *const *recv, const int64_t *recv_bytes, pa_err *err);
const char *nt__nccl_describe(const void *impl);
void nt__nccl_close(void *impl);

struct nt_world {
    const nt__ops *ops;
    int rank, size;
    int heartbeat_ms, timeout_ms;
    void *impl;                 /* the backend's */

    pthread_t thread;           /* the network thread */
    pthread_mutex_t mu;
    pthread_cond_t work;        /* a request queued, or stop */
    pthread_cond_t done;        /* a request completed */
    nt_req *head, *tail;        /* queued rounds, in call order */
    bool stop;
    bool broken;                /* a peer was lost: broken_err says which */
    pa_err broken_err;
    nt_stats stats;             /* under mu */
    pthread_mutex_t buf_mu;     /* the receive buffers given back: */
    struct nt__cached *cache;   /* a list, at most NT__CACHE_BYTES in all */
    size_t cached;
};

#endif /* PISTA_NET_INT_H */

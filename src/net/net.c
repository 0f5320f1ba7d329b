/*
 * net.c - the world, the network thread and the collectives, built on one
 * backend operation: a round (net_int.h). Also the local backend: a world
 * of this process alone.
 *
 * Every collective call becomes a request queued in call order; the
 * network thread runs them one by one, so all rounds of this rank happen in
 * the order its caller made them, and between rounds it lets the backend
 * send and check heartbeats.
 */
#include "net/net_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum req_kind { K_ALLTOALL, K_ALLGATHER, K_BCAST, K_GATHER, K_FAIL, K_CLOSE, K_RAW };

struct nt_req {
    nt_req *next;
    nt_world *w;
    enum req_kind kind;
    int root;
    int64_t raw_bytes;   /* K_RAW: the benchmark's size, runs and result */
    int raw_runs;
    double *raw_secs;
    nt__round r;      /* arrays of w->size entries (one allocation) */
    nt_buf *user;     /* where received buffers go (see deliver) */
    bool done;        /* under w->mu */
    int rc;
    pa_err err;
};

/* ----------------------------------------------------- receive buffers
 *
 * Each buffer has a header before its data with its capacity; given back,
 * it joins the cache (its pages stay mapped) unless the cache is full. A
 * request takes the smallest cached buffer that fits and is at most 4x
 * too big. */

typedef struct nt__cached {
    struct nt__cached *next;
    size_t cap;
} nt__cached;

void *nt__buf_get(nt_world *w, size_t n)
{
    pthread_mutex_lock(&w->buf_mu);
    nt__cached **best = NULL;
    for (nt__cached **c = &w->cache; *c; c = &(*c)->next)
        if ((*c)->cap >= n && (*c)->cap / 4 <= n + 4096 && (!best || (*c)->cap < (*best)->cap))
            best = c;
    nt__cached *h = NULL;
    if (best) {
        h = *best;
        *best = h->next;
        w->cached -= h->cap;
    }
    pthread_mutex_unlock(&w->buf_mu);
    if (!h) {
        size_t cap = n ? n : 1;
        if (!(h = pa_malloc(sizeof *h + cap)))
            return NULL;
        h->cap = cap;
    }
    return h + 1;
}

void nt_buf_release(nt_world *w, void *data)
{
    if (!data)
        return;
    nt__cached *h = (nt__cached *)data - 1;
    pthread_mutex_lock(&w->buf_mu);
    bool keep = w->cached + h->cap <= NT__CACHE_BYTES;
    if (keep) {
        h->next = w->cache;
        w->cache = h;
        w->cached += h->cap;
    }
    pthread_mutex_unlock(&w->buf_mu);
    if (!keep)
        pa_free(h);
}

/* --------------------------------------------------------------- world */

static bool opened_once;   /* MPI may be initialised once per process */

bool nt_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                       "MV2_COMM_WORLD_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

int nt_launched_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS"};
    for (size_t i = 0; nt_launched() && i < sizeof vars / sizeof *vars; i++) {
        const char *s = getenv(vars[i]);
        if (s && atoi(s) > 0)
            return atoi(s);
    }
    return 0;
}

int nt_launched_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; nt_launched() && i < sizeof vars / sizeof *vars; i++) {
        const char *s = getenv(vars[i]);
        if (s && *s)
            return atoi(s);
    }
    return -1;
}

static int env_ms(const char *name, int given, int dflt)
{
    const char *s = getenv(name);
    if (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == 0 && v > 0 && v < 86400000)
            return (int)v;
    }
    return given > 0 ? given : dflt;
}

static void *net_main(void *arg);

int nt_world_open(const nt_options *opt, nt_world **out, pa_err *err)
{
    *out = NULL;
    if (__atomic_exchange_n(&opened_once, true, __ATOMIC_ACQ_REL))
        return pa_error(err, PA_EINVAL, "the network world was opened before in this process (once only)");
    nt_options none = {0};
    if (!opt)
        opt = &none;
    const nt__ops *ops = &nt__local_ops;
    if (nt_launched()) {
#ifdef PISTA_HAVE_MPI
        ops = &nt__mpi_ops;
#else
        return pa_error(err, PA_EUNSUPPORTED,
                        "started by an MPI launcher, but this pista was built without MPI "
                        "(install OpenMPI's development files and rebuild)");
#endif
    }
    nt_world *w = pa_calloc(1, sizeof *w);
    if (!w)
        return pa_error(err, PA_ENOMEM, "out of memory opening the network world");
    w->ops = ops;
    w->heartbeat_ms = env_ms("PISTA_NET_HEARTBEAT_MS", opt->heartbeat_ms, 500);
    w->timeout_ms = env_ms("PISTA_NET_TIMEOUT_MS", opt->timeout_ms, 10000);
    pa_err_init(&w->broken_err);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    pthread_mutex_init(&w->buf_mu, NULL);
    int rc = ops->open(w, err);
    if (rc == PA_OK && pthread_create(&w->thread, NULL, net_main, w) != 0) {
        rc = pa_error(err, PA_ENOMEM, "cannot start the network thread: %s", strerror(errno));
        ops->close(w, false);
    }
    if (rc != PA_OK) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->work);
        pthread_cond_destroy(&w->done);
        pthread_mutex_destroy(&w->buf_mu);
        pa_err_close(&w->broken_err);
        pa_free(w);
        return rc;
    }
    *out = w;
    return PA_OK;
}

int nt_rank(const nt_world *w) { return w->rank; }
int nt_size(const nt_world *w) { return w->size; }
const char *nt_backend(const nt_world *w) { return w->ops->name; }

bool nt_broken(const nt_world *w)
{
    nt_world *m = (nt_world *)w;
    pthread_mutex_lock(&m->mu);
    bool b = m->broken;
    pthread_mutex_unlock(&m->mu);
    return b;
}

void nt_stats_get(const nt_world *w, nt_stats *out)
{
    nt_world *m = (nt_world *)w;
    pthread_mutex_lock(&m->mu);
    *out = m->stats;
    pthread_mutex_unlock(&m->mu);
}

/* ------------------------------------------------------------ requests */

static void req_free(nt_req *q)
{
    if (!q)
        return;
    pa_err_close(&q->err);
    pa_free(q->r.out);
    pa_free(q);
}

/* A request of kind k with empty headers (out[p].bytes = 0 for every p). */
static int req_new(nt_world *w, enum req_kind k, nt_req **out, pa_err *err)
{
    int n = w->size;
    nt_req *q = pa_calloc(1, sizeof *q);
    size_t hdrs = 2 * (size_t)n * sizeof(nt__hdr), ptrs = 2 * (size_t)n * sizeof(void *);
    char *mem = q ? pa_calloc(1, hdrs + ptrs) : NULL;
    if (!mem) {
        pa_free(q);
        return pa_error(err, PA_ENOMEM, "out of memory for a network round of %d ranks", n);
    }
    q->w = w;
    q->kind = k;
    q->r.out = (nt__hdr *)mem;
    q->r.in = q->r.out + n;
    q->r.send = (const void **)(mem + hdrs);
    q->r.recv = (void **)(mem + hdrs) + n;
    pa_err_init(&q->err);
    *out = q;
    return PA_OK;
}

static int submit(nt_world *w, nt_req *q, nt_req **out)
{
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = q;
    else
        w->head = q;
    w->tail = q;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    *out = q;
    return PA_OK;
}

/* After the round: the lowest rank's error, or the received buffers handed
 * to the caller as the collective says. */
static void deliver(nt_req *q)
{
    nt_world *w = q->w;
    int n = w->size, bad = -1;
    for (int p = 0; p < n && bad < 0; p++)
        if (q->r.in[p].status != PA_OK)
            bad = p;
    if (q->rc == PA_OK && bad >= 0) {
        nt__hdr *h = &q->r.in[bad];
        h->msg[NT__MSG_BYTES - 1] = 0;
        q->rc = pa_error(&q->err, h->status, "rank %d: %s", bad, h->msg);
    }
    int64_t sent = 0, got = 0;
    for (int p = 0; q->rc == PA_OK && p < n; p++)   /* failed rounds carry no data */
        if (p != w->rank) {
            sent += q->r.out[p].bytes;
            got += q->r.in[p].bytes;
        }
    pthread_mutex_lock(&w->mu);
    w->stats.rounds++;
    w->stats.bytes_sent += sent;
    w->stats.bytes_received += got;
    pthread_mutex_unlock(&w->mu);
    for (int p = 0; p < n; p++) {
        bool keep = q->rc == PA_OK && q->user &&
                    (q->kind == K_ALLTOALL || q->kind == K_ALLGATHER || (q->kind == K_GATHER && w->rank == q->root) ||
                     (q->kind == K_BCAST && p == q->root));
        if (keep) {
            nt_buf *dst = q->kind == K_BCAST ? q->user : &q->user[p];
            if (q->kind == K_BCAST && w->rank == q->root)   /* the root keeps its own buffer */
                nt_buf_release(w, q->r.recv[p]);
            else
                *dst = (nt_buf){q->r.recv[p], q->r.in[p].bytes};
        } else {
            nt_buf_release(w, q->r.recv[p]);
        }
        q->r.recv[p] = NULL;
    }
}

static void run(nt_world *w, nt_req *q)
{
    pthread_mutex_lock(&w->mu);
    bool broken = w->broken;
    if (broken)
        q->rc = pa_err_propagate(&q->err, &w->broken_err);
    pthread_mutex_unlock(&w->mu);
    if (!broken && q->kind == K_RAW) {
        q->rc = w->ops->raw_alltoall(w, q->raw_bytes, q->raw_runs, q->raw_secs, &q->err);
    } else if (!broken) {
        q->rc = w->ops->round(w, &q->r, &q->err);
        if (q->rc == PA_ENET) {
            pthread_mutex_lock(&w->mu);
            w->broken = true;
            pa_err_propagate(&w->broken_err, &q->err);
            pthread_mutex_unlock(&w->mu);
        }
        deliver(q);
    }
}

static void *net_main(void *arg)
{
    nt_world *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        nt_req *q = w->head;
        if (q) {
            w->head = q->next;
            if (!w->head)
                w->tail = NULL;
            pthread_mutex_unlock(&w->mu);
            run(w, q);
            pthread_mutex_lock(&w->mu);
            q->done = true;
            pthread_cond_broadcast(&w->done);
            continue;
        }
        if (w->stop)
            break;
        if (!w->broken) {
            pthread_mutex_unlock(&w->mu);
            pa_err e;
            pa_err_init(&e);
            int rc = w->ops->idle(w, &e);
            pthread_mutex_lock(&w->mu);
            if (rc != PA_OK && !w->broken) {
                w->broken = true;
                pa_err_propagate(&w->broken_err, &e);
            }
            pa_err_close(&e);
            if (w->head || w->stop)
                continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(w->heartbeat_ms > 4 ? w->heartbeat_ms / 4 : 1) * 1000000L;
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&w->work, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

bool nt_test(nt_req *r)
{
    pthread_mutex_lock(&r->w->mu);
    bool d = r->done;
    pthread_mutex_unlock(&r->w->mu);
    return d;
}

int nt_wait(nt_req *r, pa_err *err)
{
    if (!r)
        return pa_error(err, PA_EINVAL, "nt_wait: no request");
    nt_world *w = r->w;
    pthread_mutex_lock(&w->mu);
    while (!r->done)
        pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
    int rc = r->rc;
    if (rc != PA_OK)
        pa_err_propagate(err, &r->err);
    req_free(r);
    return rc;
}

/* --------------------------------------------------------- collectives */

static int check_root(const nt_world *w, int root, pa_err *err)
{
    if (root < 0 || root >= w->size)
        return pa_error(err, PA_EINVAL, "root rank %d is not in the world of %d", root, w->size);
    return PA_OK;
}

int nt_alltoallv_start(nt_world *w, const nt_buf *send, nt_buf *recv, nt_req **out, pa_err *err)
{
    nt_req *q;
    int rc = req_new(w, K_ALLTOALL, &q, err);
    if (rc != PA_OK)
        return rc;
    for (int p = 0; p < w->size; p++) {
        if (send[p].bytes < 0 || (send[p].bytes && !send[p].data)) {
            req_free(q);
            return pa_error(err, PA_EINVAL, "all-to-all: bad buffer for rank %d (%lld bytes)", p,
                            (long long)send[p].bytes);
        }
        q->r.out[p].bytes = send[p].bytes;
        q->r.send[p] = send[p].data;
        recv[p] = (nt_buf){0};
    }
    q->user = recv;
    return submit(w, q, out);
}

int nt_allgather_start(nt_world *w, const void *data, int64_t bytes, nt_buf *recv, nt_req **out, pa_err *err)
{
    if (bytes < 0 || (bytes && !data))
        return pa_error(err, PA_EINVAL, "all-gather: bad buffer (%lld bytes)", (long long)bytes);
    nt_req *q;
    int rc = req_new(w, K_ALLGATHER, &q, err);
    if (rc != PA_OK)
        return rc;
    for (int p = 0; p < w->size; p++) {
        q->r.out[p].bytes = bytes;
        q->r.send[p] = data;
        recv[p] = (nt_buf){0};
    }
    q->user = recv;
    return submit(w, q, out);
}

int nt_bcast_start(nt_world *w, int root, nt_buf *buf, nt_req **out, pa_err *err)
{
    int rc = check_root(w, root, err);
    if (rc != PA_OK)
        return rc;
    bool me = w->rank == root;
    if (me && (buf->bytes < 0 || (buf->bytes && !buf->data)))
        return pa_error(err, PA_EINVAL, "broadcast: bad buffer (%lld bytes)", (long long)buf->bytes);
    nt_req *q;
    if ((rc = req_new(w, K_BCAST, &q, err)) != PA_OK)
        return rc;
    q->root = root;
    for (int p = 0; me && p < w->size; p++) {
        q->r.out[p].bytes = p == root ? 0 : buf->bytes;
        q->r.send[p] = buf->data;
    }
    if (!me)
        *buf = (nt_buf){0};
    q->user = buf;
    return submit(w, q, out);
}

int nt_gather_start(nt_world *w, int root, const void *data, int64_t bytes, nt_buf *recv, nt_req **out,
                    pa_err *err)
{
    int rc = check_root(w, root, err);
    if (rc != PA_OK)
        return rc;
    if (bytes < 0 || (bytes && !data))
        return pa_error(err, PA_EINVAL, "gather: bad buffer (%lld bytes)", (long long)bytes);
    if (w->rank == root && !recv)
        return pa_error(err, PA_EINVAL, "gather: the root needs receive buffers");
    nt_req *q;
    if ((rc = req_new(w, K_GATHER, &q, err)) != PA_OK)
        return rc;
    q->root = root;
    q->r.out[root].bytes = bytes;
    q->r.send[root] = data;
    for (int p = 0; w->rank == root && p < w->size; p++)
        recv[p] = (nt_buf){0};
    q->user = w->rank == root ? recv : NULL;
    return submit(w, q, out);
}


int nt_alltoallv(nt_world *w, const nt_buf *send, nt_buf *recv, pa_err *err)
{
    nt_req *q = NULL;
    int rc = nt_alltoallv_start(w, send, recv, &q, err);
    return rc == PA_OK ? nt_wait(q, err) : rc;
}

int nt_allgather(nt_world *w, const void *data, int64_t bytes, nt_buf *recv, pa_err *err)
{
    nt_req *q = NULL;
    int rc = nt_allgather_start(w, data, bytes, recv, &q, err);
    return rc == PA_OK ? nt_wait(q, err) : rc;
}

int nt_bcast(nt_world *w, int root, nt_buf *buf, pa_err *err)
{
    nt_req *q = NULL;
    int rc = nt_bcast_start(w, root, buf, &q, err);
    return rc == PA_OK ? nt_wait(q, err) : rc;
}

int nt_gather(nt_world *w, int root, const void *data, int64_t bytes, nt_buf *recv, pa_err *err)
{
    nt_req *q = NULL;
    int rc = nt_gather_start(w, root, data, bytes, recv, &q, err);
    return rc == PA_OK ? nt_wait(q, err) : rc;
}

int nt_fail(nt_world *w, const pa_err *why, pa_err *err)
{
    nt_req *q;
    int rc = req_new(w, K_FAIL, &q, err);
    if (rc != PA_OK)
        return rc;
    int code = why && why->code != PA_OK ? why->code : PA_EINTERNAL;
    for (int p = 0; p < w->size; p++) {
        q->r.out[p].status = code;
        snprintf(q->r.out[p].msg, NT__MSG_BYTES, "%s", why && why->code != PA_OK ? why->msg : "failed");
    }
    submit(w, q, &q);
    return nt_wait(q, err);
}

int nt_bench_raw_alltoall(nt_world *w, int64_t bytes, int runs, double *secs, pa_err *err)
{
    if (!w->ops->raw_alltoall)
        return pa_error(err, PA_EUNSUPPORTED, "the %s world has no all-to-all of its own", w->ops->name);
    if (bytes < 0 || bytes > INT32_MAX || runs < 1)
        return pa_error(err, PA_EINVAL, "raw all-to-all: %lld bytes (at most 2 GiB), %d runs", (long long)bytes,
                        runs);
    nt_req *q;
    int rc = req_new(w, K_RAW, &q, err);
    if (rc != PA_OK)
        return rc;
    q->raw_bytes = bytes;
    q->raw_runs = runs;
    q->raw_secs = secs;
    submit(w, q, &q);
    return nt_wait(q, err);
}

void nt_world_close(nt_world *w)
{
    if (!w)
        return;
    nt_req *q = NULL;
    int rc = req_new(w, K_CLOSE, &q, NULL);
    if (rc == PA_OK) {
        for (int p = 0; p < w->size; p++)
            q->r.out[p].flags = NT__CLOSING;
        submit(w, q, &q);
        rc = nt_wait(q, NULL);
    }
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    bool clean = rc == PA_OK && !w->broken;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    w->ops->close(w, clean);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    for (nt__cached *c = w->cache, *next; c; c = next) {
        next = c->next;
        pa_free(c);
    }
    pthread_mutex_destroy(&w->buf_mu);
    pa_err_close(&w->broken_err);
    pa_free(w);
}

/* ---------------------------------------------------- the local backend */

static int local_open(nt_world *w, pa_err *err)
{
    (void)err;
    w->rank = 0;
    w->size = 1;
    return PA_OK;
}

static int local_round(nt_world *w, nt__round *r, pa_err *err)
{
    r->in[0] = r->out[0];
    if (r->in[0].status != PA_OK)
        return PA_OK;
    size_t n = (size_t)r->out[0].bytes;
    r->recv[0] = nt__buf_get(w, n);
    if (!r->recv[0])
        return pa_error(err, PA_ENOMEM, "out of memory receiving %zu bytes", n);
    if (n)
        memcpy(r->recv[0], r->send[0], n);
    return PA_OK;
}

static int local_idle(nt_world *w, pa_err *err)
{
    (void)w;
    (void)err;
    return PA_OK;
}

static void local_close(nt_world *w, bool clean)
{
    (void)w;
    (void)clean;
}

const nt__ops nt__local_ops = {
    .name = "local",
    .open = local_open,
    .round = local_round,
    .idle = local_idle,
    .close = local_close,
};

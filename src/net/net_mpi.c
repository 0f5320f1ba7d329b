/*
 * net_mpi.c - the MPI backend of src/net (host memory).
 *
 * Only the network thread calls MPI between open and close (the world asks
 * for MPI_THREAD_SERIALIZED). A round is point-to-point: every rank posts a
 * receive of a fixed header from each peer and sends its own, then the data
 * the headers announced, in pieces of at most 1 GiB (MPI counts are int;
 * messages between two ranks with one tag arrive in order). Waiting is a
 * polling loop, so heartbeats keep going out while this rank waits, and a
 * peer it waits for that has not been heard from for the timeout is named
 * in the error. Heartbeats are 8-byte messages with their own tag, one
 * receive posted per peer at all times.
 */
#include "net/net_int.h"

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { TAG_HEARTBEAT = 101, TAG_HEADER = 102, TAG_DATA = 103 };
/* Data moves in pieces of 4 MiB: small enough that a transfer in progress
 * shows (pieces complete every millisecond or so), large enough for full
 * bandwidth; and below MPI's int counts. */
#define PIECE ((int64_t)4 << 20)

typedef struct mpi_state {
    MPI_Comm comm;
    uint64_t *seen;           /* per peer: when it was last heard from (ns) */
    MPI_Request *hb_recv;     /* per peer: the posted heartbeat receive */
    MPI_Request *hb_send;     /* per peer: the last heartbeat sent */
    int64_t *hb_in;           /* per peer: its receive buffer */
    int64_t hb_out;           /* what heartbeats carry (a count; unused) */
    uint64_t hb_last;         /* when heartbeats last went out */
} mpi_state;

static int mpi_fail(pa_err *err, int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    return pa_error(err, PA_ENET, "MPI %s failed: %s", what, text);
}

static void mpi_close(nt_world *w, bool clean);

static int mpi_open(nt_world *w, pa_err *err)
{
    int inited = 0, provided = 0, rc;
    MPI_Initialized(&inited);
    if (!inited && (rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided)) != MPI_SUCCESS)
        return pa_error(err, PA_ENET, "MPI_Init_thread failed (error %d)", rc);
    if (inited)
        MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED)
        return pa_error(err, PA_ENET, "the MPI library gives thread level %d; Pista's network thread needs "
                                      "MPI_THREAD_SERIALIZED", provided);
    mpi_state *st = pa_calloc(1, sizeof *st);
    if (!st)
        return pa_error(err, PA_ENOMEM, "out of memory opening the MPI world");
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &st->comm)) != MPI_SUCCESS) {
        pa_free(st);
        return mpi_fail(err, rc, "Comm_dup");
    }
    MPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(st->comm, &w->rank);
    MPI_Comm_size(st->comm, &w->size);
    int n = w->size;
    st->seen = pa_calloc((size_t)n, sizeof *st->seen);
    st->hb_recv = pa_calloc((size_t)n, sizeof *st->hb_recv);
    st->hb_send = pa_calloc((size_t)n, sizeof *st->hb_send);
    st->hb_in = pa_calloc((size_t)n, sizeof *st->hb_in);
    if (!st->seen || !st->hb_recv || !st->hb_send || !st->hb_in) {
        pa_free(st->seen), pa_free(st->hb_recv), pa_free(st->hb_send), pa_free(st->hb_in);
        MPI_Comm_free(&st->comm);
        pa_free(st);
        return pa_error(err, PA_ENOMEM, "out of memory opening the MPI world of %d ranks", n);
    }
    uint64_t now = pa_now_ns();
    for (int p = 0; p < n; p++) {
        st->seen[p] = now;
        st->hb_recv[p] = st->hb_send[p] = MPI_REQUEST_NULL;
    }
    w->impl = st;
    for (int p = 0; p < n; p++)
        if (p != w->rank && (rc = MPI_Irecv(&st->hb_in[p], 1, MPI_INT64_T, p, TAG_HEARTBEAT, st->comm,
                                            &st->hb_recv[p])) != MPI_SUCCESS) {
            rc = mpi_fail(err, rc, "Irecv of a heartbeat");
            mpi_close(w, false);
            return rc;
        }
    return PA_OK;
}

/* Heartbeats in and (when due) out. */
static int heartbeat(nt_world *w, mpi_state *st, uint64_t now, pa_err *err)
{
    int rc, flag;
    for (int p = 0; p < w->size; p++) {
        if (p == w->rank)
            continue;
        for (;;) {   /* every heartbeat that arrived */
            if ((rc = MPI_Test(&st->hb_recv[p], &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return mpi_fail(err, rc, "Test of a heartbeat");
            if (!flag)
                break;
            st->seen[p] = now;
            if ((rc = MPI_Irecv(&st->hb_in[p], 1, MPI_INT64_T, p, TAG_HEARTBEAT, st->comm, &st->hb_recv[p])) !=
                MPI_SUCCESS)
                return mpi_fail(err, rc, "Irecv of a heartbeat");
        }
    }
    if (now - st->hb_last < (uint64_t)w->heartbeat_ms * 1000000u)
        return PA_OK;
    st->hb_last = now;
    st->hb_out++;
    for (int p = 0; p < w->size; p++) {
        if (p == w->rank)
            continue;
        if ((rc = MPI_Test(&st->hb_send[p], &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return mpi_fail(err, rc, "Test of a heartbeat sent");
        if (flag && (rc = MPI_Isend(&st->hb_out, 1, MPI_INT64_T, p, TAG_HEARTBEAT, st->comm, &st->hb_send[p])) !=
                        MPI_SUCCESS)
            return mpi_fail(err, rc, "Isend of a heartbeat");
    }
    return PA_OK;
}

static int lost(nt_world *w, int p, uint64_t now, pa_err *err)
{
    mpi_state *st = w->impl;
    return pa_error(err, PA_ENET, "rank %d has not been heard from for %.1f s: it died or stopped answering "
                                  "(rank %d of %d gives up)",
                    p, (double)(now - st->seen[p]) * 1e-9, w->rank, w->size);
}

/* Wait for requests reqs[0..n) (peer[i]: whose), sending heartbeats, and
 * naming a peer lost while its request is pending. MPI moves data only
 * while it is called, so this polls without sleeping as long as requests
 * keep completing (as MPI_Wait itself spins); when none did for 2 ms (a
 * peer still computing) it sleeps between polls, up to 1 ms. */
static int wait_all(nt_world *w, MPI_Request *reqs, const int *peer, int n, pa_err *err)
{
    mpi_state *st = w->impl;
    uint64_t timeout = (uint64_t)w->timeout_ms * 1000000u;
    uint64_t progress = pa_now_ns();
    int last_pending = n;
    long nap_ns = 10000;
    for (;;) {
        int pending = 0, rc, flag;
        for (int i = 0; i < n; i++) {
            if (reqs[i] == MPI_REQUEST_NULL)
                continue;
            if ((rc = MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return mpi_fail(err, rc, "Test");
            pending += !flag;
        }
        if (!pending)
            return PA_OK;
        uint64_t now = pa_now_ns();
        if ((rc = heartbeat(w, st, now, err)) != PA_OK)
            return rc;
        for (int i = 0; i < n; i++)
            if (reqs[i] != MPI_REQUEST_NULL && now - st->seen[peer[i]] > timeout)
                return lost(w, peer[i], now, err);
        if (pending < last_pending) {
            last_pending = pending;
            progress = now;
            nap_ns = 10000;
        }
        if (now - progress < 2000000u) {
            sched_yield();
        } else {
            struct timespec ts = {0, nap_ns};
            nanosleep(&ts, NULL);
            nap_ns = nap_ns * 2 > 1000000 ? 1000000 : nap_ns * 2;
        }
    }
}

static int mpi_round(nt_world *w, nt__round *r, pa_err *err)
{
    mpi_state *st = w->impl;
    int n = w->size, me = w->rank, rc = PA_OK, k = 0;
    r->in[me] = r->out[me];
    /* Headers: a receive from and a send to each peer. */
    MPI_Request *reqs = pa_malloc(2 * (size_t)n * sizeof *reqs);
    int *peer = pa_malloc(2 * (size_t)n * sizeof *peer);
    if (!reqs || !peer) {
        pa_free(reqs), pa_free(peer);
        return pa_error(err, PA_ENOMEM, "out of memory for a round of %d ranks", n);
    }
    for (int p = 0; p < n && rc == PA_OK; p++) {
        if (p == me)
            continue;
        int e1 = MPI_Irecv(&r->in[p], (int)sizeof(nt__hdr), MPI_BYTE, p, TAG_HEADER, st->comm, &reqs[k]);
        peer[k++] = p;
        int e2 = e1 == MPI_SUCCESS
                     ? MPI_Isend(&r->out[p], (int)sizeof(nt__hdr), MPI_BYTE, p, TAG_HEADER, st->comm, &reqs[k])
                     : e1;
        peer[k++] = p;
        if (e2 != MPI_SUCCESS)
            rc = mpi_fail(err, e2, "send of a round's header");
    }
    if (rc == PA_OK)
        rc = wait_all(w, reqs, peer, k, err);
    pa_free(reqs), pa_free(peer);
    if (rc != PA_OK)
        return rc;
    for (int p = 0; p < n; p++)
        if (r->in[p].status != PA_OK)
            return PA_OK;   /* a rank failed: no data this round (net.c reports it) */
    for (int p = 0; p < n; p++)
        if (r->in[p].bytes < 0)
            return pa_error(err, PA_ENET, "rank %d announced %lld bytes", p, (long long)r->in[p].bytes);
    /* Data: buffers for what comes, then the pieces both ways. */
    int pieces = 0;
    for (int p = 0; p < n; p++) {
        size_t b = (size_t)r->in[p].bytes;
        if (!(r->recv[p] = nt__buf_get(w, b)))
            return pa_error(err, PA_ENOMEM, "out of memory receiving %zu bytes from rank %d", b, p);
        if (p != me)
            pieces += (int)((r->in[p].bytes + PIECE - 1) / PIECE + (r->out[p].bytes + PIECE - 1) / PIECE);
    }
    if (r->out[me].bytes)
        memcpy(r->recv[me], r->send[me], (size_t)r->out[me].bytes);
    reqs = pa_malloc((size_t)(pieces ? pieces : 1) * sizeof *reqs);
    peer = pa_malloc((size_t)(pieces ? pieces : 1) * sizeof *peer);
    if (!reqs || !peer) {
        pa_free(reqs), pa_free(peer);
        return pa_error(err, PA_ENOMEM, "out of memory for a round of %d ranks", n);
    }
    k = 0;
    for (int p = 0; p < n && rc == PA_OK; p++) {
        if (p == me)
            continue;
        for (int64_t at = 0; at < r->in[p].bytes && rc == PA_OK; at += PIECE) {
            int len = (int)(r->in[p].bytes - at < PIECE ? r->in[p].bytes - at : PIECE);
            int e = MPI_Irecv((char *)r->recv[p] + at, len, MPI_BYTE, p, TAG_DATA, st->comm, &reqs[k]);
            peer[k++] = p;
            if (e != MPI_SUCCESS)
                rc = mpi_fail(err, e, "receive of a round's data");
        }
        for (int64_t at = 0; at < r->out[p].bytes && rc == PA_OK; at += PIECE) {
            int len = (int)(r->out[p].bytes - at < PIECE ? r->out[p].bytes - at : PIECE);
            int e = MPI_Isend((const char *)r->send[p] + at, len, MPI_BYTE, p, TAG_DATA, st->comm, &reqs[k]);
            peer[k++] = p;
            if (e != MPI_SUCCESS)
                rc = mpi_fail(err, e, "send of a round's data");
        }
    }
    if (rc == PA_OK)
        rc = wait_all(w, reqs, peer, k, err);
    pa_free(reqs), pa_free(peer);
    return rc;
}

static int mpi_idle(nt_world *w, pa_err *err)
{
    return heartbeat(w, w->impl, pa_now_ns(), err);
}

static int mpi_raw_alltoall(nt_world *w, int64_t bytes, int runs, double *secs, pa_err *err)
{
    mpi_state *st = w->impl;
    size_t total = (size_t)bytes * (size_t)w->size;
    char *s = pa_malloc(total ? total : 1), *d = pa_malloc(total ? total : 1);
    int rc = s && d ? PA_OK : pa_error(err, PA_ENOMEM, "raw all-to-all: out of memory for 2 x %zu bytes", total);
    if (rc == PA_OK) {
        memset(s, 1, total);
        memset(d, 2, total);
    }
    double best = 1e30;
    for (int r = 0; rc == PA_OK && r < runs; r++) {
        int e = MPI_Barrier(st->comm);
        double t0 = MPI_Wtime();
        if (e == MPI_SUCCESS)
            e = MPI_Alltoall(s, (int)bytes, MPI_BYTE, d, (int)bytes, MPI_BYTE, st->comm);
        double t = MPI_Wtime() - t0, slowest = t;
        if (e == MPI_SUCCESS)
            e = MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, st->comm);
        if (e != MPI_SUCCESS)
            rc = mpi_fail(err, e, "Alltoall");
        else if (slowest < best)
            best = slowest;
    }
    pa_free(s), pa_free(d);
    *secs = best;
    return rc;
}

static void mpi_close(nt_world *w, bool clean)
{
    mpi_state *st = w->impl;
    if (!st)
        return;
    if (clean) {   /* every rank got through the closing round */
        for (int p = 0; p < w->size; p++) {
            if (st->hb_recv[p] != MPI_REQUEST_NULL) {
                MPI_Cancel(&st->hb_recv[p]);
                MPI_Wait(&st->hb_recv[p], MPI_STATUS_IGNORE);
            }
            MPI_Wait(&st->hb_send[p], MPI_STATUS_IGNORE);
        }
        MPI_Barrier(st->comm);
        MPI_Comm_free(&st->comm);
        MPI_Finalize();
    }
    /* Otherwise a peer is lost: MPI's shutdown would wait for it. The
     * process ends without it and the launcher ends the job. */
    pa_free(st->seen), pa_free(st->hb_recv), pa_free(st->hb_send), pa_free(st->hb_in);
    pa_free(st);
    w->impl = NULL;
}

const nt__ops nt__mpi_ops = {
    .name = "mpi",
    .open = mpi_open,
    .round = mpi_round,
    .idle = mpi_idle,
    .raw_alltoall = mpi_raw_alltoall,
    .close = mpi_close,
};

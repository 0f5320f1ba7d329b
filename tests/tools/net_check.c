/*
 * net_check.c - src/net's collectives checked on every rank of a job
 * (tests/sh/test_net.sh runs it under mpirun with 1 to 4 ranks, and alone:
 * the local world). Each rank prints "net_check: rank R of N ok" when every
 * check passed, or the failures, and exits non-zero.
 *
 *   net_check basic        all-to-all, all-gather, broadcast, gather, rounds
 *                          in flight together, the statistics
 *   net_check fail R       rank R reports an error in a round the others
 *                          make as an all-to-all: every rank gets it, naming
 *                          R; the world then works on
 *   net_check stop R       rank R stops (SIGSTOP) after a first round: the
 *                          others' next round fails naming R; they exit 3
 *   net_check die R        rank R is killed (SIGKILL) after a first round
 *   net_check gpu SPEC     NCCL between the ranks' GPUs (nt_gpu_*), each rank
 *                          on device SPEC (cuda: rank r takes cuda:r): an
 *                          all-to-all of device buffers, checked byte by
 *                          byte; where a rank cannot (no CUDA device, no
 *                          NCCL), every rank must get that rank's error
 *                          from nt_gpu_open (it prints "gpu: ..." and
 *                          exits 5), none may wait in NCCL's set-up
 *
 * Every byte checked is a function of (sender, receiver, position), so a
 * buffer delivered to the wrong place or cut short is caught.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"

static int failures;
static int me, size;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            failures++;                                                                   \
            fprintf(stderr, "net_check: rank %d: FAIL line %d: ", me, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
        }                                                                                 \
    } while (0)

static int64_t size_of(int from, int to, int round) { return ((from * 7 + to * 3 + round * 5) % 11) * 997; }
static unsigned char byte_of(int from, int to, int round, int64_t i)
{
    return (unsigned char)(from * 31 + to * 17 + round * 101 + i * 7 + (i >> 9));
}

/* Round r of all-to-all: the send buffers and, after, the checks. */
static void fill_sends(nt_buf *send, int round)
{
    for (int p = 0; p < size; p++) {
        send[p].bytes = size_of(me, p, round);
        send[p].data = malloc((size_t)send[p].bytes + 1);
        for (int64_t i = 0; i < send[p].bytes; i++)
            ((unsigned char *)send[p].data)[i] = byte_of(me, p, round, i);
    }
}

static void check_recvs(const nt_buf *recv, int round)
{
    for (int p = 0; p < size; p++) {
        CHECK(recv[p].bytes == size_of(p, me, round), "round %d: %lld bytes from rank %d, want %lld", round,
              (long long)recv[p].bytes, p, (long long)size_of(p, me, round));
        CHECK(recv[p].data != NULL, "round %d: no buffer from rank %d", round, p);
        int64_t bad = -1;
        for (int64_t i = 0; recv[p].data && i < recv[p].bytes && i < size_of(p, me, round); i++)
            if (((unsigned char *)recv[p].data)[i] != byte_of(p, me, round, i)) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "round %d: byte %lld from rank %d differs", round, (long long)bad, p);
    }
}

static nt_world *world;

static void free_bufs(nt_buf *b, bool received)
{
    for (int p = 0; p < size; p++) {
        if (received)
            nt_buf_release(world, b[p].data);
        else
            free(b[p].data);
        b[p] = (nt_buf){0};
    }
}

static void basic(nt_world *w)
{
    pa_err e;
    pa_err_init(&e);
    nt_buf send[3][64], recv[3][64];
    /* Three all-to-all rounds in flight, waited for in order. */
    nt_req *q[3];
    for (int r = 0; r < 3; r++) {
        fill_sends(send[r], r);
        CHECK(nt_alltoallv_start(w, send[r], recv[r], &q[r], &e) == PA_OK, "start: %s", e.msg);
    }
    int64_t sent = 0, got = 0;
    for (int r = 0; r < 3; r++) {
        CHECK(nt_wait(q[r], &e) == PA_OK, "round %d: %s", r, e.msg);
        check_recvs(recv[r], r);
        for (int p = 0; p < size; p++)
            if (p != me)
                sent += size_of(me, p, r), got += size_of(p, me, r);
        free_bufs(send[r], false);
        free_bufs(recv[r], true);
    }
    nt_stats s;
    nt_stats_get(w, &s);
    CHECK(s.rounds == 3 && s.bytes_sent == sent && s.bytes_received == got,
          "stats: %lld rounds, %lld sent, %lld received; want 3, %lld, %lld", (long long)s.rounds,
          (long long)s.bytes_sent, (long long)s.bytes_received, (long long)sent, (long long)got);

    /* All-gather: rank p contributes p+1 bytes of value p. */
    unsigned char mine[64];
    memset(mine, me, sizeof mine);
    nt_buf all[64];
    CHECK(nt_allgather(w, mine, me + 1, all, &e) == PA_OK, "allgather: %s", e.msg);
    for (int p = 0; p < size; p++) {
        CHECK(all[p].bytes == p + 1, "allgather: %lld bytes from rank %d", (long long)all[p].bytes, p);
        for (int64_t i = 0; i < all[p].bytes; i++)
            CHECK(((unsigned char *)all[p].data)[i] == p, "allgather: rank %d's byte %lld", p, (long long)i);
    }
    free_bufs(all, true);

    /* Broadcast from every root; 1 MiB so it is not one packet. */
    for (int root = 0; root < size; root++) {
        int64_t n = 1 << 20;
        unsigned char *src = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++)
            src[i] = byte_of(root, 0, 7, i);
        nt_buf b = me == root ? (nt_buf){src, n} : (nt_buf){0};
        CHECK(nt_bcast(w, root, &b, &e) == PA_OK, "bcast from %d: %s", root, e.msg);
        CHECK(b.bytes == n && b.data && memcmp(b.data, src, (size_t)n) == 0, "bcast from %d: wrong data",
              root);
        if (me != root)
            nt_buf_release(w, b.data);
        free(src);
    }

    /* Gather to the last rank: rank p gives 3*p bytes. */
    int root = size - 1;
    unsigned char g[256];
    for (int i = 0; i < 256; i++)
        g[i] = byte_of(me, root, 9, i);
    nt_buf gathered[64];
    CHECK(nt_gather(w, root, g, 3 * me, me == root ? gathered : NULL, &e) == PA_OK, "gather: %s", e.msg);
    if (me == root) {
        for (int p = 0; p < size; p++) {
            CHECK(gathered[p].bytes == 3 * p, "gather: %lld bytes from %d", (long long)gathered[p].bytes, p);
            for (int64_t i = 0; i < gathered[p].bytes; i++)
                CHECK(((unsigned char *)gathered[p].data)[i] == byte_of(p, root, 9, i), "gather: rank %d byte %lld",
                      p, (long long)i);
        }
        free_bufs(gathered, true);
    }

    /* Bad arguments are refused on the calling rank, before any round. */
    nt_buf b = {0};
    CHECK(nt_bcast(w, size, &b, &e) == PA_EINVAL && strstr(e.msg, "not in the world"), "bcast root %d: %s",
          size, e.msg);
    pa_err_close(&e);
}

static void fail_round(nt_world *w, int bad)
{
    pa_err e;
    pa_err_init(&e);
    nt_buf send[64], recv[64];
    fill_sends(send, 4);
    int rc;
    if (me == bad) {
        pa_err why;
        pa_err_init(&why);
        pa_error(&why, PA_ECORRUPT, "lineitem.parquet: the disk is on fire");
        rc = nt_fail(w, &why, &e);
        pa_err_close(&why);
    } else {
        rc = nt_alltoallv(w, send, recv, &e);
    }
    char want[128];
    snprintf(want, sizeof want, "rank %d: lineitem.parquet: the disk is on fire", bad);
    CHECK(rc == PA_ECORRUPT && strstr(e.msg, want), "the failed round gave %d '%s'", rc, e.msg);
    for (int p = 0; me != bad && p < size; p++)
        CHECK(recv[p].data == NULL, "a failed round delivered data from %d", p);
    pa_err_clear(&e);
    /* The world works on. */
    CHECK(nt_alltoallv(w, send, recv, &e) == PA_OK, "the round after: %s", e.msg);
    check_recvs(recv, 4);
    free_bufs(send, false);
    free_bufs(recv, true);
    pa_err_close(&e);
}

/* Rank `bad` stops or dies after one round; the others' next round fails. */
static int lose(nt_world *w, int bad, int sig)
{
    pa_err e;
    pa_err_init(&e);
    unsigned char x = (unsigned char)me;
    nt_buf all[64];
    CHECK(nt_allgather(w, &x, 1, all, &e) == PA_OK, "first round: %s", e.msg);
    free_bufs(all, true);
    if (me == bad) {
        raise(sig);
        sleep(60);   /* SIGSTOP: until the launcher ends the job */
        return 0;
    }
    sleep(1);   /* it has stopped by now */
    int rc = nt_allgather(w, &x, 1, all, &e);
    char want[64];
    snprintf(want, sizeof want, "rank %d has not been heard from", bad);
    CHECK(rc == PA_ENET && strstr(e.msg, want), "the round after rank %d went gave %d '%s'", bad, rc, e.msg);
    CHECK(nt_broken(w), "the world is not marked broken");
    rc = nt_allgather(w, &x, 1, all, &e);
    CHECK(rc == PA_ENET, "a round of a broken world gave %d", rc);
    fprintf(stderr, "net_check: rank %d: %s\n", me, e.msg);
    pa_err_close(&e);
    return 3;
}

/* NCCL: device buffers of size_of bytes to every rank, on stream s. */
static int gpu(nt_world *w, const char *spec)
{
    char name[32];
    if (!strcmp(spec, "cuda"))
        snprintf(name, sizeof name, "cuda:%d", me);
    else
        snprintf(name, sizeof name, "%s", spec);
    pa_err e;
    pa_err_init(&e);
    dv_device *d = NULL;
    dv_options o = {.spec = name};
    dv_stream *st = NULL;
    nt_gpu *g = NULL;
    int rc = dv_open(&o, &d, &e);
    if (rc != PA_OK) {   /* still in the collective (with a cpu device): every rank fails there */
        fprintf(stderr, "net_check: rank %d: %s: %s\n", me, name, e.msg);
        dv_options c = {.spec = "cpu"};
        pa_err e2;
        pa_err_init(&e2);
        if (dv_open(&c, &d, &e2) != PA_OK) {
            fprintf(stderr, "net_check: rank %d: %s\n", me, e2.msg);
            exit(2);
        }
        pa_err_close(&e2);
    }
    pa_err_clear(&e);
    rc = nt_gpu_open(w, d, &g, &e);
    if (rc != PA_OK) {
        printf("net_check: rank %d of %d: gpu: %s\n", me, size, e.msg);
        fflush(stdout);
        dv_close(d);
        pa_err_close(&e);
        return 5;
    }
    void *send[64] = {0}, *recv[64] = {0};
    int64_t sb[64], rb[64];
    rc = dv_stream_create(d, &st, &e);
    for (int p = 0; rc == PA_OK && p < size; p++) {
        sb[p] = size_of(me, p, 0);
        rb[p] = size_of(p, me, 0);
        unsigned char *h = malloc((size_t)sb[p] + 1);
        for (int64_t i = 0; i < sb[p]; i++)
            h[i] = byte_of(me, p, 0, i);
        if ((rc = dv_alloc(d, (size_t)sb[p] + 1, &send[p], &e)) == PA_OK &&
            (rc = dv_copy_async(st, send[p], h, (size_t)sb[p], DV_COPY_H2D, &e)) == PA_OK)
            rc = dv_alloc(d, (size_t)rb[p] + 1, &recv[p], &e);
        if (rc == PA_OK)
            rc = dv_stream_sync(st, &e);
        free(h);
    }
    if (rc == PA_OK)
        rc = nt_gpu_alltoallv(g, st, (const void *const *)send, sb, recv, rb, &e);
    for (int p = 0; rc == PA_OK && p < size; p++) {
        unsigned char *h = malloc((size_t)rb[p] + 1);
        if ((rc = dv_copy_async(st, h, recv[p], (size_t)rb[p], DV_COPY_D2H, &e)) == PA_OK &&
            (rc = dv_stream_sync(st, &e)) == PA_OK)
            for (int64_t i = 0; i < rb[p]; i++)
                if (h[i] != byte_of(p, me, 0, i)) {
                    CHECK(0, "gpu: byte %lld from rank %d", (long long)i, p);
                    break;
                }
        free(h);
    }
    CHECK(rc == PA_OK, "gpu: %s", e.msg);
    if (rc == PA_OK)
        printf("net_check: rank %d of %d: gpu all-to-all ok (%s)\n", me, size, nt_gpu_describe(g));
    for (int p = 0; p < size; p++) {
        dv_free(d, send[p]);
        dv_free(d, recv[p]);
    }
    nt_gpu_close(g);
    if (st)
        dv_stream_destroy(st);
    dv_close(d);
    pa_err_close(&e);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    int arg = argc > 2 ? atoi(argv[2]) : 0;
    pa_err e;
    pa_err_init(&e);
    nt_world *w;
    if (nt_world_open(NULL, &w, &e) != PA_OK) {
        fprintf(stderr, "net_check: %s\n", e.msg);
        return 2;
    }
    world = w;
    me = nt_rank(w);
    size = nt_size(w);
    if (size > 64) {
        fprintf(stderr, "net_check: at most 64 ranks\n");
        return 2;
    }
    int status = 0;
    if (strcmp(mode, "basic") == 0) {
        basic(w);
    } else if (strcmp(mode, "fail") == 0) {
        fail_round(w, arg % size);
    } else if (strcmp(mode, "gpu") == 0) {
        status = gpu(w, argc > 2 ? argv[2] : "cuda");
    } else if (strcmp(mode, "stop") == 0 || strcmp(mode, "die") == 0) {
        status = lose(w, arg % size, strcmp(mode, "stop") == 0 ? SIGSTOP : SIGKILL);
    } else {
        fprintf(stderr, "net_check: unknown mode %s\n", mode);
        return 2;
    }
    if (failures == 0 && status == 0)
        printf("net_check: rank %d of %d ok (%s)\n", me, size, nt_backend(w));
    fflush(stdout);
    nt_world_close(w);
    pa_err_close(&e);
    return failures ? 1 : status;
}

/*
 * cmd_bench_join.c - `pista bench join`: the distributed repartition join
 * of the PystachIO paper (section 3), in its three execution modes, under
 * a launcher (mpirun -np N pista bench join).
 *
 * Two tables are generated on every rank, in the paper's proportions
 * (build R : probe S = 120 : 320), each row C eight-byte columns (the key
 * first): R holds the keys 0 .. |R|-1 once each (rank r the keys = r mod
 * N), S draws its keys from 0 .. 2|R|-1, so half its rows find their
 * partner (hit ratio 0.5). The join routes every row to rank hash(key) mod
 * N (one src/net all-to-all per chunk), builds a hash table of the R rows
 * a rank receives and probes it with the S rows it receives. Modes:
 *   blocking    partition all of R, send it, build; then all of S, probe;
 *   chunked     per chunk: partition, send, wait, build or probe;
 *   overlapped  deferred synchronisation: chunk i is partitioned and its
 *               round started, and only then is chunk i-1 waited for and
 *               built or probed, so the network thread moves chunk i while
 *               this thread partitions and probes.
 * Every mode's answer is checked: the matches and a checksum of the
 * matched rows' columns against the counts each rank knew while it
 * generated S (a wrong join is an error, never a figure). Rank 0 prints
 * the slowest rank's time per mode (best of --runs), the shuffled bytes'
 * rate per rank, and the ratio to a raw MPI_Alltoall of the same bytes in
 * the same run (the paper's "effective bandwidth", 77% there).
 * The compute runs on this host's CPU, one thread per rank.
 */
#include "cli/cli.h"
#include "net/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_BLOCKING, M_CHUNKED, M_OVERLAPPED, M__COUNT };
static const char *const mode_names[] = {"blocking", "chunked", "overlapped"};

typedef struct bj {
    nt_world *w;
    int me, n;
    int cols;
    int64_t chunk;            /* rows per chunk per rank */
    int64_t nr, ns;           /* this rank's generated rows */
    int64_t *r, *s;           /* row-major, cols int64 each */
    int64_t want_matches;     /* of this rank's S rows */
    uint64_t want_sum;
    /* the join's state */
    int64_t *got;             /* received R rows */
    int64_t n_got, cap_got;
    struct slot { int64_t key, at; } *slots;   /* hash table: at = index into got + 1 (0: empty) */
    int64_t n_slots;
    int64_t matches;
    uint64_t sum;
    int64_t sent_bytes;       /* to other ranks, this run */
    int64_t build_rows, probe_rows;   /* over every rank */
    bool round_failed;        /* a round returned an error: every rank has it */
} bj;

static inline int dest_of(int64_t key, int n)
{
    return (int)(((pa_mix64((uint64_t)key) >> 32) * (uint64_t)n) >> 32);
}

/* R: rank me's keys me, me + n, ...; column j of key k is k * (j + 1) + j.
 * S: keys from 0 .. 2|R| - 1; columns j > 0 from the row's position. */
static int generate(bj *b, int64_t build_rows, int64_t probe_rows, pa_err *err)
{
    b->nr = build_rows / b->n + (b->me < build_rows % b->n);
    b->ns = probe_rows / b->n + (b->me < probe_rows % b->n);
    b->r = malloc((size_t)(b->nr ? b->nr : 1) * (size_t)b->cols * sizeof(int64_t));
    b->s = malloc((size_t)(b->ns ? b->ns : 1) * (size_t)b->cols * sizeof(int64_t));
    if (!b->r || !b->s)
        return pa_error(err, PA_ENOMEM, "bench join: out of memory for the tables");
    for (int64_t i = 0; i < b->nr; i++) {
        int64_t k = b->me + i * b->n, *row = b->r + i * b->cols;
        for (int j = 0; j < b->cols; j++)
            row[j] = k * (j + 1) + j;
    }
    for (int64_t i = 0; i < b->ns; i++) {
        int64_t *row = b->s + i * b->cols;
        uint64_t h = pa_mix64((uint64_t)(b->me * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)i);
        int64_t k = (int64_t)(h % (uint64_t)(2 * (build_rows ? build_rows : 1)));
        row[0] = k;
        for (int j = 1; j < b->cols; j++)
            row[j] = (int64_t)(pa_mix64(h + (uint64_t)j) >> 20);
        if (k < build_rows) {
            b->want_matches++;
            b->want_sum += (uint64_t)(k * 2 + 1) + (uint64_t)row[b->cols - 1];   /* R's column 1, S's last */
        }
    }
    return PA_OK;
}

/* Rows [lo, hi) of t into one send buffer per rank; the buffers (cap[p]
 * bytes each) grow here and are kept from chunk to chunk: fresh pages
 * would cost a page fault each. */
static int partition(bj *b, const int64_t *t, int64_t lo, int64_t hi, nt_buf *send, int64_t *cap, pa_err *err)
{
    size_t rb = (size_t)b->cols * sizeof(int64_t);
    int64_t *count = calloc((size_t)b->n, sizeof *count);
    if (!count)
        return pa_error(err, PA_ENOMEM, "bench join: out of memory");
    for (int64_t i = lo; i < hi; i++)
        count[dest_of(t[i * b->cols], b->n)]++;
    int rc = PA_OK;
    for (int p = 0; p < b->n; p++) {
        send[p].bytes = count[p] * (int64_t)rb;
        if (send[p].bytes > cap[p] || !send[p].data) {
            void *d = realloc(send[p].data, send[p].bytes ? (size_t)send[p].bytes : 1);
            if (!d)
                rc = pa_error(err, PA_ENOMEM, "bench join: out of memory for send buffers");
            else
                send[p].data = d, cap[p] = send[p].bytes;
        }
        count[p] = 0;
        if (p != b->me)
            b->sent_bytes += send[p].bytes;
    }
    for (int64_t i = lo; rc == PA_OK && i < hi; i++) {
        const int64_t *row = t + i * b->cols;
        int p = dest_of(row[0], b->n);
        memcpy((char *)send[p].data + (size_t)count[p]++ * rb, row, rb);
    }
    free(count);
    return rc;
}

static void free_bufs(bj *b, nt_buf *send, nt_buf *recv)
{
    for (int p = 0; p < b->n; p++) {
        if (send) {   /* at the end of a run */
            free(send[p].data);
            send[p].data = NULL;
        }
        if (recv) {
            nt_buf_release(b->w, recv[p].data);
            recv[p].data = NULL;
        }
    }
}

static int insert(bj *b, const int64_t *row)
{
    if (b->n_got == b->cap_got) {
        int64_t cap = b->cap_got ? 2 * b->cap_got : 1 << 16;
        int64_t *g = realloc(b->got, (size_t)cap * (size_t)b->cols * sizeof *g);
        if (!g)
            return PA_ENOMEM;
        b->got = g;
        b->cap_got = cap;
    }
    if (2 * (b->n_got + 1) > b->n_slots) {   /* grow: rehash */
        int64_t ns = b->n_slots ? 2 * b->n_slots : 1 << 17;
        struct slot *sl = calloc((size_t)ns, sizeof *sl);
        if (!sl)
            return PA_ENOMEM;
        for (int64_t i = 0; i < b->n_got; i++) {
            int64_t k = b->got[i * b->cols];
            uint64_t h = pa_mix64((uint64_t)k) & (uint64_t)(ns - 1);
            while (sl[h].at)
                h = (h + 1) & (uint64_t)(ns - 1);
            sl[h] = (struct slot){k, i + 1};
        }
        free(b->slots);
        b->slots = sl;
        b->n_slots = ns;
    }
    memcpy(b->got + b->n_got * b->cols, row, (size_t)b->cols * sizeof *row);
    uint64_t h = pa_mix64((uint64_t)row[0]) & (uint64_t)(b->n_slots - 1);
    while (b->slots[h].at)
        h = (h + 1) & (uint64_t)(b->n_slots - 1);
    b->slots[h] = (struct slot){row[0], ++b->n_got};
    return PA_OK;
}

/* Probe with rows t[0..n): in groups of 16, their slots prefetched first
 * (the table is far bigger than the caches). */
static void probe_rows(bj *b, const int64_t *t, int64_t n)
{
    if (!b->n_slots)
        return;
    const uint64_t mask = (uint64_t)(b->n_slots - 1);
    uint64_t hs[16];
    for (int64_t i0 = 0; i0 < n; i0 += 16) {
        int m = n - i0 < 16 ? (int)(n - i0) : 16;
        for (int j = 0; j < m; j++) {
            hs[j] = pa_mix64((uint64_t)t[(i0 + j) * b->cols]) & mask;
            __builtin_prefetch(&b->slots[hs[j]]);
        }
        for (int j = 0; j < m; j++) {
            const int64_t *row = t + (i0 + j) * b->cols;
            for (uint64_t h = hs[j]; b->slots[h].at; h = (h + 1) & mask)
                if (b->slots[h].key == row[0]) {   /* R's keys are unique */
                    const int64_t *g = b->got + (b->slots[h].at - 1) * b->cols;
                    b->matches++;
                    b->sum += (uint64_t)g[1] + (uint64_t)row[b->cols - 1];
                    break;
                }
        }
    }
}

/* Build (R) or probe (S) with every row received. */
static int consume(bj *b, const nt_buf *recv, bool build, pa_err *err)
{
    size_t rb = (size_t)b->cols * sizeof(int64_t);
    for (int p = 0; p < b->n; p++) {
        if (recv[p].bytes % (int64_t)rb)
            return pa_error(err, PA_ECORRUPT, "bench join: %lld bytes from rank %d are not whole rows",
                            (long long)recv[p].bytes, p);
        int64_t rows = recv[p].bytes / (int64_t)rb;
        const int64_t *t = recv[p].data;
        if (!build)
            probe_rows(b, t, rows);
        for (int64_t i = 0; build && i < rows; i++)
            if (insert(b, t + i * b->cols) != PA_OK)
                return pa_error(err, PA_ENOMEM, "bench join: out of memory for the hash table");
    }
    return PA_OK;
}

/* The steps of a run: R's chunks, then S's. */
typedef struct step {
    const int64_t *t;
    int64_t lo, hi;
    bool build;
} step;

static int run_mode(bj *b, int mode, pa_err *err)
{
    b->n_got = 0;
    b->matches = 0;
    b->sum = 0;
    b->sent_bytes = 0;
    if (b->slots)
        memset(b->slots, 0, (size_t)b->n_slots * sizeof *b->slots);
    int64_t chunk = mode == M_BLOCKING ? INT64_MAX / 4 : b->chunk;
    /* Every rank makes the same number of rounds: the most chunks of any rank. */
    int64_t nr_max = b->build_rows / b->n + (b->build_rows % b->n != 0);
    int64_t ns_max = b->probe_rows / b->n + (b->probe_rows % b->n != 0);
    int64_t most_r = (nr_max + chunk - 1) / chunk, most_s = (ns_max + chunk - 1) / chunk;
    if (most_r < 1)
        most_r = 1;
    if (most_s < 1)
        most_s = 1;
    int64_t n_steps = most_r + most_s;
    nt_buf *send[2], *recv[2];
    int64_t *cap[2];
    nt_req *req[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        send[k] = calloc((size_t)b->n, sizeof **send);
        recv[k] = calloc((size_t)b->n, sizeof **recv);
        cap[k] = calloc((size_t)b->n, sizeof **cap);
    }
    int rc = send[0] && send[1] && recv[0] && recv[1] && cap[0] && cap[1]
                 ? PA_OK
                 : pa_error(err, PA_ENOMEM, "bench join: out of memory");
    for (int64_t i = 0; rc == PA_OK && i <= n_steps; i++) {
        int k = (int)(i & 1);
        if (i < n_steps) {
            step st = i < most_r ? (step){b->r, i * chunk, (i + 1) * chunk, true}
                                 : (step){b->s, (i - most_r) * chunk, (i - most_r + 1) * chunk, false};
            int64_t rows = st.build ? b->nr : b->ns;
            st.lo = st.lo < rows ? st.lo : rows;
            st.hi = st.hi < rows ? st.hi : rows;
            if ((rc = partition(b, st.t, st.lo, st.hi, send[k], cap[k], err)) != PA_OK)
                break;
            if ((rc = nt_alltoallv_start(b->w, send[k], recv[k], &req[k], err)) != PA_OK) {
                b->round_failed = true;
                break;
            }
            if (mode != M_OVERLAPPED) {   /* wait for this chunk now */
                rc = nt_wait(req[k], err);
                b->round_failed |= rc != PA_OK;
                req[k] = NULL;
                if (rc == PA_OK)
                    rc = consume(b, recv[k], st.build, err);
                free_bufs(b, NULL, recv[k]);
                continue;
            }
        }
        if (mode == M_OVERLAPPED && i > 0) {   /* chunk i-1: only now waited for */
            int j = 1 - k;
            rc = nt_wait(req[j], err);
            b->round_failed |= rc != PA_OK;
            req[j] = NULL;
            if (rc == PA_OK)
                rc = consume(b, recv[j], i - 1 < most_r, err);
            free_bufs(b, NULL, recv[j]);
        }
    }
    for (int k = 0; k < 2; k++) {
        if (req[k]) {
            pa_err e2;
            pa_err_init(&e2);
            nt_wait(req[k], &e2);
            pa_err_close(&e2);
        }
        if (send[k])
            free_bufs(b, send[k], recv[k]);
        free(send[k]);
        free(recv[k]);
        free(cap[k]);
    }
    return rc;
}

/* The sum over the ranks of x, mod 2^64 (every rank gets it). */
static int reduce_u64(nt_world *w, uint64_t x, uint64_t *out, pa_err *err)
{
    int n = nt_size(w);
    nt_buf *all = calloc((size_t)n, sizeof *all);
    if (!all)
        return pa_error(err, PA_ENOMEM, "bench join: out of memory");
    int rc = nt_allgather(w, &x, sizeof x, all, err);
    *out = 0;
    for (int p = 0; rc == PA_OK && p < n; p++) {
        uint64_t v;
        memcpy(&v, all[p].data, sizeof v);
        *out += v;
        nt_buf_release(w, all[p].data);
    }
    free(all);
    return rc;
}

/* The slowest rank's value of x (every rank gets it); with sum, the sum. */
static int reduce(nt_world *w, double x, bool sum, double *out, pa_err *err)
{
    int n = nt_size(w);
    nt_buf *all = calloc((size_t)n, sizeof *all);
    if (!all)
        return pa_error(err, PA_ENOMEM, "bench join: out of memory");
    int rc = nt_allgather(w, &x, sizeof x, all, err);
    if (rc == PA_OK) {
        *out = sum ? 0 : -1e300;
        for (int p = 0; p < n; p++) {
            double v;
            memcpy(&v, all[p].data, sizeof v);
            *out = sum ? *out + v : (v > *out ? v : *out);
            nt_buf_release(w, all[p].data);
        }
    }
    free(all);
    return rc;
}

static int usage(void)
{
    return cli_usage("bench join: options --build-rows N, --probe-rows N, --columns 2..16, --chunk-rows N, "
                     "--mode blocking|chunked|overlapped|all, --runs N");
}

int cli_bench_join(int argc, char **argv)
{
    int64_t build_rows = 3000000, probe_rows = 8000000, chunk = 1 << 18;
    int cols = 4, runs = 3, only = -1;
    for (int i = 0; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        char *end;
        long long x = strtoll(v, &end, 10);
        bool num = *v && !*end;
        if (!strcmp(a, "--build-rows") && num && x >= 1 && x <= (1LL << 34))
            build_rows = x;
        else if (!strcmp(a, "--probe-rows") && num && x >= 1 && x <= (1LL << 35))
            probe_rows = x;
        else if (!strcmp(a, "--columns") && num && x >= 2 && x <= 16)
            cols = (int)x;
        else if (!strcmp(a, "--chunk-rows") && num && x >= 1 && x <= (1LL << 30))
            chunk = x;
        else if (!strcmp(a, "--runs") && num && x >= 1 && x <= 100)
            runs = (int)x;
        else if (!strcmp(a, "--mode")) {
            only = !strcmp(v, "all") ? -1 : -2;
            for (int m = 0; m < M__COUNT; m++)
                if (!strcmp(v, mode_names[m]))
                    only = m;
            if (only == -2)
                return usage();
        } else
            return usage();
    }
    pa_err err;
    pa_err_init(&err);
    bj b = {0};
    if (nt_world_open(NULL, &b.w, &err) != PA_OK)
        return cli_fail(&err);
    b.me = nt_rank(b.w);
    b.n = nt_size(b.w);
    b.cols = cols;
    b.chunk = chunk;
    b.build_rows = build_rows;
    b.probe_rows = probe_rows;
    int rc = generate(&b, build_rows, probe_rows, &err);
    double want_m = 0, best[M__COUNT], shuffled[M__COUNT];
    uint64_t want_s = 0;
    if (rc == PA_OK)
        rc = reduce(b.w, (double)b.want_matches, true, &want_m, &err);
    if (rc == PA_OK)
        rc = reduce_u64(b.w, b.want_sum, &want_s, &err);
    for (int m = 0; m < M__COUNT; m++)
        best[m] = shuffled[m] = 0;
    for (int m = 0; rc == PA_OK && m < M__COUNT; m++) {
        if (only >= 0 && m != only)
            continue;
        for (int r = 0; rc == PA_OK && r < runs; r++) {
            double t, dummy, got_m = 0;
            uint64_t got_s = 0;
            if ((rc = reduce(b.w, 0, false, &dummy, &err)) != PA_OK)   /* start together */
                break;
            double t0 = pa_now_s();
            rc = run_mode(&b, m, &err);
            t = pa_now_s() - t0;
            /* An error here alone: the others are told in the round they make next. */
            if (rc != PA_OK && !b.round_failed) {
                pa_err e2;
                pa_err_init(&e2);
                nt_fail(b.w, &err, &e2);
                pa_err_close(&e2);
            }
            if (rc != PA_OK)
                break;
            if ((rc = reduce(b.w, t, false, &t, &err)) != PA_OK ||
                (rc = reduce(b.w, (double)b.matches, true, &got_m, &err)) != PA_OK ||
                (rc = reduce_u64(b.w, b.sum, &got_s, &err)) != PA_OK)
                break;
            if (got_m != want_m || got_s != want_s) {
                rc = pa_error(&err, PA_EINTERNAL, "bench join: the %s join is wrong: %.0f matches (want %.0f), checksum %s",
                              mode_names[m], got_m, want_m, got_s == want_s ? "right" : "wrong");
                break;
            }
            double bytes;
            if ((rc = reduce(b.w, (double)b.sent_bytes, false, &bytes, &err)) != PA_OK)
                break;
            if (best[m] == 0 || t < best[m])
                best[m] = t, shuffled[m] = bytes;
        }
    }
    /* A raw MPI_Alltoall of the same bytes: the most a rank sent, spread evenly over its peers. */
    double raw = 0, most = 0;
    for (int m = 0; m < M__COUNT; m++)
        most = shuffled[m] > most ? shuffled[m] : most;
    if (rc == PA_OK && b.n > 1 && most > 0) {
        int64_t per_peer = (int64_t)(most / (b.n - 1));
        if (per_peer > (1LL << 31) - 1)
            per_peer = (1LL << 31) - 1;
        rc = nt_bench_raw_alltoall(b.w, per_peer, runs, &raw, &err);
    }
    if (rc == PA_OK && b.me == 0) {
        printf("ranks: %d (%s); R %lld rows, S %lld rows (hit ratio 0.5), %d x 8-byte columns; chunks of %lld rows "
               "per rank; best of %d\n",
               b.n, nt_backend(b.w), (long long)build_rows, (long long)probe_rows, cols, (long long)chunk, runs);
        printf("answer: %.0f matches and their checksum, as generated, in every mode\n", want_m);
        printf("%-12s %9s %14s %12s %12s\n", "mode", "seconds", "GB/s/rank out", "vs raw a2a", "vs blocking");
        for (int m = 0; m < M__COUNT; m++) {
            if (best[m] == 0)
                continue;
            printf("%-12s %9.3f %14.2f %11.0f%% %11.2fx\n", mode_names[m], best[m], shuffled[m] / best[m] * 1e-9,
                   raw > 0 ? raw / best[m] * 100 : 0, best[M_BLOCKING] > 0 ? best[M_BLOCKING] / best[m] : 0);
        }
        if (raw > 0)
            printf("raw MPI_Alltoall of the same bytes (%.1f MB from each rank): %.3f s, %.2f GB/s/rank\n",
                   most * 1e-6, raw, most / raw * 1e-9);
        else
            printf("one rank: nothing crosses the network (run under mpirun -np N)\n");
    }
    free(b.r), free(b.s), free(b.got), free(b.slots);
    nt_world_close(b.w);
    if (rc != PA_OK) {
        cli_fail(&err);
        pa_err_close(&err);
        return 1;
    }
    pa_err_close(&err);
    return 0;
}

/*
 * simt_bench.c - what the SIMT emulation costs (src/simt): time per GPU
 * thread per __syncthreads and per warp shuffle, per thread of a kernel
 * without barriers, and per launch, on one executor thread of the `cpu`
 * device (no stream delay, memory not protected, so the figures are the
 * emulation's own), in CPU time of the process. Built as bench_simt_bench: run
 * build/normal/bench_simt_bench [threads-in-millions].
 */
#include "simt/simt_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CPU seconds of the whole process: the executor's, as the main thread
 * sleeps in dv_stream_sync. Unlike wall time, not inflated when other
 * programs share the cores. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_barriers_simt(dv_stream *s, unsigned blocks, int rounds, int *out, pa_err *err);
int bench_shuffles_simt(dv_stream *s, unsigned blocks, int rounds, int *out, pa_err *err);
int bench_empty_simt(dv_stream *s, unsigned threads, int *out, pa_err *err);

typedef int (*grid_fn)(dv_stream *s, unsigned blocks, int rounds, int *out, pa_err *err);

static void die(const char *what, pa_err *err)
{
    fprintf(stderr, "%s: %s\n", what, err->msg);
    exit(1);
}

/* Best of 3: seconds for one grid of `blocks` 256-thread blocks. */
static double time_grid(dv_stream *s, grid_fn fn, unsigned blocks, int rounds, int *out, simt_stats *st)
{
    double best = 1e30;
    pa_err err;
    pa_err_init(&err);
    for (int r = 0; r < 3; r++) {
        simt_stats a, b;
        simt_stats_get(&a);
        double t0 = cpu_s();
        if (fn(s, blocks, rounds, out, &err) != PA_OK || dv_stream_sync(s, &err) != PA_OK)
            die("grid", &err);
        double t = cpu_s() - t0;
        simt_stats_get(&b);
        if (t < best) {
            best = t;
            st->switches = b.switches - a.switches;
            st->barriers = b.barriers - a.barriers;
            st->warp_ops = b.warp_ops - a.warp_ops;
        }
    }
    pa_err_close(&err);
    return best;
}

int main(int argc, char **argv)
{
    double millions = argc > 1 ? atof(argv[1]) : 1.0;
    unsigned blocks = (unsigned)(millions * 1e6 / 256);
    double threads = (double)blocks * 256;
    pa_err err;
    pa_err_init(&err);
    dv_options o = {.spec = "cpu", .cpu_threads = 1};
    dv_device *d = NULL;
    dv_stream *s = NULL;
    int *out = NULL;
    if (dv_open(&o, &d, &err) != PA_OK || dv_stream_create(d, &s, &err) != PA_OK ||
        dv_alloc(d, (size_t)blocks * 256 * sizeof(int), (void **)&out, &err) != PA_OK)
        die("device", &err);
    printf("SIMT emulation, one executor thread, %u blocks of 256 threads (%.2fM threads)\n", blocks, threads / 1e6);

    simt_stats st;
    time_grid(s, bench_barriers_simt, blocks, 1, out, &st);   /* warm: fibers mapped, pages touched */
    double t0 = time_grid(s, bench_barriers_simt, blocks, 0, out, &st);
    printf("  no barrier:      %7.1f ns per thread (%llu switches)\n", t0 / threads * 1e9,
           (unsigned long long)st.switches);
    const int rounds[] = {1, 4};
    for (int i = 0; i < 2; i++) {
        double t = time_grid(s, bench_barriers_simt, blocks, rounds[i], out, &st);
        int bars = 2 * rounds[i];
        printf("  %d barriers:     %7.1f ns per thread, %5.1f ns per thread per barrier (%.2f switches per "
               "thread per barrier)\n",
               bars, t / threads * 1e9, (t - t0) / threads / bars * 1e9,
               (double)st.switches / threads / bars);
    }
    double ts0 = time_grid(s, bench_shuffles_simt, blocks, 0, out, &st);
    double ts = time_grid(s, bench_shuffles_simt, blocks, 4, out, &st);
    printf("  warp shuffles:   %7.1f ns per thread per __shfl_xor_sync (%llu warp rendezvous)\n",
           (ts - ts0) / threads / 20 * 1e9, (unsigned long long)st.warp_ops);

    const int launches = 20000;
    const unsigned sizes[] = {1, 256};
    for (int k = 0; k < 2; k++) {
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            double t1 = cpu_s();
            for (int i = 0; i < launches; i++)
                if (bench_empty_simt(s, sizes[k], NULL, &err) != PA_OK)
                    die("launch", &err);
            if (dv_stream_sync(s, &err) != PA_OK)
                die("sync", &err);
            double t = cpu_s() - t1;
            best = t < best ? t : best;
        }
        printf("  launch of a 1-block grid of %3u threads: %6.2f us (enqueue, run, free; %d in a row)\n", sizes[k],
               best / launches * 1e6, launches);
    }
    dv_free(d, out);
    dv_stream_destroy(s);
    dv_close(d);
    pa_err_close(&err);
    return 0;
}

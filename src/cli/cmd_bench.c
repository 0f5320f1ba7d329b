/*
 * cmd_bench.c - `pista bench device`: the measured ceilings that later turn
 * byte counts into theoretical minimum runtimes. Copy bandwidths (host to
 * device and back, pinned and pageable; device to device) and the pool's
 * allocate/free rate next to the backend's own allocator (malloc on cpu,
 * cudaMalloc on cuda), each printed with the ratio that matters.
 */
#include "cli/cli.h"
#include "device/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_row {
    const char *what;
    double value;       /* GB/s or million operations per second */
    const char *unit;
    char note[96];
} bench_row;

typedef struct bench_ctx {
    dv_device *dev;
    dv_stream *s;
    size_t size;
    int repeat;
    pa_err err;
} bench_ctx;

/* Time `repeat` copies of ctx->size bytes after one warm-up; GB/s (1e9 B/s). */
static int time_copies(bench_ctx *c, void *dst, const void *src, dv_copy_kind kind, double *gbs)
{
    int rc;
    if ((rc = dv_copy_async(c->s, dst, src, c->size, kind, &c->err)) != PA_OK ||
        (rc = dv_stream_sync(c->s, &c->err)) != PA_OK)
        return rc;
    uint64_t t0 = pa_now_ns();
    for (int i = 0; i < c->repeat; i++)
        if ((rc = dv_copy_async(c->s, dst, src, c->size, kind, &c->err)) != PA_OK)
            return rc;
    if ((rc = dv_stream_sync(c->s, &c->err)) != PA_OK)
        return rc;
    double secs = (double)(pa_now_ns() - t0) * 1e-9;
    *gbs = (double)c->size * c->repeat / secs / 1e9;
    return PA_OK;
}

/* Batched copy of the same bytes in 64 ranges, to show the per-range cost. */
static int time_batch(bench_ctx *c, void *dst, const void *src, double *gbs)
{
    enum { N = 64 };
    void *d[N];
    const void *s[N];
    size_t n[N], part = c->size / N;
    for (int i = 0; i < N; i++) {
        d[i] = (char *)dst + (size_t)i * part;
        s[i] = (const char *)src + (size_t)i * part;
        n[i] = part;
    }
    int rc;
    uint64_t t0 = pa_now_ns();
    for (int i = 0; i < c->repeat; i++)
        if ((rc = dv_copy_batch_async(c->s, N, d, s, n, DV_COPY_H2D, &c->err)) != PA_OK)
            return rc;
    if ((rc = dv_stream_sync(c->s, &c->err)) != PA_OK)
        return rc;
    *gbs = (double)part * N * c->repeat / ((double)(pa_now_ns() - t0) * 1e-9) / 1e9;
    return PA_OK;
}

/* Allocate/free cycles over sizes 256 B .. 1 MiB with up to 64 blocks live,
 * as operators do; returns million alloc+free pairs per second. At most
 * ALLOC_ROUNDS cycles or ALLOC_NS of time, whichever ends first (a slow
 * allocator, e.g. under AddressSanitizer, is measured over fewer cycles). */
#define ALLOC_ROUNDS 200000
#define ALLOC_NS 300000000ull
static uint64_t lcg(uint64_t *x) { return *x = *x * 6364136223846793005ull + 1442695040888963407ull; }

static int time_pool(bench_ctx *c, int which, double *mops)
{
    void *live[64] = {0};
    size_t sizes[64] = {0};
    uint64_t seed = 42;
    int rc = PA_OK;
    uint64_t t0 = pa_now_ns();
    int rounds = 0;
    for (; rounds < ALLOC_ROUNDS; rounds++) {
        if ((rounds & 1023) == 1023 && pa_now_ns() - t0 > ALLOC_NS)
            break;
        int k = (int)(lcg(&seed) >> 58);
        if (live[k]) {
            if (which == 0)
                dv_free(c->dev, live[k]);
            else if (which == 1)
                free(live[k]);
            else
                dv_raw_free(c->dev, live[k], sizes[k]);
            live[k] = NULL;
        }
        size_t sz = (size_t)256 << (lcg(&seed) >> 60) % 13;
        sizes[k] = sz;
        if (which == 0)
            rc = dv_alloc(c->dev, sz, &live[k], &c->err);
        else if (which == 1)
            rc = (live[k] = malloc(sz)) ? PA_OK : pa_error(&c->err, PA_ENOMEM, "malloc failed");
        else
            rc = dv_raw_alloc(c->dev, sz, &live[k], &c->err);
        if (rc != PA_OK)
            break;
        if (which == 1)
            ((volatile char *)live[k])[0] = 1;   /* keep malloc honest */
    }
    double secs = (double)(pa_now_ns() - t0) * 1e-9;
    for (int k = 0; k < 64; k++) {
        if (!live[k])
            continue;
        if (which == 0)
            dv_free(c->dev, live[k]);
        else if (which == 1)
            free(live[k]);
        else
            dv_raw_free(c->dev, live[k], sizes[k]);
    }
    *mops = rounds / secs / 1e6;
    return rc;
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static int bench_device(int argc, char **argv)
{
    cli_global g;
    cli_global_defaults(&g);
    int json = 0, repeat = 5;
    uint64_t size = 256ull << 20;
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&g, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            i++;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            pa_err e;
            pa_err_init(&e);
            if (pa_parse_size(argv[i + 1], &size, &e) != PA_OK || size < 4096)
                return cli_usage("--size: '%s' is not a size of at least 4K", argv[i + 1]);
            i += 2;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[i + 1]);
            if (repeat < 1 || repeat > 10000)
                return cli_usage("--repeat: '%s' is not between 1 and 10000", argv[i + 1]);
            i += 2;
        } else {
            return cli_usage("bench device: unknown option '%s' (options: --size SIZE --repeat N --json "
                             "--device D --memory-limit SIZE --threads N)", argv[i]);
        }
    }

    bench_ctx c = {.size = (size_t)size, .repeat = repeat};
    pa_err_init(&c.err);
    dv_options opt = {.spec = g.device, .memory_limit = g.memory_limit, .cpu_threads = g.threads, .page_decode = g.page_decode};
    void *dev_a = NULL, *dev_b = NULL, *pinned = NULL, *pageable = NULL;
    bench_row rows[10];
    int n = 0, rc;
    double v;
    if ((rc = dv_open(&opt, &c.dev, &c.err)) != PA_OK)
        return cli_fail(&c.err);
    if ((rc = dv_stream_create(c.dev, &c.s, &c.err)) != PA_OK)
        goto fail;
    if ((rc = dv_alloc(c.dev, c.size, &dev_a, &c.err)) != PA_OK ||
        (rc = dv_alloc(c.dev, c.size, &dev_b, &c.err)) != PA_OK ||
        (rc = dv_host_alloc(c.dev, c.size, &pinned, &c.err)) != PA_OK)
        goto fail;
    if (!(pageable = pa_malloc(c.size))) {
        rc = pa_error(&c.err, PA_ENOMEM, "out of host memory for a %zu-byte pageable buffer", c.size);
        goto fail;
    }
    memset(pageable, 1, c.size);
    memset(pinned, 2, c.size);
    if ((rc = dv_fill_u32_async(c.s, dev_a, 3, c.size / 4, &c.err)) != PA_OK)
        goto fail;

#define ROW(label, expr, unit_)                                                 \
    do {                                                                      \
        if ((rc = (expr)) != PA_OK)                                           \
            goto fail;                                                        \
        rows[n] = (bench_row){label, v, unit_, ""};                          \
        n++;                                                                  \
    } while (0)
    ROW("host->device, pinned", time_copies(&c, dev_a, pinned, DV_COPY_H2D, &v), "GB/s");
    ROW("host->device, pageable", time_copies(&c, dev_a, pageable, DV_COPY_H2D, &v), "GB/s");
    ROW("host->device, pinned, 64-range batch", time_batch(&c, dev_a, pinned, &v), "GB/s");
    ROW("device->host, pinned", time_copies(&c, pinned, dev_a, DV_COPY_D2H, &v), "GB/s");
    ROW("device->host, pageable", time_copies(&c, pageable, dev_a, DV_COPY_D2H, &v), "GB/s");
    ROW("device->device", time_copies(&c, dev_b, dev_a, DV_COPY_D2D, &v), "GB/s");
    ROW("pool alloc+free", time_pool(&c, 0, &v), "M/s");
    double pool_rate = v;
    int raw_kind = dv_host_visible(c.dev) ? 1 : 2;
    ROW(raw_kind == 1 ? "malloc+free" : "cudaMalloc+cudaFree", time_pool(&c, raw_kind, &v), "M/s");
    snprintf(rows[n - 2].note, sizeof rows[n - 2].note, "%.1fx the backend allocator", pool_rate / v);
#undef ROW

    if (json) {
        printf("{\"device\": ");
        print_json_string(dv_describe(c.dev));
        printf(", \"selection\": ");
        print_json_string(dv_selection(c.dev));
        printf(", \"copy_bytes\": %zu, \"repeat\": %d, \"results\": [", c.size, c.repeat);
        for (int i = 0; i < n; i++) {
            printf("%s{\"measure\": ", i ? ", " : "");
            print_json_string(rows[i].what);
            printf(", \"value\": %.3f, \"unit\": \"%s\"}", rows[i].value, rows[i].unit);
        }
        printf("]}\n");
    } else {
        char sz[32];
        printf("device:    %s\nselection: %s\ncopies:    %s x %d after a warm-up\n\n", dv_describe(c.dev),
               dv_selection(c.dev), pa_format_size(c.size, sz, sizeof sz), c.repeat);
        printf("%-38s %12s  %s\n", "measure", "value", "note");
        for (int i = 0; i < n; i++)
            printf("%-38s %7.2f %-4s  %s\n", rows[i].what, rows[i].value, rows[i].unit, rows[i].note);
        if (dv_host_visible(c.dev))
            printf("\n%s memory is host memory: dv_upload/dv_download of host buffers copy nothing\n"
                   "(counted as elided bytes); the copies above are the memory-copy ceiling.\n", dv_name(c.dev));
    }
fail:
    if (c.s)
        dv_stream_sync(c.s, NULL);
    pa_free(pageable);
    if (c.dev) {
        dv_host_free(c.dev, pinned);
        dv_free(c.dev, dev_a);
        dv_free(c.dev, dev_b);
    }
    dv_stream_destroy(c.s);
    dv_close(c.dev);
    if (rc != PA_OK) {
        cli_fail(&c.err);
        pa_err_close(&c.err);
        return 1;
    }
    pa_err_close(&c.err);
    return 0;
}

int cli_cmd_bench(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("bench: which benchmark? (device, kernels, io, net, join, scan, engine, tpch, gen)");
    if (!strcmp(argv[0], "device"))
        return bench_device(argc - 1, argv + 1);
    if (!strcmp(argv[0], "io"))
        return cli_bench_io(argc - 1, argv + 1);
    if (!strcmp(argv[0], "net"))
        return cli_bench_net(argc - 1, argv + 1);
    if (!strcmp(argv[0], "join"))
        return cli_bench_join(argc - 1, argv + 1);
    if (!strcmp(argv[0], "scan"))
        return cli_bench_scan(argc - 1, argv + 1);
    if (!strcmp(argv[0], "engine"))
        return cli_bench_engine(argc - 1, argv + 1);
    if (!strcmp(argv[0], "tpch"))
        return cli_bench_tpch(argc - 1, argv + 1);
    if (!strcmp(argv[0], "kernels"))
        return cli_bench_kernels(argc - 1, argv + 1);
    if (!strcmp(argv[0], "gen")) {   /* = pista gen tpch --bench ... */
        char *args[64];
        int n = 0;
        args[n++] = "tpch";
        args[n++] = "--bench";
        for (int i = 1; i < argc && n < 63; i++)
            args[n++] = argv[i];
        args[n] = NULL;
        return cli_cmd_gen(n, args);
    }
    return cli_usage("bench: unknown benchmark '%s' (device, kernels, io, net, join, scan, engine, tpch, gen)", argv[0]);
}

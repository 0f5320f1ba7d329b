/*
 * cmd_bench_io.c - `pista bench io`: sequential read bandwidth of the I/O
 * engine (both backends, buffered and O_DIRECT) next to its rival measured
 * in the same run: a `dd`-style loop, one thread issuing one pread per block.
 * The page cache of the file is dropped before each buffered run unless
 * --keep-cache, so buffered numbers are the storage device's.
 */
#include "cli/cli.h"
#include "storage/storage.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct io_cfg {
    uint64_t size, block;
    int depth, threads, runs;
    bool keep_cache;
} io_cfg;

/* Write `size` bytes of pseudo-random data to a new temporary file. */
static int make_file(char *path, size_t cap, uint64_t size, pa_err *err)
{
    const char *t = getenv("TMPDIR");
    snprintf(path, cap, "%s/pista_bench_io_XXXXXX", t && *t ? t : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return pa_error(err, PA_EIO, "creating a file in %s failed", t && *t ? t : "/tmp");
    size_t chunk = 8u << 20;
    uint64_t *buf = pa_malloc(chunk), x = 0x12345678;
    int rc = buf ? PA_OK : pa_error(err, PA_ENOMEM, "out of memory");
    for (size_t i = 0; buf && i < chunk / 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = x;
    }
    for (uint64_t done = 0; rc == PA_OK && done < size;) {
        size_t n = size - done < chunk ? (size_t)(size - done) : chunk;
        if (write(fd, buf, n) != (ssize_t)n)
            rc = pa_error(err, PA_EIO, "writing %s failed", path);
        done += n;
    }
    pa_free(buf);
    fsync(fd);
    close(fd);
    if (rc != PA_OK)
        unlink(path);
    return rc;
}

/* Best MB/s of cfg->runs runs; backend NULL = the dd-style loop. 0 = not available. */
static double best_of(const io_cfg *cfg, const char *path, const char *backend, bool direct, char *why, size_t cap)
{
    io_engine *e = NULL;
    pa_err err;
    pa_err_init(&err);
    double best = 0;
    io_options o = {.backend = backend, .queue_depth = cfg->depth, .threads = cfg->threads};
    if (backend && io_engine_create(&o, &e, &err) != PA_OK) {
        snprintf(why, cap, "unavailable: %s", err.msg);
        goto done;
    }
    for (int i = 0; i < cfg->runs; i++) {
        io_bench_result r;
        if (io_bench_sequential(e, path, (size_t)cfg->block, backend ? cfg->depth : 1, direct, cfg->keep_cache,
                                &r, &err) != PA_OK) {
            snprintf(why, cap, "failed: %s", err.msg);
            best = 0;
            break;
        }
        if (r.mb_per_s > best)
            best = r.mb_per_s;
    }
done:
    io_engine_destroy(e);
    pa_err_close(&err);
    return best;
}

int cli_bench_io(int argc, char **argv)
{
    io_cfg cfg = {.size = 1ull << 30, .block = 1u << 20, .depth = 32, .threads = 8, .runs = 3};
    const char *file = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--keep-cache")) {
            cfg.keep_cache = true;
            continue;
        }
        if (!v)
            return cli_usage("bench io: %s needs a value (options: --file PATH | --size SIZE, --block SIZE, "
                             "--depth N, --threads N, --runs N, --keep-cache)", a);
        i++;
        pa_err e;
        pa_err_init(&e);
        int bad = 0;
        if (!strcmp(a, "--file"))
            file = v;
        else if (!strcmp(a, "--size"))
            bad = pa_parse_size(v, &cfg.size, &e) != PA_OK || cfg.size == 0;
        else if (!strcmp(a, "--block"))
            bad = pa_parse_size(v, &cfg.block, &e) != PA_OK || cfg.block < 4096 || cfg.block % 4096;
        else if (!strcmp(a, "--depth"))
            bad = (cfg.depth = atoi(v)) < 1 || cfg.depth > 4096;
        else if (!strcmp(a, "--threads"))
            bad = (cfg.threads = atoi(v)) < 1 || cfg.threads > 1024;
        else if (!strcmp(a, "--runs"))
            bad = (cfg.runs = atoi(v)) < 1 || cfg.runs > 100;
        else
            return cli_usage("bench io: unknown option '%s'", a);
        pa_err_close(&e);
        if (bad)
            return cli_usage("bench io: bad value '%s' for %s (--block must be a multiple of 4K)", v, a);
    }
    char path[512];
    pa_err err;
    pa_err_init(&err);
    if (file)
        snprintf(path, sizeof path, "%s", file);
    else if (make_file(path, sizeof path, cfg.size, &err) != PA_OK)
        return cli_fail(&err);
    char blk[32];
    printf("file:   %s\nreads:  blocks of %s, engine depth %d, %d pread threads, best of %d\ncache:  %s\n\n",
           path, pa_format_size(cfg.block, blk, sizeof blk), cfg.depth, cfg.threads, cfg.runs,
           cfg.keep_cache ? "kept (this measures memory, not storage)" : "dropped before each buffered run");
    printf("%-34s %10s  %s\n", "reader", "MB/s", "vs dd-style pread");
    static const char *const readers[] = {NULL, "pread", "uring"};
    for (int direct = 0; direct < 2; direct++) {
        double base = 0;
        for (int k = 0; k < 3; k++) {
            char why[256] = "", name[64];
            double v = best_of(&cfg, path, readers[k], direct, why, sizeof why);
            snprintf(name, sizeof name, "%s, %s", readers[k] ? readers[k] : "dd-style pread, 1 thread",
                     direct ? "O_DIRECT" : "buffered");
            if (k == 0)
                base = v;
            if (v > 0 && base > 0)
                printf("%-34s %10.1f  %.2fx\n", name, v, v / base);
            else
                printf("%-34s %10s  %s\n", name, "-", why);
        }
    }
    if (!file)
        unlink(path);
    pa_err_close(&err);
    return 0;
}

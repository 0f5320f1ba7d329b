/*
 * io_bench.c - sequential-read measurement (io_bench_sequential) behind
 * bench/io_bench.c and `pista bench io`: the `dd` baseline (one thread, one
 * pread per block) against the engine with a window of blocks in flight.
 */
#define _GNU_SOURCE 1   /* O_DIRECT */
#include "storage/io_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static void drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)fdatasync(fd);   /* only clean pages can be dropped */
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

static int bench_dd(const char *path, size_t block, bool direct, uint8_t *buf, io_bench_result *out,
                    pa_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
    if (fd < 0)
        return pa_error(err, errno == ENOENT ? PA_ENOTFOUND : PA_EIO, "opening %s: %s", path,
                        strerror(errno));
    uint64_t t0 = pa_now_ns(), off = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, block, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return pa_error(err, PA_EIO, "reading %s at offset %llu: %s", path,
                            (unsigned long long)off, strerror(e));
        }
        if (n == 0)
            break;
        off += (uint64_t)n;
        if (direct && (size_t)n % IO_DIRECT_ALIGN)
            break;   /* the partial last block */
    }
    out->seconds = (double)(pa_now_ns() - t0) * 1e-9;
    out->bytes = off;
    close(fd);
    return PA_OK;
}

static int bench_engine(io_engine *e, const char *path, size_t block, int depth, bool direct,
                        uint8_t *buf, io_bench_result *out, pa_err *err)
{
    io_file *f = NULL;
    pa_queue *q = NULL;
    io_request *reqs = NULL;
    int rc = io_file_open(e, path, direct ? IO_OPEN_DIRECT : IO_OPEN_BUFFERED, &f, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = pa_queue_create((size_t)depth, &q, err)) != PA_OK)
        goto done;
    if (!(reqs = pa_calloc((size_t)depth, sizeof *reqs))) {
        rc = pa_error(err, PA_ENOMEM, "out of memory for %d requests", depth);
        goto done;
    }
    uint64_t size = io_file_size(f), next = 0, got = 0;
    int outstanding = 0;
    uint64_t t0 = pa_now_ns();
    for (int i = 0; i < depth && next < size; i++, outstanding++) {
        size_t len = size - next < block ? (size_t)(size - next) : block;
        io_request_init(&reqs[i], f, next, len, buf + (size_t)i * block);
        reqs[i].queue = q;
        reqs[i].err = err;
        next += len;
        if ((rc = io_submit(e, &reqs[i])) != PA_OK)
            goto drain;
    }
    while (outstanding > 0) {
        void *item;
        pa_queue_pop(q, &item, PA_WAIT_FOREVER);
        io_request *r = item;
        outstanding--;
        if (r->status != PA_OK) {
            rc = r->status;
            goto drain;
        }
        got += r->length;
        if (next < size) {
            size_t len = size - next < block ? (size_t)(size - next) : block;
            r->offset = next;
            r->length = len;
            next += len;
            if ((rc = io_submit(e, r)) != PA_OK)
                goto drain;
            outstanding++;
        }
    }
    out->seconds = (double)(pa_now_ns() - t0) * 1e-9;
    out->bytes = got;
    goto done;
drain:
    while (outstanding-- > 0) {
        void *item;
        pa_queue_pop(q, &item, PA_WAIT_FOREVER);
    }
done:
    pa_free(reqs);
    pa_queue_destroy(q);
    io_file_close(f);
    return rc;
}

int io_bench_sequential(io_engine *e, const char *path, size_t block_size, int depth, bool direct,
                        bool keep_cache, io_bench_result *out, pa_err *err)
{
    memset(out, 0, sizeof *out);
    if (block_size == 0 || (direct && block_size % IO_DIRECT_ALIGN) || depth <= 0 || depth > 4096)
        return pa_error(err, PA_EINVAL, "benchmark block size %zu / depth %d invalid%s", block_size,
                        depth, direct ? " (O_DIRECT needs multiples of 4096)" : "");
    size_t nbuf = e ? (size_t)depth : 1;
    void *raw = pa_malloc(nbuf * block_size + IO_DIRECT_ALIGN);
    if (!raw)
        return pa_error(err, PA_ENOMEM, "out of memory for %zu benchmark buffers", nbuf);
    uint8_t *buf = (uint8_t *)(((uintptr_t)raw + IO_DIRECT_ALIGN - 1) & ~(uintptr_t)(IO_DIRECT_ALIGN - 1));
    if (!keep_cache)
        drop_cache(path);
    int rc = e ? bench_engine(e, path, block_size, depth, direct, buf, out, err)
               : bench_dd(path, block_size, direct, buf, out, err);
    if (rc == PA_OK && out->seconds > 0)
        out->mb_per_s = (double)out->bytes / out->seconds / 1e6;
    pa_free(raw);
    return rc;
}

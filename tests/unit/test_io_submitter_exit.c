/*
 * test_io_submitter_exit.c - a read submitted by a thread that exits before
 * the read completes must still complete normally, on both backends.
 *
 * The scan thread of a query submits reads and ends when its scan is done;
 * through the engine's shared FIFO it also hands the kernel pieces of OTHER
 * scans' requests. io_uring ties a request to the task that entered it into
 * the kernel: a buffered read that misses the page cache finishes through
 * task work of that task, and when the task has exited the kernel fails the
 * read with EFAULT ("Bad address"). That was the intermittent cold-run error
 * of `pista bench tpch`. Here each round evicts a file from the page cache
 * (fdatasync + POSIX_FADV_DONTNEED) and has a thread submit a multi-piece
 * read of it and exit at once; the main thread joins it, then waits for the
 * delivery and checks status and bytes. Where eviction has no effect (tmpfs)
 * the reads hit the cache and the test cannot tell; it says so.
 */
#define _GNU_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "io_testutil.h"
#include "storage/storage.h"

#define MiB (1024u * 1024u)
#define FILE_SIZE (8u * MiB + 4096u)
#define ROUNDS 6

static char g_path[512];
static uint8_t *g_data;

/* A disk-backed directory: the build tree (ctest's working directory) unless
 * TMPDIR is set; /tmp may be a tmpfs, whose pages cannot be evicted. */
static const char *test_dir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : ".";
}

static int group_setup(void **state)
{
    snprintf(g_path, sizeof g_path, "%s/pista_test_io_exit_XXXXXX", test_dir());
    if (iot_write_file(g_path, FILE_SIZE, 11, &g_data) == 0)
        return 0;
    free(g_data);   /* a read-only working directory: /tmp */
    g_data = NULL;
    snprintf(g_path, sizeof g_path, "/tmp/pista_test_io_exit_XXXXXX");
    return iot_write_file(g_path, FILE_SIZE, 11, &g_data);
}

static int group_teardown(void **state)
{
    unlink(g_path);
    free(g_data);
    return 0;
}

/* Drop the file from the page cache; returns the bytes still resident
 * afterwards (-1: unknown). */
static int64_t evict(void)
{
    int fd = open(g_path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    int64_t resident = -1;
    void *map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
        long page = sysconf(_SC_PAGESIZE);
        size_t pages = (FILE_SIZE + (size_t)page - 1) / (size_t)page;
        unsigned char *vec = malloc(pages);
        if (vec && mincore(map, FILE_SIZE, vec) == 0) {
            resident = 0;
            for (size_t i = 0; i < pages; i++)
                resident += (vec[i] & 1) ? page : 0;
        }
        free(vec);
        munmap(map, FILE_SIZE);
    }
    close(fd);
    return resident;
}

typedef struct job {
    io_engine *e;
    io_request *reqs;
    int n;
    int rc;
} job;

/* Submit the job's requests and leave at once. */
static void *submit_and_exit(void *arg)
{
    job *j = arg;
    j->rc = PA_OK;
    for (int i = 0; i < j->n && j->rc == PA_OK; i++)
        j->rc = io_submit(j->e, &j->reqs[i]);
    return NULL;
}

static void test_submitter_exits(void **state)
{
    const char *backend = *state;
    io_options o = {.backend = backend};   /* defaults: 1 MiB pieces, depth 64 */
    io_engine *e = NULL;
    pa_err err;
    pa_err_init(&err);
    int rc = io_engine_create(&o, &e, &err);
    if (rc == PA_EUNSUPPORTED && !strcmp(backend, "uring")) {
        print_message("io_uring unavailable here (%s); nothing to test\n", err.msg);
        pa_err_close(&err);
        skip();
    }
    assert_int_equal(rc, PA_OK);
    io_file *f = NULL;
    assert_int_equal(io_file_open(e, g_path, IO_OPEN_DEFAULT, &f, &err), PA_OK);
    pa_queue *q = NULL;
    assert_int_equal(pa_queue_create(8, &q, &err), PA_OK);
    uint8_t *buf = malloc(FILE_SIZE);
    assert_non_null(buf);
    int64_t left_resident = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int64_t res = evict();
        if (res != 0)
            left_resident = res;
        /* Two requests, as a scan's coalesced reads: 4 bytes in (like a
         * Parquet file's first column chunk), 8 pieces, and the tail. */
        io_request reqs[2];
        pa_err rerr[2];
        size_t cut = 8u * MiB - 4096u;
        io_request_init(&reqs[0], f, 4, cut - 4, buf + 4);
        io_request_init(&reqs[1], f, cut, FILE_SIZE - cut, buf + cut);
        memset(buf, 0, FILE_SIZE);
        for (int i = 0; i < 2; i++) {
            pa_err_init(&rerr[i]);
            reqs[i].queue = q;
            reqs[i].err = &rerr[i];
        }
        job j = {.e = e, .reqs = reqs, .n = 2};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, submit_and_exit, &j), 0);
        pthread_join(th, NULL);   /* the submitter is gone before the disk answers */
        assert_int_equal(j.rc, PA_OK);
        for (int i = 0; i < 2; i++) {
            void *item = NULL;
            assert_int_equal(pa_queue_pop(q, &item, PA_WAIT_FOREVER), PA_OK);
            io_request *r = item;
            if (r->status != PA_OK)
                print_error("round %d, read at offset %llu: %s\n", round, (unsigned long long)r->offset,
                            r->err->msg);
            assert_int_equal(r->status, PA_OK);
        }
        assert_memory_equal(buf + 4, g_data + 4, FILE_SIZE - 4);
        for (int i = 0; i < 2; i++)
            pa_err_close(&rerr[i]);
    }
    if (left_resident != 0)
        print_message("eviction left %lld bytes cached (tmpfs?): the reads may not have reached the disk\n",
                      (long long)left_resident);
    io_stats st;
    io_engine_stats(e, &st);
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.requests, 2 * ROUNDS);
    free(buf);
    pa_queue_destroy(q);
    io_file_close(f);
    io_engine_destroy(e);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        {"test_submitter_exits(uring)", test_submitter_exits, iot_mem_setup, iot_mem_teardown, (void *)"uring"},
        {"test_submitter_exits(pread)", test_submitter_exits, iot_mem_setup, iot_mem_teardown, (void *)"pread"},
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/*
 * io_testutil.h - helpers for the I/O engine tests: a fixed-seed generator,
 * a temporary file of known pseudo-random bytes, and cmocka fixtures that
 * fail a test which does not give back all host memory it took through
 * pa_malloc. Everything is static so each test program gets its own copy.
 */
#ifndef IO_TESTUTIL_H
#define IO_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

static uint64_t iot_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Write size pseudo-random bytes (from seed) to a new file made from the
 * mkstemp template path (rewritten in place); *data gets a malloc'd copy of
 * the bytes. -1 when the file cannot be made or written. */
static int iot_write_file(char *path, size_t size, uint64_t seed, uint8_t **data)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    uint8_t *d = malloc(size ? size : 1);
    if (!d) {
        close(fd);
        return -1;
    }
    for (size_t i = 0; i < size; i += 8) {
        uint64_t v = iot_rng(&seed);
        memcpy(d + i, &v, size - i < 8 ? size - i : 8);
    }
    ssize_t n = write(fd, d, size);
    close(fd);
    *data = d;
    return n == (ssize_t)size ? 0 : -1;
}

static int64_t iot_mem_before;

static int iot_mem_setup(void **state)
{
    (void)state;
    pa_mem_stats m;
    pa_host_mem_stats(&m);
    iot_mem_before = m.current;
    return 0;
}

static int iot_mem_teardown(void **state)
{
    (void)state;
    pa_mem_stats m;
    pa_host_mem_stats(&m);
    if (m.current != iot_mem_before) {
        print_error("leaked %lld bytes of host memory\n", (long long)(m.current - iot_mem_before));
        return -1;
    }
    return 0;
}

#endif /* IO_TESTUTIL_H */

/*
 * alloc.c - host allocation with accounting and fault injection, and the
 * size parser/formatter used by --memory-limit.
 *
 * Each block carries a 16-byte header holding its size, so pa_free can keep
 * current/peak exact without a lookup. 16 bytes keeps malloc's alignment.
 */
#include "core/core.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR 16

static int64_t st_current, st_peak, st_allocs, st_frees, st_failed;
static int64_t fault_countdown = -1;   /* < 0: off */

void pa_fault_alloc_after(int64_t countdown)
{
    __atomic_store_n(&fault_countdown, countdown, __ATOMIC_SEQ_CST);
}

void pa_fault_alloc_clear(void)
{
    __atomic_store_n(&fault_countdown, -1, __ATOMIC_SEQ_CST);
}

int64_t pa_fault_alloc_suspend(void)
{
    return __atomic_exchange_n(&fault_countdown, -1, __ATOMIC_SEQ_CST);
}

bool pa_fault_alloc_hit(void)
{
    int64_t c = __atomic_load_n(&fault_countdown, __ATOMIC_RELAXED);
    while (c >= 0) {
        if (c == 0)
            return true;
        if (__atomic_compare_exchange_n(&fault_countdown, &c, c - 1, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            return false;
    }
    return false;
}

static void account(int64_t delta)
{
    int64_t cur = __atomic_add_fetch(&st_current, delta, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&st_peak, __ATOMIC_RELAXED);
    while (cur > peak &&
           !__atomic_compare_exchange_n(&st_peak, &peak, cur, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void *pa_malloc(size_t n)
{
    if (n > SIZE_MAX - HDR || pa_fault_alloc_hit()) {
        __atomic_add_fetch(&st_failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    unsigned char *p = malloc(n + HDR);
    if (!p) {
        __atomic_add_fetch(&st_failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    memcpy(p, &n, sizeof n);
    __atomic_add_fetch(&st_allocs, 1, __ATOMIC_RELAXED);
    account((int64_t)n);
    return p + HDR;
}

void *pa_calloc(size_t count, size_t n)
{
    if (n && count > SIZE_MAX / n)
        return NULL;
    void *p = pa_malloc(count * n);
    if (p)
        memset(p, 0, count * n);
    return p;
}

void *pa_realloc(void *p, size_t n)
{
    if (!p)
        return pa_malloc(n);
    unsigned char *base = (unsigned char *)p - HDR;
    size_t old;
    memcpy(&old, base, sizeof old);
    if (n > SIZE_MAX - HDR || pa_fault_alloc_hit()) {
        __atomic_add_fetch(&st_failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    unsigned char *q = realloc(base, n + HDR);
    if (!q) {
        __atomic_add_fetch(&st_failed, 1, __ATOMIC_RELAXED);
        return NULL;   /* p is still valid, as with realloc */
    }
    memcpy(q, &n, sizeof n);
    account((int64_t)n - (int64_t)old);
    return q + HDR;
}

void pa_free(void *p)
{
    if (!p)
        return;
    unsigned char *base = (unsigned char *)p - HDR;
    size_t n;
    memcpy(&n, base, sizeof n);
    __atomic_add_fetch(&st_frees, 1, __ATOMIC_RELAXED);
    account(-(int64_t)n);
    free(base);
}

char *pa_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = pa_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

void pa_host_mem_stats(pa_mem_stats *out)
{
    out->current = __atomic_load_n(&st_current, __ATOMIC_RELAXED);
    out->peak = __atomic_load_n(&st_peak, __ATOMIC_RELAXED);
    out->allocs = __atomic_load_n(&st_allocs, __ATOMIC_RELAXED);
    out->frees = __atomic_load_n(&st_frees, __ATOMIC_RELAXED);
    out->failed = __atomic_load_n(&st_failed, __ATOMIC_RELAXED);
}

int pa_parse_size(const char *text, uint64_t *out, pa_err *err)
{
    if (!text || !*text)
        return pa_error(err, PA_EINVAL, "empty memory size");
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-')
        return pa_error(err, PA_EINVAL, "memory size '%s' is negative", text);
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (end == p || errno || !isfinite(v))
        return pa_error(err, PA_EINVAL, "memory size '%s' is not a number", text);
    while (isspace((unsigned char)*end))
        end++;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1024.0; end++; break;
    case 'M': mult = 1024.0 * 1024; end++; break;
    case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mult > 1 && toupper((unsigned char)*end) == 'I')
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return pa_error(err, PA_EINVAL,
                        "memory size '%s' has an unknown unit (use K, M, G, T, optionally with iB or B)", text);
    double bytes = v * mult;
    if (bytes >= 18446744073709551615.0)
        return pa_error(err, PA_EINVAL, "memory size '%s' is too large", text);
    *out = (uint64_t)bytes;
    return PA_OK;
}

const char *pa_format_size(uint64_t bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, cap, "%.2f %s", v, units[u]);
    return buf;
}

int pa_memory_limit_from_env(uint64_t *out, pa_err *err)
{
    *out = 0;
    const char *s = getenv("PISTA_MEMORY_LIMIT");
    if (!s || !*s)
        return PA_OK;
    pa_err local;
    pa_err_init(&local);
    int rc = pa_parse_size(s, out, &local);
    if (rc == PA_OK)
        rc = pa_memory_limit_check(*out, &local);
    if (rc != PA_OK)
        pa_error(err, rc, "PISTA_MEMORY_LIMIT: %s", local.msg);
    pa_err_close(&local);
    return rc;
}

int pa_memory_limit_check(uint64_t limit, pa_err *err)
{
    char a[32], b[32];
    if (limit == 0)
        return pa_error(err, PA_EINVAL, "a memory limit of 0 bytes leaves nothing to run with");
    if (limit < PA_MEMORY_LIMIT_MIN)
        return pa_error(err, PA_EINVAL, "%s is below the smallest memory limit, %s",
                        pa_format_size(limit, a, sizeof a), pa_format_size(PA_MEMORY_LIMIT_MIN, b, sizeof b));
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    if (phys && limit > phys)
        return pa_error(err, PA_EINVAL, "%s is more than this machine's memory (%s)",
                        pa_format_size(limit, a, sizeof a), pa_format_size(phys, b, sizeof b));
    return PA_OK;
}

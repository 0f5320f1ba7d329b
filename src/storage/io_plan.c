/*
 * io_plan.c - coalescing of byte ranges into few large reads (io_plan_ranges).
 * A scan turns the column chunks (or pages) it needs from one file into a
 * plan, issues one request per planned read, and finds each range's bytes at
 * range_pos[i] inside the buffer of read range_read[i].
 */
#include "storage/io_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct sorted_range {
    uint64_t off, end;
    size_t idx;
} sorted_range;

static int cmp_range(const void *a, const void *b)
{
    const sorted_range *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void io_plan_free(io_plan *p)
{
    if (!p)
        return;
    pa_free(p->reads);
    pa_free(p->range_read);
    pa_free(p->range_pos);
    memset(p, 0, sizeof *p);
}

int io_plan_ranges(const io_range *ranges, size_t n, const io_plan_options *opt,
                   io_plan *out, pa_err *err)
{
    io_plan_options o = {0, 0};
    if (opt)
        o = *opt;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++)
        if (ranges[i].offset > UINT64_MAX - ranges[i].length)
            return pa_error(err, PA_EINVAL, "byte range %zu (offset %llu, length %llu) overflows", i,
                            (unsigned long long)ranges[i].offset,
                            (unsigned long long)ranges[i].length);
    sorted_range *s = pa_malloc(n * sizeof *s);
    out->reads = pa_malloc(n * sizeof *out->reads);   /* at most one read per range */
    out->range_read = pa_malloc(n * sizeof *out->range_read);
    out->range_pos = pa_malloc(n * sizeof *out->range_pos);
    if (!s || !out->reads || !out->range_read || !out->range_pos) {
        pa_free(s);
        io_plan_free(out);
        return pa_error(err, PA_ENOMEM, "out of memory planning %zu byte ranges", n);
    }
    for (size_t i = 0; i < n; i++) {
        s[i].off = ranges[i].offset;
        s[i].end = ranges[i].offset + ranges[i].length;
        s[i].idx = i;
        out->bytes_wanted += ranges[i].length;
    }
    qsort(s, n, sizeof *s, cmp_range);

    size_t nr = 0;
    uint64_t start = 0, end = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t new_end = s[i].end > end ? s[i].end : end;
        /* Join when the hole is small enough (off <= end + max_gap, written
         * to avoid overflow) and the read stays within max_read. */
        bool join = nr > 0 && (s[i].off <= end || s[i].off - end <= o.max_gap) &&
                    (o.max_read == 0 || new_end - start <= o.max_read);
        if (join) {
            end = new_end;
        } else {
            if (nr > 0)
                out->reads[nr - 1].length = end - start;
            start = s[i].off;
            end = s[i].end;
            out->reads[nr++].offset = start;
        }
        out->range_read[s[i].idx] = nr - 1;
        out->range_pos[s[i].idx] = s[i].off - start;
    }
    if (nr > 0)
        out->reads[nr - 1].length = end - start;
    out->n_reads = nr;
    for (size_t i = 0; i < nr; i++)
        out->bytes_read += out->reads[i].length;
    pa_free(s);
    return PA_OK;
}

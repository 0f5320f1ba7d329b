/*
 * writer_buffer.c - the Parquet writer's row-group buffer: checking input
 * views, copying rows (fast paths for columns without NULLs), ending a row
 * group at row_group_rows rows or row_group_bytes bytes, and flushing it as
 * one column chunk per column (writer_chunk.c). See writer_int.h.
 */
#include "storage/writer_int.h"

#include <string.h>

/* Record the writer's first failure (sticky) and return rc. */
static int fail(pq_writer *w, int rc)
{
    if (w->status == PA_OK)
        w->status = rc;
    return rc;
}

/* Make room for `rows` more rows and `bytes` more string bytes in c. */
static int col_reserve(pq_writer *w, wr_col *c, int64_t rows, uint64_t bytes, pa_err *err)
{
    int64_t need = w->rg_rows + rows;
    if (need > c->cap_rows) {
        int64_t cap = c->cap_rows ? c->cap_rows : 1024;
        while (cap < need)
            cap *= 2;
        if (cap > w->opt.row_group_rows)
            cap = w->opt.row_group_rows > need ? w->opt.row_group_rows : need;
        if (c->width) {
            void *v = pa_realloc(c->values, (size_t)cap * (size_t)c->width);
            if (!v)
                goto oom;
            c->values = v;
        }
        if (pa_type_is_varlen(c->type.id)) {
            int32_t *o = pa_realloc(c->offsets, ((size_t)cap + 1) * sizeof *o);
            if (!o)
                goto oom;
            c->offsets = o;
        }
        if (c->nullable) {
            uint8_t *b = pa_realloc(c->validity, ((size_t)cap + 7) / 8);
            if (!b)
                goto oom;
            c->validity = b;
        }
        c->cap_rows = cap;
    }
    if (c->n_bytes + bytes > c->cap_bytes) {
        uint64_t cap = c->cap_bytes ? c->cap_bytes : 4096;
        while (cap < c->n_bytes + bytes)
            cap *= 2;
        uint8_t *b = pa_realloc(c->bytes, (size_t)cap);
        if (!b)
            goto oom;
        c->bytes = b;
        c->cap_bytes = cap;
    }
    return PA_OK;
oom:
    return pa_error(err, PA_ENOMEM, "parquet writer %s: cannot buffer column %s", w->path, c->name);
}

static int check_input(pq_writer *w, uint32_t i, const pa_column *in, int64_t rows, pa_err *err)
{
    const wr_col *c = &w->cols[i];
    if (in->type.id != c->type.id ||
        (c->type.id == PA_TYPE_DECIMAL &&
         (in->type.precision != c->type.precision || in->type.scale != c->type.scale))) {
        char a[32], b[32];
        return pa_error(err, PA_EINVAL, "parquet writer %s: column %s is %s, input is %s", w->path,
                        c->name, pa_type_format(c->type, a, sizeof a), pa_type_format(in->type, b, sizeof b));
    }
    if (in->length < rows || (rows > 0 && !in->data && c->width) ||
        (pa_type_is_varlen(c->type.id) && !in->offsets))
        return pa_error(err, PA_EINVAL, "parquet writer %s: column %s: view of %lld rows without "
                        "buffers, %lld needed", w->path, c->name, (long long)in->length, (long long)rows);
    return PA_OK;
}

/* String bytes of valid rows [from, from + n) of a VARCHAR input, checking
 * the offsets on the way. */
static int string_bytes(pq_writer *w, const wr_col *c, const pa_column *in, int64_t from, int64_t n,
                        uint64_t *out, pa_err *err)
{
    uint64_t t = 0;
    for (int64_t r = from; r < from + n; r++) {
        if (!pa_column_valid(in, r))
            continue;
        int32_t a = in->offsets[r], b = in->offsets[r + 1];
        if (a < 0 || b < a)
            return pa_error(err, PA_EINVAL, "parquet writer %s: column %s: bad offsets %d..%d at row %lld",
                            w->path, c->name, a, b, (long long)r);
        t += (uint64_t)(b - a);
    }
    *out = t;
    return PA_OK;
}

/* Set bits [at, at + n) of a bitmap to 1. */
static void bits_set(uint8_t *b, int64_t at, int64_t n)
{
    for (; n > 0 && (at & 7); at++, n--)
        b[at >> 3] |= (uint8_t)(1u << (at & 7));
    if (n >= 8) {
        memset(b + (at >> 3), 0xFF, (size_t)(n >> 3));
        at += n & ~(int64_t)7;
        n &= 7;
    }
    for (; n > 0; at++, n--)
        b[at >> 3] |= (uint8_t)(1u << (at & 7));
}

/* Copy rows [from, from + n) of input column i into the buffer at row
 * w->rg_rows; sb = the string bytes of its valid rows. */
static int append_col(pq_writer *w, uint32_t i, const pa_column *in, int64_t from, int64_t n,
                      pa_err *err)
{
    wr_col *c = &w->cols[i];
    int64_t at = w->rg_rows;
    size_t width = (size_t)c->width;
    if (pa_type_is_varlen(c->type.id) && at == 0)
        c->offsets[0] = 0;
    if (!in->validity) {
        /* Fast path: no NULLs, contiguous copies. */
        if (c->nullable)
            bits_set(c->validity, at, n);
        if (width) {
            memcpy(c->values + at * (int64_t)width, (const uint8_t *)in->data + from * (int64_t)width,
                   (size_t)n * width);
            return PA_OK;
        }
        int32_t base = in->offsets[from];
        uint64_t len = (uint64_t)(in->offsets[from + n] - base);
        if (len)
            memcpy(c->bytes + c->n_bytes, (const uint8_t *)in->data + base, (size_t)len);
        int64_t shift = (int64_t)c->n_bytes - base;
        for (int64_t k = 1; k <= n; k++)
            c->offsets[at + k] = (int32_t)(in->offsets[from + k] + shift);
        c->n_bytes += len;
        return PA_OK;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t r = from + k, d = at + k;
        bool valid = pa_column_valid(in, r);
        if (!valid && !c->nullable)
            return pa_error(err, PA_EINVAL, "parquet writer %s: column %s is not nullable but "
                            "input row %lld is NULL", w->path, c->name, (long long)r);
        if (c->nullable) {
            uint8_t m = (uint8_t)(1u << (d & 7));
            c->validity[d >> 3] = valid ? (uint8_t)(c->validity[d >> 3] | m)
                                        : (uint8_t)(c->validity[d >> 3] & ~m);
            c->n_nulls += !valid;
        }
        if (!width) {
            if (valid) {
                int32_t a = in->offsets[r], len = in->offsets[r + 1] - a;
                if (len)
                    memcpy(c->bytes + c->n_bytes, (const uint8_t *)in->data + a, (size_t)len);
                c->n_bytes += (uint64_t)len;
            }
            c->offsets[d + 1] = (int32_t)c->n_bytes;
        } else if (valid) {
            memcpy(c->values + d * (int64_t)width, (const uint8_t *)in->data + r * (int64_t)width, width);
        } else {
            memset(c->values + d * (int64_t)width, 0, width);
        }
    }
    return PA_OK;
}

/* DECIMAL values must have at most `precision` digits (readers trust it). */
static int check_decimals(pq_writer *w, const wr_col *c, const pa_column *in, int64_t from, int64_t n,
                          pa_err *err)
{
    if (c->type.precision > 18) {   /* 16-byte values */
        __int128 lim = 1;
        for (int k = 0; k < c->type.precision; k++)
            lim *= 10;
        for (int64_t r = from; r < from + n; r++) {
            __int128 x;
            memcpy(&x, (const uint8_t *)in->data + 16 * r, 16);
            if (pa_column_valid(in, r) && (x >= lim || x <= -lim)) {
                char buf[64];
                pa_format_decimal128(x, c->type.scale, c->type.scale, buf, sizeof buf);
                return pa_error(err, PA_EOVERFLOW, "parquet writer %s: column %s: %s at row %lld does not "
                                "fit DECIMAL(%d,%d)", w->path, c->name, buf, (long long)r, c->type.precision,
                                c->type.scale);
            }
        }
        return PA_OK;
    }
    int64_t lim = 1;
    for (int k = 0; k < c->type.precision; k++)
        lim *= 10;
    const int64_t *v = in->data;
    for (int64_t r = from; r < from + n; r++)
        if (pa_column_valid(in, r) && (v[r] >= lim || v[r] <= -lim)) {
            char buf[48];
            pa_format_decimal(v[r], c->type.scale, c->type.scale, buf, sizeof buf);
            return pa_error(err, PA_EOVERFLOW, "parquet writer %s: column %s: %s at row %lld does not "
                            "fit DECIMAL(%d,%d)", w->path, c->name, buf, (long long)r,
                            c->type.precision, c->type.scale);
        }
    return PA_OK;
}

/* The INTERVAL values of rows [from, from + n) must fit Parquet's
 * (three uint32: months, days, whole milliseconds): PA_EUNSUPPORTED naming
 * the column, the row and what does not fit. */
static int check_intervals(pq_writer *w, const wr_col *c, const pa_column *in, int64_t from, int64_t n,
                           pa_err *err)
{
    const pa_interval *v = in->data;
    for (int64_t r = from; r < from + n; r++) {
        if (!pa_column_valid(in, r))
            continue;
        const char *why = v[r].months < 0 || v[r].days < 0 || v[r].micros < 0 ? "a negative field"
                          : v[r].micros % 1000                              ? "a fraction of a millisecond"
                          : v[r].micros / 1000 > UINT32_MAX                 ? "more than 2^32-1 milliseconds"
                                                                            : NULL;
        if (why)
            return pa_error(err, PA_EUNSUPPORTED, "parquet writer %s: column %s: the INTERVAL at row %lld "
                            "(%d months, %d days, %lld microseconds) has %s; Parquet's INTERVAL holds "
                            "non-negative months, days and milliseconds", w->path, c->name, (long long)r,
                            v[r].months, v[r].days, (long long)v[r].micros, why);
    }
    return PA_OK;
}

/* Copy rows [from, from + n) of the input into the buffer. */
static int append(pq_writer *w, const pa_column *cols, int64_t from, int64_t n, pa_err *err)
{
    int rc;
    for (uint32_t i = 0; i < w->n_cols; i++) {
        wr_col *c = &w->cols[i];
        uint64_t sb = 0;
        if (pa_type_is_varlen(c->type.id) && (rc = string_bytes(w, c, &cols[i], from, n, &sb, err)) != PA_OK)
            return rc;
        if (c->type.id == PA_TYPE_DECIMAL && (rc = check_decimals(w, c, &cols[i], from, n, err)) != PA_OK)
            return rc;
        if (c->type.id == PA_TYPE_INTERVAL && (rc = check_intervals(w, c, &cols[i], from, n, err)) != PA_OK)
            return rc;
        if (sb && !cols[i].data)
            return pa_error(err, PA_EINVAL, "parquet writer %s: column %s: strings without bytes",
                            w->path, c->name);
        if ((rc = col_reserve(w, c, n, sb, err)) != PA_OK)
            return rc;
        if ((rc = append_col(w, i, &cols[i], from, n, err)) != PA_OK)
            return rc;
        w->rg_bytes += (uint64_t)n * (uint64_t)(c->width ? c->width : 4) + sb;
    }
    w->rg_rows += n;
    return PA_OK;
}

/* Buffer bytes of input row r: fixed widths plus its strings. */
static uint64_t row_bytes(const pq_writer *w, const pa_column *cols, int64_t r, uint64_t fixed)
{
    uint64_t t = fixed;
    for (uint32_t i = 0; i < w->n_cols; i++) {
        const pa_column *in = &cols[i];
        if (pa_type_is_varlen(w->cols[i].type.id) && pa_column_valid(in, r) &&
            in->offsets[r + 1] > in->offsets[r])
            t += (uint64_t)(in->offsets[r + 1] - in->offsets[r]);
    }
    return t;
}

/* Rows of the input from `from` on that still fit the row group (at least
 * one when the buffer is empty). */
static int64_t rows_that_fit(pq_writer *w, const pa_column *cols, int64_t from, int64_t avail)
{
    int64_t n = w->opt.row_group_rows - w->rg_rows;
    if (n > avail)
        n = avail;
    uint64_t fixed = 0;
    bool strings = false;
    for (uint32_t i = 0; i < w->n_cols; i++) {
        fixed += (uint64_t)(w->cols[i].width ? w->cols[i].width : 4);
        strings |= pa_type_is_varlen(w->cols[i].type.id);
    }
    uint64_t room = w->opt.row_group_bytes > w->rg_bytes ? w->opt.row_group_bytes - w->rg_bytes : 0;
    if ((uint64_t)n > room / fixed)
        n = (int64_t)(room / fixed);
    if (strings) {
        /* Do all n rows fit? O(1) per column without NULLs; else row by row. */
        uint64_t total = (uint64_t)n * fixed;
        for (uint32_t i = 0; i < w->n_cols && total <= room; i++) {
            const pa_column *in = &cols[i];
            if (!pa_type_is_varlen(w->cols[i].type.id))
                continue;
            if (!in->validity) {
                int64_t d = (int64_t)in->offsets[from + n] - in->offsets[from];
                total += d > 0 ? (uint64_t)d : 0;
            } else {
                for (int64_t k = from; k < from + n; k++)
                    if (pa_column_valid(in, k) && in->offsets[k + 1] > in->offsets[k])
                        total += (uint64_t)(in->offsets[k + 1] - in->offsets[k]);
            }
        }
        if (total > room) {
            uint64_t used = 0;
            int64_t k = 0;
            for (; k < n; k++) {
                uint64_t b = row_bytes(w, cols, from + k, fixed);
                if (used + b > room)
                    break;
                used += b;
            }
            n = k;
        }
    }
    if (n == 0 && w->rg_rows == 0 && avail > 0)
        n = 1;
    return n;
}

int wr__flush_row_group(pq_writer *w, pa_err *err)
{
    int rc;
    if (w->n_rgs == w->cap_rgs) {
        uint32_t cap = w->cap_rgs ? w->cap_rgs * 2 : 8;
        pq_row_group *g = pa_realloc(w->rgs, cap * sizeof *g);
        if (!g)
            return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", w->path);
        w->rgs = g;
        wr_index *x = pa_realloc(w->index, (size_t)cap * w->n_cols * sizeof *x);
        if (!x)
            return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", w->path);
        w->index = x;
        w->cap_rgs = cap;
    }
    pq_row_group *g = &w->rgs[w->n_rgs];
    memset(g, 0, sizeof *g);
    wr_index *idx = &w->index[(size_t)w->n_rgs * w->n_cols];
    memset(idx, 0, w->n_cols * sizeof *idx);
    w->n_rgs++;   /* counted now so that writer_free releases idx on error */
    g->columns = pq__arena_alloc(w->arena, w->n_cols * sizeof *g->columns);
    if (!g->columns)
        return pa_error(err, PA_ENOMEM, "parquet writer %s: out of memory", w->path);
    g->n_columns = w->n_cols;
    g->num_rows = w->rg_rows;
    g->has_file_offset = g->has_total_compressed_size = g->has_ordinal = true;
    g->file_offset = (int64_t)w->offset;
    g->ordinal = (int16_t)(w->n_rgs - 1);
    for (uint32_t i = 0; i < w->n_cols; i++) {
        if ((rc = wr__chunk_write(w, i, &g->columns[i], &idx[i], err)) != PA_OK)
            return rc;
        g->total_byte_size += g->columns[i].meta_data.total_uncompressed_size;
        g->total_compressed_size += g->columns[i].meta_data.total_compressed_size;
    }
    w->total_rows += w->rg_rows;
    w->rg_rows = 0;
    w->rg_bytes = 0;
    for (uint32_t i = 0; i < w->n_cols; i++) {
        w->cols[i].n_bytes = 0;
        w->cols[i].n_nulls = 0;
    }
    return PA_OK;
}

int pq_writer_write(pq_writer *w, const pa_column *columns, int64_t rows, pa_err *err)
{
    if (w->status != PA_OK)
        return pa_error(err, PA_EINVAL, "parquet writer %s: failed earlier (%s)", w->path,
                        pa_status_name(w->status));
    if (rows < 0 || (rows > 0 && !columns))
        return fail(w, pa_error(err, PA_EINVAL, "parquet writer %s: bad row count %lld", w->path,
                                (long long)rows));
    int rc;
    for (uint32_t i = 0; i < w->n_cols && rows > 0; i++)
        if ((rc = check_input(w, i, &columns[i], rows, err)) != PA_OK)
            return fail(w, rc);
    if (w->total_rows + w->rg_rows + rows < w->total_rows)
        return fail(w, pa_error(err, PA_EOVERFLOW, "parquet writer %s: too many rows", w->path));
    int64_t done = 0;
    while (done < rows) {
        int64_t n = rows_that_fit(w, columns, done, rows - done);
        if (n > 0 && (rc = append(w, columns, done, n, err)) != PA_OK)
            return fail(w, rc);
        done += n;
        if (n == 0 || w->rg_rows >= w->opt.row_group_rows)
            if ((rc = wr__flush_row_group(w, err)) != PA_OK)
                return fail(w, rc);
    }
    return PA_OK;
}

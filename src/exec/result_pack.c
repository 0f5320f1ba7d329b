/*
 * result_pack.c - a result's rows as one buffer and back: how a rank's
 * share of a distributed query travels to rank 0 (src/sql/distribute.c).
 *
 * Layout (host byte order: every rank of a job runs the same build):
 *   "PXR1", int32 n_columns, per column int32 type id, precision, scale;
 *   int64 n_chunks; per chunk int64 rows, then per column
 *   uint8 has_validity [validity, (rows + 7) / 8 bytes]
 *   VARCHAR: int64 n_bytes, int32 offsets[rows + 1] (from 0), the bytes;
 *   else rows * width value bytes.
 * Unpacking checks every length against the buffer and every offset run,
 * so a damaged buffer is an error, never a read out of bounds.
 */
#include "exec/exec_int.h"

#include <string.h>

#define MAGIC "PXR1"

typedef struct wbuf {
    char *p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        char *p = pa_realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_i64(wbuf *b, int64_t v) { put(b, &v, sizeof v); }
static void put_i32(wbuf *b, int32_t v) { put(b, &v, sizeof v); }

int ex_result_pack(const ex_result *r, void **out, int64_t *bytes, pa_err *err)
{
    if (r->on_device)
        return pa_error(err, PA_EINVAL, "ex_result_pack: the result is in device memory");
    wbuf b = {0};
    put(&b, MAGIC, 4);
    put_i32(&b, r->n_columns);
    for (int j = 0; j < r->n_columns; j++) {
        put_i32(&b, (int32_t)r->types[j].id);
        put_i32(&b, r->types[j].precision);
        put_i32(&b, r->types[j].scale);
    }
    put_i64(&b, r->n_chunks);
    for (int i = 0; i < r->n_chunks; i++) {
        const dv_chunk *c = r->chunks[i];
        int64_t rows = c->length;
        put_i64(&b, rows);
        for (int j = 0; j < r->n_columns; j++) {
            const pa_column *col = &c->columns[j];
            uint8_t hv = col->validity != NULL;
            put(&b, &hv, 1);
            if (hv)
                put(&b, col->validity, (size_t)(rows + 7) / 8);
            if (col->type.id == PA_TYPE_VARCHAR) {
                int32_t first = col->offsets[0], last = col->offsets[rows];
                put_i64(&b, (int64_t)last - first);
                for (int64_t k = 0; k <= rows; k++)
                    put_i32(&b, col->offsets[k] - first);
                put(&b, (const char *)col->data + first, (size_t)(last - first));
            } else {
                put(&b, col->data, (size_t)rows * (size_t)pa_type_bytes(col->type));
            }
        }
    }
    if (b.oom) {
        pa_free(b.p);
        return pa_error(err, PA_ENOMEM, "out of memory packing a result of %lld rows", (long long)r->n_rows);
    }
    *out = b.p;
    *bytes = (int64_t)b.n;
    return PA_OK;
}

typedef struct rbuf {
    const char *p;
    size_t n, at;
} rbuf;

static bool get(rbuf *b, void *dst, size_t n)
{
    if (n > b->n - b->at)
        return false;
    if (dst)
        memcpy(dst, b->p + b->at, n);
    b->at += n;
    return true;
}

/* Chunk rows of buffer k into *out (a chunk on dev). */
static int unpack_chunk(dv_device *dev, rbuf *b, int n_columns, const pa_type *types, int k, dv_chunk **out,
                        pa_err *err)
{
    int64_t rows;
    if (!get(b, &rows, sizeof rows) || rows < 0 || rows > INT32_MAX)
        return pa_error(err, PA_ECORRUPT, "rows from rank %d: a bad chunk header", k);
    dv_chunk *c;
    int rc = dv_chunk_create(dev, n_columns, &c, err);
    if (rc != PA_OK)
        return rc;
    c->length = rows;
    for (int j = 0; rc == PA_OK && j < n_columns; j++) {
        pa_column *col = &c->columns[j];
        *col = (pa_column){.type = types[j], .length = rows};
        uint8_t hv;
        if (!get(b, &hv, 1) || hv > 1) {
            rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: a bad column header", k);
            break;
        }
        if (hv) {
            size_t vb = (size_t)(rows + 7) / 8;
            if ((rc = dv_chunk_alloc_host(c, vb ? vb : 1, (void **)&col->validity, err)) != PA_OK)
                break;
            if (!get(b, col->validity, vb)) {
                rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: cut short", k);
                break;
            }
        }
        if (types[j].id == PA_TYPE_VARCHAR) {
            int64_t nb;
            size_t ob = (size_t)(rows + 1) * sizeof(int32_t);
            if (!get(b, &nb, sizeof nb) || nb < 0 || nb > INT32_MAX) {
                rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: a bad string length", k);
                break;
            }
            if ((rc = dv_chunk_alloc_host(c, ob, (void **)&col->offsets, err)) != PA_OK ||
                (rc = dv_chunk_alloc_host(c, nb ? (size_t)nb : 1, &col->data, err)) != PA_OK)
                break;
            bool ok = get(b, col->offsets, ob) && col->offsets[0] == 0 && col->offsets[rows] == nb;
            for (int64_t r = 0; ok && r < rows; r++)
                ok = col->offsets[r] <= col->offsets[r + 1];
            if (!ok || !get(b, col->data, (size_t)nb)) {
                rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: bad string offsets", k);
                break;
            }
            pa_column_set_bytes(col, nb);
        } else {
            size_t vb = (size_t)rows * (size_t)pa_type_bytes(types[j]);
            if ((rc = dv_chunk_alloc_host(c, vb ? vb : 1, &col->data, err)) != PA_OK)
                break;
            if (!get(b, col->data, vb))
                rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: cut short", k);
        }
    }
    if (rc != PA_OK) {
        dv_chunk_destroy(c);
        return rc;
    }
    *out = c;
    return PA_OK;
}

int ex_result_unpack(dv_device *dev, int n_columns, const char *const *names, const pa_type *types,
                     const void *const *bufs, const int64_t *sizes, int n, ex_result **out, pa_err *err)
{
    *out = NULL;
    ex_result *r = pa_calloc(1, sizeof *r);
    if (!r)
        return pa_error(err, PA_ENOMEM, "out of memory unpacking rows");
    r->n_columns = n_columns;
    r->names = pa_calloc((size_t)(n_columns ? n_columns : 1), sizeof *r->names);
    r->types = pa_calloc((size_t)(n_columns ? n_columns : 1), sizeof *r->types);
    int rc = r->names && r->types ? PA_OK : pa_error(err, PA_ENOMEM, "out of memory unpacking rows");
    for (int j = 0; rc == PA_OK && j < n_columns; j++) {
        r->types[j] = types[j];
        if (!(r->names[j] = pa_strdup(names[j] ? names[j] : "")))
            rc = pa_error(err, PA_ENOMEM, "out of memory unpacking rows");
    }
    for (int k = 0; rc == PA_OK && k < n; k++) {
        rbuf b = {bufs[k], (size_t)sizes[k], 0};
        char magic[4];
        int32_t nc;
        if (!get(&b, magic, 4) || memcmp(magic, MAGIC, 4) || !get(&b, &nc, sizeof nc) || nc != n_columns) {
            rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: not rows of %d columns", k, n_columns);
            break;
        }
        for (int j = 0; rc == PA_OK && j < n_columns; j++) {
            int32_t t[3];
            if (!get(&b, t, sizeof t) || t[0] != (int32_t)types[j].id || t[1] != types[j].precision ||
                t[2] != types[j].scale)
                rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: column %d has another type", k, j);
        }
        int64_t nch = 0;
        if (rc == PA_OK && (!get(&b, &nch, sizeof nch) || nch < 0 || nch > (int64_t)b.n))
            rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: a bad chunk count", k);
        if (rc == PA_OK && nch) {
            dv_chunk **v = pa_realloc(r->chunks, (size_t)(r->n_chunks + nch) * sizeof *v);
            if (!v)
                rc = pa_error(err, PA_ENOMEM, "out of memory unpacking rows");
            else
                r->chunks = v;
        }
        for (int64_t i = 0; rc == PA_OK && i < nch; i++) {
            dv_chunk *c = NULL;
            if ((rc = unpack_chunk(dev, &b, n_columns, types, k, &c, err)) == PA_OK) {
                r->chunks[r->n_chunks++] = c;
                r->n_rows += c->length;
            }
        }
        if (rc == PA_OK && b.at != b.n)
            rc = pa_error(err, PA_ECORRUPT, "rows from rank %d: %zu bytes left over", k, b.n - b.at);
    }
    if (rc != PA_OK) {
        ex_result_destroy(r);
        return rc;
    }
    *out = r;
    return PA_OK;
}

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

typedef ex_packed wbuf;

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

static void put_types(wbuf *b, const pa_type *types, int n_columns)
{
    put(b, MAGIC, 4);
    put_i32(b, n_columns);
    for (int j = 0; j < n_columns; j++) {
        put_i32(b, (int32_t)types[j].id);
        put_i32(b, types[j].precision);
        put_i32(b, types[j].scale);
    }
}

static void put_header(wbuf *b, const ex_result *r, int n_columns) { put_types(b, r->types, n_columns); }

void ex__pack_header(ex_packed *b, const pa_type *types, int n_columns, int64_t n_chunks)
{
    put_types(b, types, n_columns);
    put_i64(b, n_chunks);
}

void ex__pack_append(ex_packed *b, const void *src, size_t n) { put(b, src, n); }

/* Rows sel[0..rows) of chunk c (all of them when sel is NULL), columns
 * [0, n_columns), as one packed chunk. */
static void put_chunk(wbuf *b, const dv_chunk *c, int n_columns, const int32_t *sel, int64_t rows)
{
    put_i64(b, rows);
    for (int j = 0; j < n_columns && !b->oom; j++) {
        const pa_column *col = &c->columns[j];
        uint8_t hv = col->validity != NULL;
        put(b, &hv, 1);
        if (hv && !sel) {
            put(b, col->validity, (size_t)(rows + 7) / 8);
        } else if (hv) {
            uint8_t byte = 0;
            for (int64_t k = 0; k < rows; k++) {
                byte |= (uint8_t)(pa_column_valid(col, sel[k]) << (k & 7));
                if ((k & 7) == 7 || k == rows - 1) {
                    put(b, &byte, 1);
                    byte = 0;
                }
            }
        }
        if (pa_type_is_varlen(col->type.id)) {
            int64_t total = 0;
            for (int64_t k = 0; k < rows; k++) {
                int64_t i = sel ? sel[k] : k;
                total += col->offsets[i + 1] - col->offsets[i];
            }
            put_i64(b, total);
            int32_t at = 0;
            put_i32(b, at);
            for (int64_t k = 0; k < rows; k++) {
                int64_t i = sel ? sel[k] : k;
                at += col->offsets[i + 1] - col->offsets[i];
                put_i32(b, at);
            }
            if (!sel) {
                put(b, (const char *)col->data + col->offsets[0], (size_t)total);
            } else {
                for (int64_t k = 0; k < rows; k++)
                    put(b, (const char *)col->data + col->offsets[sel[k]],
                        (size_t)(col->offsets[sel[k] + 1] - col->offsets[sel[k]]));
            }
        } else {
            size_t w = (size_t)pa_type_bytes(col->type);
            if (!sel) {
                put(b, col->data, (size_t)rows * w);
            } else {
                for (int64_t k = 0; k < rows; k++)
                    put(b, (const char *)col->data + (size_t)sel[k] * w, w);
            }
        }
    }
}

int ex_result_pack(const ex_result *r, void **out, int64_t *bytes, pa_err *err)
{
    if (r->on_device)
        return pa_error(err, PA_EINVAL, "ex_result_pack: the result is in device memory");
    wbuf b = {0};
    put_header(&b, r, r->n_columns);
    put_i64(&b, r->n_chunks);
    for (int i = 0; i < r->n_chunks; i++)
        put_chunk(&b, r->chunks[i], r->n_columns, NULL, r->chunks[i]->length);
    if (b.oom) {
        pa_free(b.p);
        return pa_error(err, PA_ENOMEM, "out of memory packing a result of %lld rows", (long long)r->n_rows);
    }
    *out = b.p;
    *bytes = (int64_t)b.n;
    return PA_OK;
}

/* ------------------------------------------------------------ partitioning */

/* The value of row i of col as 64 bits that are equal for equal values:
 * -0.0 and 0.0, and every NaN, each hash alike; NULL has its own. */
static uint64_t value_bits(const pa_column *col, int64_t i)
{
    if (!pa_column_valid(col, i))
        return 0x6e756c6cULL;
    switch (pa_type_is_varlen(col->type.id) ? PA_TYPE_VARCHAR : col->type.id == PA_TYPE_REAL ? PA_TYPE_DOUBLE : col->type.id) {
    case PA_TYPE_BOOLEAN: return ((const uint8_t *)col->data)[i] != 0;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return (uint64_t)(int64_t)((const int32_t *)col->data)[i];
    case PA_TYPE_BIGINT:
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIME:
    case PA_TYPE_TIMESTAMP_NS: return (uint64_t)((const int64_t *)col->data)[i];
    case PA_TYPE_INTERVAL: {   /* equal intervals ('1 mon', '30 days') alike */
        pa_interval v;
        memcpy(&v, (const char *)col->data + (size_t)i * 16, 16);
        unsigned __int128 n = (unsigned __int128)pa_interval_norm(v);
        return (uint64_t)n ^ pa_mix64((uint64_t)(n >> 64));
    }
    case PA_TYPE_DOUBLE: {
        double d = ((const double *)col->data)[i];
        if (d == 0)
            d = 0;
        if (d != d)
            return 0x7ff8000000000000ULL;
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        return u;
    }
    case PA_TYPE_DECIMAL:
        if (pa_type_bytes(col->type) == 16) {
            uint64_t h[2];
            memcpy(h, (const char *)col->data + (size_t)i * 16, 16);
            return h[0] ^ pa_mix64(h[1]);
        }
        return (uint64_t)((const int64_t *)col->data)[i];
    case PA_TYPE_VARCHAR: {
        const unsigned char *p = (const unsigned char *)col->data + col->offsets[i];
        int64_t n = col->offsets[i + 1] - col->offsets[i];
        uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)n;
        for (int64_t k = 0; k < n; k++)
            h = (h ^ p[k]) * 0x100000001b3ULL;
        return h;
    }
    default: return 0;
    }
}

/* The part of each row of c: the same hash of its key values on every rank. */
static void route(const dv_chunk *c, const int *keys, int n_keys, int parts, uint16_t *dest, int64_t *count)
{
    memset(count, 0, ((size_t)parts + 1) * sizeof *count);
    for (int64_t k = 0; k < c->length; k++) {
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        for (int j = 0; j < n_keys; j++)
            h = pa_mix64(h ^ value_bits(&c->columns[keys[j]], k));
        dest[k] = (uint16_t)(((h >> 32) * (uint64_t)parts) >> 32);
        count[dest[k]]++;
    }
}

/* Route chunk c's rows into b[p] (a packed chunk each where it has rows;
 * nch[p] counts them), scratch for c->length rows. */
static void pack_routed(wbuf *b, int64_t *nch, const dv_chunk *c, int n_keep, const int *keys, int n_keys, int parts,
                        int only, uint16_t *dest, int32_t *sel, int64_t *count, int64_t *start)
{
    route(c, keys, n_keys, parts, dest, count);
    start[0] = 0;
    for (int p = 0; p < parts; p++)
        start[p + 1] = start[p] + count[p];
    for (int64_t k = 0; k < c->length; k++)
        sel[start[dest[k]]++] = (int32_t)k;
    for (int p = 0; p < parts; p++) {   /* start[p] is now p's end */
        int64_t from = start[p] - count[p];
        if (!count[p] || (only >= 0 && p != only))
            continue;
        put_chunk(&b[p], c, n_keep, sel + from, count[p]);
        nch[p]++;
    }
}

int ex__pack_route(const dv_chunk *c, int n_keep, const int *keys, int n_keys, int parts, int only, ex_packed *out,
                   int64_t *n_chunks, int64_t *rows, ex_route_scratch *sc, pa_err *err)
{
    if (parts < 1 || parts > 65535 || n_keep > c->n_columns)
        return pa_error(err, PA_EINVAL, "ex__pack_route: bad arguments");
    int64_t n = c->length ? c->length : 1;
    bool oom = false;
    if (n > sc->cap_rows) {
        uint16_t *d = pa_realloc(sc->dest, (size_t)n * sizeof *d);
        if (d)
            sc->dest = d;
        int32_t *s = pa_realloc(sc->sel, (size_t)n * sizeof *s);
        if (s)
            sc->sel = s;
        oom = !d || !s;
        if (!oom)
            sc->cap_rows = n;
    }
    if (!oom && parts > sc->cap_parts) {
        int64_t *k = pa_realloc(sc->count, ((size_t)parts + 1) * sizeof *k);
        if (k)
            sc->count = k;
        int64_t *t = pa_realloc(sc->start, ((size_t)parts + 1) * sizeof *t);
        if (t)
            sc->start = t;
        oom = !k || !t;
        if (!oom)
            sc->cap_parts = parts;
    }
    if (!oom) {
        pack_routed(out, n_chunks, c, n_keep, keys, n_keys, parts, only, sc->dest, sc->sel, sc->count, sc->start);
        for (int p = 0; p < parts; p++) {
            oom |= out[p].oom;
            if (rows)
                rows[p] += sc->count[p];
        }
    }
    if (oom)
        return pa_error(err, PA_ENOMEM, "out of memory partitioning a chunk of %lld rows", (long long)c->length);
    return PA_OK;
}

void ex__route_scratch_free(ex_route_scratch *sc)
{
    pa_free(sc->dest), pa_free(sc->sel), pa_free(sc->count), pa_free(sc->start);
    memset(sc, 0, sizeof *sc);
}

int ex_result_pack_parts(const ex_result *r, int n_keep, const int *keys, int n_keys, int parts, int only,
                         void **out, int64_t *bytes, pa_err *err)
{
    for (int p = 0; p < parts; p++) {
        out[p] = NULL;
        bytes[p] = 0;
    }
    if (r->on_device)
        return pa_error(err, PA_EINVAL, "ex_result_pack_parts: the result is in device memory");
    if (parts < 1 || n_keep > r->n_columns)
        return pa_error(err, PA_EINVAL, "ex_result_pack_parts: bad arguments");
    wbuf *b = pa_calloc((size_t)parts, sizeof *b);
    int64_t *count = pa_calloc((size_t)parts + 1, sizeof *count);
    int64_t longest = 0;
    for (int i = 0; i < r->n_chunks; i++)
        longest = r->chunks[i]->length > longest ? r->chunks[i]->length : longest;
    uint16_t *dest = pa_malloc((size_t)(longest ? longest : 1) * sizeof *dest);
    int32_t *sel = pa_malloc((size_t)(longest ? longest : 1) * sizeof *sel);
    int64_t *start = pa_calloc((size_t)parts + 1, sizeof *start);
    size_t *nch_at = pa_calloc((size_t)parts, sizeof *nch_at);
    int64_t *nch = pa_calloc((size_t)parts, sizeof *nch);
    bool oom = !b || !count || !dest || !sel || !start || !nch_at || !nch || parts > 65535;
    for (int p = 0; !oom && p < parts; p++) {
        if (only >= 0 && p != only)
            continue;
        put_header(&b[p], r, n_keep);
        nch_at[p] = b[p].n;
        put_i64(&b[p], 0);
    }
    for (int i = 0; !oom && i < r->n_chunks; i++)
        pack_routed(b, nch, r->chunks[i], n_keep, keys, n_keys, parts, only, dest, sel, count, start);
    for (int p = 0; !oom && p < parts; p++)
        oom = b[p].oom;
    if (!oom)
        for (int p = 0; p < parts; p++) {
            if (only >= 0 && p != only)
                continue;
            memcpy(b[p].p + nch_at[p], &nch[p], sizeof nch[p]);
            out[p] = b[p].p;
            bytes[p] = (int64_t)b[p].n;
        }
    else
        for (int p = 0; b && p < parts; p++)
            pa_free(b[p].p);
    pa_free(b), pa_free(count), pa_free(dest), pa_free(sel), pa_free(start), pa_free(nch_at), pa_free(nch);
    if (oom)
        return pa_error(err, PA_ENOMEM, "out of memory partitioning a result of %lld rows", (long long)r->n_rows);
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
        if (pa_type_is_varlen(types[j].id)) {
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

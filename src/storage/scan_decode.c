/*
 * scan_decode.c - decoding one unit (row group) whose bytes are in its
 * pinned read buffer into a chunk: list the pages, then batches of
 * independent page tasks on the thread pool (decompress; dictionaries;
 * measure strings; decode via kn_page_job), then filter and compact
 * (scan_filter.c) and hand the columns to a dv_chunk. See scan_int.h.
 * The file is long (~800 lines) because the stages share one private
 * working struct (dec); splitting it means moving that struct into
 * scan_int.h, a follow-up.
 */
#include "storage/scan_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dpage {
    int col;                  /* read column */
    uint32_t index;           /* page number within its column chunk */
    uint64_t offset;          /* file offset of its header */
    pq_page_header h;
    const uint8_t *body;      /* stored bytes after the header */
    uint64_t body_len;
    uint8_t *data;            /* the page, uncompressed (v2: levels then values) */
    uint64_t data_len;
    bool compressed;
    bool dict;
    int64_t pos, rows;        /* data pages: output positions */
    int64_t first_row;        /* data pages: first row in the row group */
    uint64_t str_bytes;       /* VARCHAR data pages: bytes they append (an upper bound
                               * when the column is decoded by one task, see bound_strings) */
    bool failed;              /* a task recorded a failure for this page */
    kn_page_job job;
} dpage;

typedef struct dcol {
    scan_dcol d;
    const pq_column_meta *cm;
    const char *name;
    bool used, output, is_string;
    uint64_t bytes_total;     /* VARCHAR: string bytes of all its pages */
    int dict_page;            /* index into pages, -1 = none */
    size_t first_page, end_page;  /* its pages: [first_page, end_page) of dec.pages */
    kn_dict dict;
    pq_page_info *walked;
    bool on_dev;              /* data pages decoded on the device (device_columns) */
    bool dev_codec;           /* on_dev: and decompressed there (else on the host, into pinned memory) */
    void *dv_values;          /* on_dev: the decoded column in device memory, d.rows rows
                               * (VARCHAR: its strings, dv_bytes_cap bytes at most) */
    int32_t *dv_offsets;      /* on_dev VARCHAR: its offsets, d.rows + 1 */
    uint64_t dv_bytes_cap;    /* on_dev VARCHAR: the bound dv_values was sized by */
    uint8_t *dv_validity;     /* on_dev: its validity in whole 32-bit words (NULL when REQUIRED) */
} dcol;

typedef struct dec {
    pq_scan *s;
    scan_wctx *w;             /* the decoder: its pool and reused buffers */
    scan_unit *u;
    dcol *cols;
    dpage *pages;
    size_t n_pages, cap_pages;
    uint8_t *scratch;
    void **host;              /* pa_malloc'ed (or from the scan's pool), given back at the end */
    size_t n_host, cap_host;
    size_t *host_size;        /* per host buffer: its capacity (cap_host entries) */
    void **pinned;            /* staging for non-host-visible devices */
    size_t n_pinned, cap_pinned;
    dv_chunk *chunk;
    int n_dev_cols;           /* columns with on_dev */
    pthread_mutex_t mu;       /* guards the first failure below and allocations */
    size_t fail_at;
    int fail_code;
    char fail_msg[700];
} dec;

/* Record a page task's failure; the lowest page index wins. */
/* where: prefix the file, row group, column and page (a page's own error);
 * else e's message is complete. */
static void task_fail_as(dec *x, size_t i, const pa_err *e, bool where)
{
    dpage *p = i < x->n_pages ? &x->pages[i] : NULL;
    if (p)
        p->failed = true;
    pthread_mutex_lock(&x->mu);
    if (!x->fail_code || i < x->fail_at) {
        x->fail_at = i;
        x->fail_code = e->code ? e->code : PA_EINTERNAL;
        if (where && p)
            snprintf(x->fail_msg, sizeof x->fail_msg, "%s: row group %u column %s page %u (at byte %llu): %s",
                     SCAN_WHERE(x->s, x->u), x->cols[p->col].name, p->index, (unsigned long long)p->offset,
                     e->msg);
        else
            snprintf(x->fail_msg, sizeof x->fail_msg, "%s", e->msg);
    }
    pthread_mutex_unlock(&x->mu);
}

static void task_fail(dec *x, size_t i, const pa_err *e) { task_fail_as(x, i, e, true); }

static int batch_result(dec *x, pa_err *err)
{
    return x->fail_code ? pa_error(err, x->fail_code, "%s", x->fail_msg) : PA_OK;
}

static int track(void ***list, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        void **nl = pa_realloc(*list, nc * sizeof *nl);
        if (!nl)
            return PA_ENOMEM;
        *list = nl;
        *cap = nc;
    }
    (*list)[(*n)++] = p;
    return PA_OK;
}

/* Working memory given back with the unit: buffers go to the scan's pool
 * (s->pool, under s->pool_mu: units may decode at once) so the next unit
 * reuses pages already faulted in. */
static void *pool_take(pq_scan *s, size_t size, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < s->n_pool; i++)
        if (s->pool_size[i] >= size && s->pool_size[i] / 2 <= size &&
            (best < 0 || s->pool_size[i] < s->pool_size[best]))
            best = i;
    if (best < 0)
        return NULL;
    void *p = s->pool[best];
    *cap = s->pool_size[best];
    s->n_pool--;
    s->pool[best] = s->pool[s->n_pool];
    s->pool_size[best] = s->pool_size[s->n_pool];
    return p;
}

static void pool_give(pq_scan *s, void *p, size_t cap)
{
    if (!p)
        return;
    if (s->n_pool == SCAN_POOL_MAX) {   /* full: drop the smallest, keep the larger */
        int small = 0;
        for (int i = 1; i < s->n_pool; i++)
            if (s->pool_size[i] < s->pool_size[small])
                small = i;
        if (s->pool_size[small] >= cap) {
            pa_free(p);
            return;
        }
        pa_free(s->pool[small]);
        s->pool[small] = s->pool[--s->n_pool];
        s->pool_size[small] = s->pool_size[s->n_pool];
    }
    s->pool[s->n_pool] = p;
    s->pool_size[s->n_pool++] = cap;
}

static int host_alloc(dec *x, size_t size, void **out, pa_err *err)
{
    if (!size)
        size = 1;
    size_t cap = size;
    pthread_mutex_lock(&x->s->pool_mu);
    void *p = pool_take(x->s, size, &cap);
    pthread_mutex_unlock(&x->s->pool_mu);
    if (!p)
        p = pa_malloc(size);
    pthread_mutex_lock(&x->mu);
    int rc = p ? PA_OK : PA_ENOMEM;
    if (rc == PA_OK && x->n_host == x->cap_host) {   /* grow host_size first, to track's next capacity */
        size_t *ns = pa_realloc(x->host_size, (x->cap_host ? x->cap_host * 2 : 16) * sizeof *ns);
        if (ns)
            x->host_size = ns;
        else
            rc = PA_ENOMEM;
    }
    if (rc == PA_OK)
        rc = track(&x->host, &x->n_host, &x->cap_host, p);
    if (rc == PA_OK)
        x->host_size[x->n_host - 1] = cap;
    pthread_mutex_unlock(&x->mu);
    if (rc != PA_OK) {
        pa_free(p);
        return pa_error(err, PA_ENOMEM, "%s: row group %u: out of host memory (%zu bytes)", SCAN_WHERE(x->s, x->u),
                        size);
    }
    *out = p;
    return PA_OK;
}

/* A column buffer: chunk memory for output columns on a host-visible
 * device, pinned staging on others, host memory for filter-only columns. */
static int col_alloc(dec *x, const dcol *c, size_t size, void **out, pa_err *err)
{
    if (!c->output)
        return host_alloc(x, size, out, err);
    int rc;
    pa_err e2;
    pa_err_init(&e2);
    if (dv_host_visible(x->s->dev)) {
        pthread_mutex_lock(&x->mu);   /* column tasks allocate concurrently */
        rc = dv_chunk_alloc(x->chunk, size, out, &e2);
        pthread_mutex_unlock(&x->mu);
    } else if ((rc = dv_host_alloc(x->s->dev, size, out, &e2)) == PA_OK) {
        /* Outside the lock: a pinned allocation may wait for the device's
         * queued work (sim), which other column tasks must not block. */
        pthread_mutex_lock(&x->mu);
        if (track(&x->pinned, &x->n_pinned, &x->cap_pinned, *out) != PA_OK) {
            dv_host_free(x->s->dev, *out);
            rc = pa_error(&e2, PA_ENOMEM, "out of host memory");
        }
        pthread_mutex_unlock(&x->mu);
    }
    if (rc != PA_OK)
        pa_error(err, rc, "%s: row group %u column %s: %s", SCAN_WHERE(x->s, x->u), c->name, e2.msg);
    pa_err_close(&e2);
    return rc;
}

/* Device memory for column c (freed at the unit's end unless a chunk adopts
 * it); the error names the file, row group and column. */
static int dev_alloc(dec *x, const dcol *c, size_t size, void **out, pa_err *err)
{
    pa_err e2;
    pa_err_init(&e2);
    int rc = dv_alloc(x->s->dev, size ? size : 1, out, &e2);
    if (rc != PA_OK)
        pa_error(err, rc, "%s: row group %u column %s: %s", SCAN_WHERE(x->s, x->u), c->name, e2.msg);
    pa_err_close(&e2);
    return rc;
}

/* Pinned host memory for this unit, handed back after the stream's work. */
static int pinned_alloc(dec *x, size_t size, void **out, pa_err *err)
{
    pa_err e2;
    pa_err_init(&e2);
    int rc = dv_host_alloc(x->s->dev, size ? size : 1, out, &e2);
    if (rc == PA_OK) {
        pthread_mutex_lock(&x->mu);
        if (track(&x->pinned, &x->n_pinned, &x->cap_pinned, *out) != PA_OK) {
            dv_host_free(x->s->dev, *out);
            rc = pa_error(&e2, PA_ENOMEM, "out of host memory");
        }
        pthread_mutex_unlock(&x->mu);
    }
    if (rc != PA_OK)
        pa_error(err, rc, "%s: row group %u: %s", SCAN_WHERE(x->s, x->u), e2.msg);
    pa_err_close(&e2);
    return rc;
}

/* ------------------------------------------------------------- page lists */

static int add_page(dec *x, int col, uint32_t index, uint64_t offset, const pq_page_header *h,
                    const uint8_t *body, pa_err *err)
{
    if (x->n_pages == x->cap_pages) {
        size_t nc = x->cap_pages ? x->cap_pages * 2 : 64;
        dpage *np = pa_realloc(x->pages, nc * sizeof *np);
        if (!np)
            return pa_error(err, PA_ENOMEM, "out of memory listing pages");
        x->pages = np;
        x->cap_pages = nc;
    }
    dpage *p = &x->pages[x->n_pages++];
    memset(p, 0, sizeof *p);
    p->col = col;
    p->index = index;
    p->offset = offset;
    p->h = *h;
    p->body = body;
    p->body_len = (uint64_t)(h->compressed_page_size < 0 ? 0 : h->compressed_page_size);
    p->dict = h->type == PQ_PAGE_DICTIONARY_PAGE;
    return PA_OK;
}

/* Pages of column r: walk the whole chunk, or decode the headers of the
 * dictionary prefix and the picked pages. Index pages are skipped. */
static int list_pages(dec *x, int r, pa_err *err)
{
    pq_scan *s = x->s;
    scan_unit *u = x->u;
    scan_ucol *uc = &u->ucols[r];
    dcol *c = &x->cols[r];
    char what[512];
    snprintf(what, sizeof what, "%s: row group %u column %s", SCAN_WHERE(s, u), c->name);
    c->dict_page = -1;
    const uint8_t *base = u->buf + u->range_at[uc->first_range];
    int rc;
    if (uc->whole) {
        uint32_t n = 0;
        if ((rc = pq_chunk_pages(c->cm, base, (size_t)uc->len, what, &c->walked, &n, err)) != PA_OK)
            return rc;
        for (uint32_t j = 0; j < n; j++) {
            const pq_page_info *pi = &c->walked[j];
            int32_t t = pi->header.type;
            if (t != PQ_PAGE_DICTIONARY_PAGE && t != PQ_PAGE_DATA_PAGE && t != PQ_PAGE_DATA_PAGE_V2)
                continue;
            if (t == PQ_PAGE_DICTIONARY_PAGE)
                c->dict_page = (int)x->n_pages;
            const uint8_t *body = base + (pi->offset - (uint64_t)uc->start) + pi->header_len;
            if ((rc = add_page(x, r, j, pi->offset, &pi->header, body, err)) != PA_OK)
                return rc;
        }
        return PA_OK;
    }
    uint32_t range = uc->first_range;
    pq_page_header h;
    size_t hlen;
    if (uc->len > 0) {
        if ((rc = pq_page_header_decode(base, (size_t)uc->len, what, (uint64_t)uc->start, &h, &hlen, err)) != PA_OK)
            return rc;
        if (h.type != PQ_PAGE_DICTIONARY_PAGE || !h.has_dictionary_page || h.compressed_page_size < 0 ||
            (uint64_t)h.compressed_page_size != (uint64_t)uc->len - hlen)
            return pa_error(err, PA_ECORRUPT, "%s: the %lld bytes before the first data page are not one dictionary page",
                            what, (long long)uc->len);
        c->dict_page = (int)x->n_pages;
        if ((rc = add_page(x, r, 0, (uint64_t)uc->start, &h, base + hlen, err)) != PA_OK)
            return rc;
        range++;
    }
    for (uint32_t j = 0; j < uc->n_picks; j++, range++) {
        const scan_pick *pk = &uc->picks[j];
        const uint8_t *b = u->buf + u->range_at[range];
        if ((rc = pq_page_header_decode(b, (size_t)pk->size, what, (uint64_t)pk->offset, &h, &hlen, err)) != PA_OK)
            return rc;
        bool v1 = h.type == PQ_PAGE_DATA_PAGE && h.has_data_page;
        bool v2 = h.type == PQ_PAGE_DATA_PAGE_V2 && h.has_data_page_v2;
        int64_t nv = v1 ? h.data_page.num_values : v2 ? h.data_page_v2.num_values : -1;
        if ((!v1 && !v2) || h.compressed_page_size < 0 || (uint64_t)h.compressed_page_size != (uint64_t)pk->size - hlen ||
            nv != pk->rows)
            return pa_error(err, PA_ECORRUPT, "%s: the page at byte %lld does not match the offset index "
                            "(%lld bytes, %lld rows)", what, (long long)pk->offset, (long long)pk->size,
                            (long long)pk->rows);
        if ((rc = add_page(x, r, j, (uint64_t)pk->offset, &h, b + hlen, err)) != PA_OK)
            return rc;
        x->pages[x->n_pages - 1].first_row = pk->first_row;
    }
    return PA_OK;
}

/* ------------------------------------------------------------- checks */

static int page_error(dec *x, const dpage *p, pa_err *err, int code, const char *fmt, ...) PA_PRINTF(5, 6);
static int page_error(dec *x, const dpage *p, pa_err *err, int code, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pa_error(err, code, "%s: row group %u column %s page %u (at byte %llu): %s", SCAN_WHERE(x->s, x->u),
                    x->cols[p->col].name, p->index, (unsigned long long)p->offset, msg);
}

/* Sizes, rows and where each page's uncompressed bytes go. The sizes come
 * from the page headers alone: the column chunk's total_uncompressed_size is
 * wrong in files some writers make (parquetjs), and DuckDB, arrow-rs and
 * Polars read those files, so it is never checked against them. */
static int prepare_pages(dec *x, pa_err *err)
{
    uint64_t scratch = 0, pinned_bytes = 0;
    for (size_t i = 0; i < x->n_pages; i++) {
        dpage *p = &x->pages[i];
        const dcol *c = &x->cols[p->col];
        const pq_page_header *h = &p->h;
        int codec = c->cm->codec;
        if (h->uncompressed_page_size < 0)
            return page_error(x, p, err, PA_ECORRUPT, "negative uncompressed size %d", h->uncompressed_page_size);
        p->compressed = codec != PQ_CODEC_UNCOMPRESSED;
        if (p->dict) {
            if (i != (size_t)c->dict_page || !h->has_dictionary_page)
                return page_error(x, p, err, PA_ECORRUPT, "misplaced dictionary page");
        } else if (h->type == PQ_PAGE_DATA_PAGE_V2) {
            const pq_data_page_header_v2 *v2 = &h->data_page_v2;
            int64_t lv = (int64_t)v2->definition_levels_byte_length + v2->repetition_levels_byte_length;
            if (v2->definition_levels_byte_length < 0 || v2->repetition_levels_byte_length < 0 ||
                lv > h->compressed_page_size || lv > h->uncompressed_page_size)
                return page_error(x, p, err, PA_ECORRUPT, "level sizes %d + %d exceed the page",
                                  v2->repetition_levels_byte_length, v2->definition_levels_byte_length);
            if (v2->num_rows != v2->num_values)
                return page_error(x, p, err, PA_ECORRUPT, "%d rows but %d values in a flat column", v2->num_rows,
                                  v2->num_values);
            p->compressed = p->compressed && (!v2->has_is_compressed || v2->is_compressed);
            p->rows = v2->num_values;
        } else {
            p->rows = h->data_page.num_values;
        }
        if (p->rows < 0)
            return page_error(x, p, err, PA_ECORRUPT, "negative value count");
        if (c->on_dev && !p->dict) {
            p->data_len = (uint64_t)h->uncompressed_page_size;
            if (p->compressed && !c->dev_codec) {   /* decompressed by decompress_task into pinned memory */
                if (p->compressed && !kn_codec_supported(codec))
                    return page_error(x, p, err, PA_EUNSUPPORTED, "codec %s is not supported by this build",
                                      kn_codec_name(codec));
                p->pos = (int64_t)pinned_bytes;
                pinned_bytes += p->data_len;
            }
            p->data = NULL;
        } else if (p->compressed) {
            if (!kn_codec_supported(codec))
                return page_error(x, p, err, PA_EUNSUPPORTED, "codec %s is not supported by this build",
                                  kn_codec_name(codec));
            p->data_len = (uint64_t)h->uncompressed_page_size;
            p->pos = (int64_t)scratch;   /* temporarily: offset into the scratch arena */
            scratch += p->data_len;
        } else {
            p->data = (uint8_t *)p->body;
            p->data_len = p->body_len;
        }
    }
    if (scratch > x->w->scratch_cap) {
        /* The decoder's arena, reused by each unit it decodes: its pages
         * stay mapped and partly cached from one row group to the next. */
        pa_free(x->w->scratch);
        x->w->scratch_cap = 0;
        if (!(x->w->scratch = pa_malloc((size_t)scratch)))
            return pa_error(err, PA_ENOMEM, "%s: row group %u: out of host memory (%llu bytes)",
                            SCAN_WHERE(x->s, x->u), (unsigned long long)scratch);
        x->w->scratch_cap = scratch;
    }
    x->scratch = x->w->scratch;
    uint8_t *pinned = NULL;
    if (pinned_bytes) {
        int rc = pinned_alloc(x, (size_t)pinned_bytes, (void **)&pinned, err);
        if (rc != PA_OK)
            return rc;
    }
    for (size_t i = 0; i < x->n_pages; i++) {
        dpage *p = &x->pages[i];
        const dcol *c = &x->cols[p->col];
        if (!p->compressed || (c->on_dev && !p->dict && c->dev_codec))
            continue;
        p->data = (c->on_dev && !p->dict ? pinned : x->scratch) + p->pos;
        p->pos = 0;
    }
    return PA_OK;
}

/* ------------------------------------------------------------- page tasks */

/* PageHeader.crc, when present: the CRC-32 of the page's bytes as stored
 * after its header (parquet.thrift: compressed data, and for v2 data pages
 * the uncompressed levels in front of it). Checked before anything reads
 * the page; a mismatch is a page task's failure (file, column and page). */
static bool crc_ok(dec *x, size_t i)
{
    dpage *p = &x->pages[i];
    if (!p->h.has_crc)
        return true;
    uint32_t got = kn_crc32(p->body, (size_t)p->body_len), want = (uint32_t)p->h.crc;
    if (got == want)
        return true;
    pa_err e;
    pa_err_init(&e);
    pa_error(&e, PA_ECORRUPT, "page CRC mismatch: the header says 0x%08x, the %llu stored bytes have 0x%08x",
             want, (unsigned long long)p->body_len, got);
    task_fail(x, i, &e);
    pa_err_close(&e);
    return false;
}

/* Check page i's CRC, then decompress it into its place in the scratch arena. */
static void decompress_task(void *ctx, size_t i)
{
    dec *x = ctx;
    dpage *p = &x->pages[i];
    if (!crc_ok(x, i) || !p->compressed || (x->cols[p->col].on_dev && !p->dict && x->cols[p->col].dev_codec))
        return;
    pa_err e;
    pa_err_init(&e);
    int codec = x->cols[p->col].cm->codec;
    uint64_t lv = 0;
    if (!p->dict && p->h.type == PQ_PAGE_DATA_PAGE_V2) {
        lv = (uint64_t)p->h.data_page_v2.definition_levels_byte_length + (uint64_t)p->h.data_page_v2.repetition_levels_byte_length;
        memcpy(p->data, p->body, lv);   /* levels are never compressed */
    }
    if (kn_decompress(codec, p->body + lv, p->body_len - lv, p->data + lv, p->data_len - lv, &e) != PA_OK)
        task_fail(x, i, &e);
    pa_err_close(&e);
}

/* Dictionary page of column c -> kn_dict (engine representation). */
static void dict_task(void *ctx, size_t i)
{
    dec *x = ctx;
    dpage *p = &x->pages[i];
    if (!p->dict)
        return;
    dcol *c = &x->cols[p->col];
    pa_err e;
    pa_err_init(&e);
    int32_t n = p->h.dictionary_page.num_values, enc = p->h.dictionary_page.encoding;
    int width = pa_type_bytes(c->d.type);
    uint64_t sb = 0;
    int rc = PA_OK;
    kn_out out = {0};
    if (enc != PQ_ENC_PLAIN && enc != PQ_ENC_PLAIN_DICTIONARY) {
        rc = pa_error(&e, PA_EUNSUPPORTED, "dictionary page encoding %s", kn_encoding_name(enc));
    } else if (n < 0 || (uint64_t)n > p->data_len * 8) {
        rc = pa_error(&e, PA_ECORRUPT, "dictionary of %d entries in %llu bytes", n, (unsigned long long)p->data_len);
    } else if (c->is_string) {
        if ((rc = kn_measure_values(KN_ENC_PLAIN, &c->d.kc, NULL, p->data, p->data_len, (uint64_t)n, &sb, &e)) == PA_OK &&
            (rc = host_alloc(x, ((size_t)n + 1) * 4, (void **)&out.offsets, &e)) == PA_OK)
            rc = host_alloc(x, (size_t)sb, (void **)&out.bytes, &e);
        if (rc == PA_OK)
            out.offsets[0] = 0;
    } else {
        rc = host_alloc(x, (size_t)n * (size_t)width, &out.values, &e);
    }
    if (rc == PA_OK) {
        out.capacity = (uint64_t)n;
        out.bytes_capacity = sb;
        rc = kn_decode_values(KN_ENC_PLAIN, &c->d.kc, NULL, p->data, p->data_len, (uint64_t)n, &out, 0, NULL, &e);
    }
    if (rc == PA_OK) {
        c->dict.values = out.values;
        c->dict.offsets = out.offsets;
        c->dict.bytes = out.bytes;
        c->dict.n = (uint64_t)n;
    } else {
        task_fail(x, i, &e);
    }
    pa_err_close(&e);
}

/* The kn_page of a data page whose bytes are uncompressed at p->data. */
static void page_view(const dpage *p, kn_page *pg)
{
    memset(pg, 0, sizeof *pg);
    if (p->h.type == PQ_PAGE_DATA_PAGE_V2) {
        const pq_data_page_header_v2 *v2 = &p->h.data_page_v2;
        uint64_t lv = (uint64_t)v2->definition_levels_byte_length + (uint64_t)v2->repetition_levels_byte_length;
        pg->version = 2;
        pg->encoding = v2->encoding;
        pg->num_values = v2->num_values;
        pg->num_nulls = v2->num_nulls;
        pg->levels = p->data;
        pg->rep_levels_size = (uint32_t)v2->repetition_levels_byte_length;
        pg->def_levels_size = (uint32_t)v2->definition_levels_byte_length;
        pg->data = p->data ? p->data + lv : NULL;   /* an empty page has no bytes */
        pg->size = p->data_len - lv;
    } else {
        pg->version = 1;
        pg->encoding = p->h.data_page.encoding;
        pg->def_level_encoding = p->h.data_page.definition_level_encoding;
        pg->num_values = p->h.data_page.num_values;
        pg->data = p->data;
        pg->size = p->data_len;
    }
}

static const kn_dict *col_dict(const dcol *c)
{
    return c->dict_page >= 0 ? &c->dict : NULL;
}

static void measure_task(void *ctx, size_t i)
{
    dec *x = ctx;
    dpage *p = &x->pages[i];
    const dcol *c = &x->cols[p->col];
    if (p->dict || !c->is_string || c->on_dev)
        return;
    pa_err e;
    pa_err_init(&e);
    kn_page pg;
    kn_page_info info;
    page_view(p, &pg);
    if (p->data_len != (uint64_t)p->h.uncompressed_page_size) {
        pa_error(&e, PA_ECORRUPT, "%llu bytes stored, header says %d uncompressed", (unsigned long long)p->data_len,
                 p->h.uncompressed_page_size);
        task_fail(x, i, &e);
    } else if (kn_page_measure(&pg, &c->d.kc, col_dict(c), &info, &e) != PA_OK)
        task_fail(x, i, &e);
    else
        p->str_bytes = info.string_bytes;
    pa_err_close(&e);
}

static void decode_page(dec *x, size_t i)
{
    dpage *p = &x->pages[i];
    if (p->dict || x->cols[p->col].on_dev)
        return;
    const dcol *c = &x->cols[p->col];
    pa_counter_add(PA_CTR_PAGES_HOST, 1);
    kn_page_job *j = &p->job;
    memset(j, 0, sizeof *j);
    j->src = p->data;
    j->src_size = p->data_len;
    j->uncompressed_size = (uint64_t)p->h.uncompressed_page_size;
    j->codec = KN_CODEC_UNCOMPRESSED;   /* decompressed by the batch before */
    page_view(p, &j->page);
    j->page.data = NULL;
    j->page.levels = NULL;
    j->col = c->d.kc;
    if (c->dict_page >= 0)
        j->dict = c->dict;
    j->out.values = c->d.values;
    j->out.offsets = c->d.offsets;
    j->out.bytes = c->d.bytes;
    j->out.validity = c->d.validity;
    j->out.capacity = c->d.rows;
    j->out.bytes_capacity = c->bytes_total;
    j->row_offset = (uint64_t)p->pos;
    pa_err e;
    pa_err_init(&e);
    if (kn_page_job_run(j, &e) != PA_OK)
        task_fail(x, i, &e);
    pa_err_close(&e);
}

/* Pages that share a byte of their column's validity bitmap (a page whose
 * first row is not a multiple of 8 shares one with the page before) are
 * decoded in order by one task: the bitmap is written byte by byte. */
typedef struct group_ctx {
    dec *x;
    const size_t *first;   /* n + 1 boundaries into pages */
} group_ctx;

static void decode_group(void *ctx, size_t g)
{
    group_ctx *gc = ctx;
    for (size_t i = gc->first[g]; i < gc->first[g + 1]; i++)
        decode_page(gc->x, i);
}

static int decode_pages(dec *x, pa_err *err)
{
    size_t *first = pa_malloc((x->n_pages + 1) * sizeof *first), n = 0;
    if (!first)
        return pa_error(err, PA_ENOMEM, "out of memory decoding");
    for (size_t i = 0; i < x->n_pages; i++) {
        const dpage *p = &x->pages[i];
        bool joins = i > 0 && x->pages[i - 1].col == p->col && !x->pages[i - 1].dict && !p->dict &&
                     x->cols[p->col].d.validity && p->pos % 8 != 0;
        if (!joins)
            first[n++] = i;
    }
    first[n] = x->n_pages;
    group_ctx gc = {x, first};
    pa_parallel_for(x->w->tp, n, decode_group, &gc);
    pa_free(first);
    return batch_result(x, err);
}

/* ------------------------------------------------------------- layout */

static int add_seg(scan_dcol *d, int64_t row, int64_t n, int64_t pos, pa_err *err)
{
    if (d->n_segs && d->segs[d->n_segs - 1].row + d->segs[d->n_segs - 1].n == row &&
        d->segs[d->n_segs - 1].pos + d->segs[d->n_segs - 1].n == pos) {
        d->segs[d->n_segs - 1].n += n;
        return PA_OK;
    }
    scan_seg *ns = pa_realloc(d->segs, (d->n_segs + 1) * sizeof *ns);
    if (!ns)
        return pa_error(err, PA_ENOMEM, "out of memory");
    d->segs = ns;
    d->segs[d->n_segs++] = (scan_seg){row, n, pos};
    return PA_OK;
}

/* Positions of every data page, string start offsets, and the buffers. */
static int layout_column(dec *x, int r, pa_err *err)
{
    dcol *c = &x->cols[r];
    const scan_ucol *uc = &x->u->ucols[r];
    int64_t pos = 0, row = 0;
    uint64_t sb = 0;
    int rc;
    for (size_t i = 0; i < x->n_pages; i++) {
        dpage *p = &x->pages[i];
        if (p->col != r || p->dict)
            continue;
        if (uc->whole)
            p->first_row = row;
        p->pos = pos;
        if ((rc = add_seg(&c->d, p->first_row, p->rows, pos, err)) != PA_OK)
            return rc;
        row = p->first_row + p->rows;
        pos += p->rows;
        sb += p->str_bytes;
    }
    if (uc->whole && (pos != x->u->num_rows || c->cm->num_values != x->u->num_rows))
        return pa_error(err, PA_ECORRUPT, "%s: row group %u column %s: data pages hold %lld rows, the row group %lld",
                        SCAN_WHERE(x->s, x->u), c->name, (long long)pos, (long long)x->u->num_rows);
    if (sb > INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "%s: row group %u column %s: %llu bytes of strings (at most 2^31-1 in a chunk)",
                        SCAN_WHERE(x->s, x->u), c->name, (unsigned long long)sb);
    c->d.rows = (uint64_t)pos;
    c->bytes_total = sb;
    size_t n = (size_t)pos;
    if (c->on_dev) {
        /* Whole 32-bit words of validity: kn_decode_pages' contract. Strings
         * by their bound (dev_string_bound): the device finds the sizes. */
        size_t vb = c->is_string ? (size_t)sb : n * (size_t)pa_type_bytes(c->d.type);
        c->dv_bytes_cap = sb;
        if ((rc = dev_alloc(x, c, vb, &c->dv_values, err)) != PA_OK ||
            (c->is_string && (rc = dev_alloc(x, c, (n + 1) * 4, (void **)&c->dv_offsets, err)) != PA_OK) ||
            (c->d.kc.max_def_level > 0 &&
             (rc = dev_alloc(x, c, (n + 31) / 32 * 4, (void **)&c->dv_validity, err)) != PA_OK))
            return rc;
        return PA_OK;
    }
    if (c->is_string) {
        if ((rc = col_alloc(x, c, (n + 1) * 4, (void **)&c->d.offsets, err)) != PA_OK ||
            (rc = col_alloc(x, c, (size_t)sb, (void **)&c->d.bytes, err)) != PA_OK)
            return rc;
        c->d.values = c->d.bytes;
        int64_t at = 0;
        for (size_t i = 0; i < x->n_pages; i++) {
            dpage *p = &x->pages[i];
            if (p->col != r || p->dict)
                continue;
            c->d.offsets[p->pos] = (int32_t)at;
            at += (int64_t)p->str_bytes;
        }
        c->d.offsets[n] = (int32_t)at;
    } else if ((rc = col_alloc(x, c, n * (size_t)pa_type_bytes(c->d.type), &c->d.values, err)) != PA_OK) {
        return rc;
    }
    if (c->d.kc.max_def_level > 0 && (rc = col_alloc(x, c, (n + 7) / 8, (void **)&c->d.validity, err)) != PA_OK)
        return rc;
    return PA_OK;
}

/* Engine representation fix-ups the kernels do not know about. */
static bool needs_fixup(const pq_column_desc *d)
{
    return d->time_unit == PQ_TU_MILLIS || d->uint64 || (d->physical_type == PQ_T_INT32 && d->type.id == PA_TYPE_BIGINT);
}

/* Milliseconds (TIMESTAMP and TIME of unit MILLIS) to the engine's
 * microseconds; a value past the int64 microseconds is an error (NULL
 * rows' slots are not looked at). */
static int fixup_column(dec *x, dcol *c, const pq_column_desc *d, pa_err *err)
{
    if (c->on_dev)
        return PA_OK;   /* device_columns takes no column that needs one */
    if (d->time_unit == PQ_TU_MILLIS) {
        int64_t *v = c->d.values;
        const uint8_t *valid = c->d.validity;
        for (uint64_t i = 0; i < c->d.rows; i++) {
            int64_t t;
            if (!__builtin_mul_overflow(v[i], 1000, &t))
                v[i] = t;
            else if (!valid || (valid[i >> 3] >> (i & 7)) & 1)
                return pa_error(err, PA_EOVERFLOW, "%s: row group %u column %s: the %s value %lld ms lies outside "
                                "the microseconds the engine holds", SCAN_WHERE(x->s, x->u), c->name,
                                pa_type_name(d->type.id), (long long)v[i]);
            else
                v[i] = 0;
        }
    } else if (d->uint64) {
        /* The kernels wrote 8-byte values at the front of the 16-byte
         * slots: widen from the last row down, so no value is overwritten
         * before it is read. */
        uint8_t *v = c->d.values;
        for (uint64_t i = c->d.rows; i-- > 0;) {
            uint64_t u;
            memcpy(&u, v + 8 * i, 8);
            __int128 w = (__int128)u;
            memcpy(v + 16 * i, &w, 16);
        }
    } else if (d->physical_type == PQ_T_INT32 && d->type.id == PA_TYPE_BIGINT) {   /* UINT_32 */
        int64_t *v = c->d.values;
        for (uint64_t i = 0; i < c->d.rows; i++)
            v[i] = (int64_t)(uint32_t)v[i];
    }
    return PA_OK;
}


/* ------------------------------------------------------------- column tasks
 *
 * When a unit has enough columns to keep every worker busy, each column is
 * one task running all of its stages in order (decompress, dictionary,
 * string sizes, layout, decode): a page is decoded while its uncompressed
 * bytes are still in the core's cache, and the unit has one barrier instead
 * of four. Columns start largest first (longest-processing-time order) so
 * that the last task to finish is a small one. With few columns the staged
 * batches keep page-level parallelism.
 */

/* Largest string bound taken from a dictionary (num_values x its longest
 * entry) instead of measuring: beyond it the exact pass is cheaper than the
 * memory. */
#define DICT_BOUND_MAX ((uint64_t)32 << 20)

/* A data page's values encoding. */
static int32_t data_encoding(const dpage *p)
{
    return p->h.type == PQ_PAGE_DATA_PAGE_V2 ? p->h.data_page_v2.encoding : p->h.data_page.encoding;
}

/* The longest entry of string column c's dictionary (0 without one). */
static uint64_t dict_maxlen(const dcol *c)
{
    uint64_t maxlen = 0;
    if (c->dict_page >= 0 && c->dict.offsets)
        for (uint64_t k = 0; k < c->dict.n; k++) {
            uint64_t len = (uint64_t)(c->dict.offsets[k + 1] - c->dict.offsets[k]);
            maxlen = len > maxlen ? len : maxlen;
        }
    return maxlen;
}

/* Column c decoded by one task, pages in order, needs no exact page starts:
 * each page continues at the end offset the page before wrote, so an upper
 * bound of the string bytes is enough to size the buffer. PLAIN strings lie
 * inside their page's bytes; dictionary pages hold at most num_values times
 * the longest entry. Sets every data page's str_bytes to its bound and
 * returns true, or false when a page needs the measuring pass. */
static bool bound_strings(dec *x, dcol *c)
{
    uint64_t maxlen = dict_maxlen(c), total = 0;
    for (size_t i = c->first_page; i < c->end_page; i++) {
        dpage *p = &x->pages[i];
        if (p->dict)
            continue;
        kn_page pg;
        page_view(p, &pg);
        uint64_t b;
        if (pg.encoding == PQ_ENC_PLAIN)
            b = pg.size;
        else if ((pg.encoding == PQ_ENC_PLAIN_DICTIONARY || pg.encoding == PQ_ENC_RLE_DICTIONARY) &&
                 c->dict_page >= 0 && (b = (uint64_t)p->rows * maxlen) <= DICT_BOUND_MAX)
            ;
        else
            return false;
        p->str_bytes = b;
        total += b;
    }
    return total <= INT32_MAX;
}

/* The strings of an on_dev column's pages, bounded from what the host
 * knows before the device decodes them: a PLAIN or DELTA_LENGTH_BYTE_ARRAY
 * page's strings lie inside its bytes, a dictionary page's are at most its
 * values times the longest entry. pick_device_columns made sure the bounds
 * fit in 2^31-1. */
static void dev_string_bound(dec *x, dcol *c)
{
    uint64_t maxlen = dict_maxlen(c);
    for (size_t i = c->first_page; i < c->end_page; i++) {
        dpage *p = &x->pages[i];
        if (p->dict)
            continue;
        int32_t enc = data_encoding(p);
        bool dict = enc == PQ_ENC_PLAIN_DICTIONARY || enc == PQ_ENC_RLE_DICTIONARY;
        p->str_bytes = dict ? (uint64_t)p->rows * maxlen : (uint64_t)p->h.uncompressed_page_size;
    }
}

typedef struct column_ctx {
    dec *x;
    const int *order;      /* read columns, largest first */
} column_ctx;

static void column_task(void *ctx, size_t k)
{
    column_ctx *cc = ctx;
    dec *x = cc->x;
    int r = cc->order[k];
    dcol *c = &x->cols[r];
    size_t a = c->first_page, b = c->end_page;
    for (size_t i = a; i < b; i++) {
        decompress_task(x, i);
        if (x->pages[i].failed)
            return;
    }
    if (c->dict_page >= 0) {
        dict_task(x, (size_t)c->dict_page);
        if (x->pages[c->dict_page].failed)
            return;
    }
    if (c->on_dev && c->is_string)
        dev_string_bound(x, c);
    else if (c->is_string && !bound_strings(x, c))
        for (size_t i = a; i < b; i++) {
            measure_task(x, i);
            if (x->pages[i].failed)
                return;
        }
    pa_err e;
    pa_err_init(&e);
    if (layout_column(x, r, &e) != PA_OK) {
        task_fail_as(x, a, &e, false);
        pa_err_close(&e);
        return;
    }
    pa_err_close(&e);
    for (size_t i = a; i < b; i++) {
        decode_page(x, i);
        if (x->pages[i].failed)
            return;
    }
    pa_err_init(&e);
    if (fixup_column(x, c, &x->s->rcols[r].desc[x->u->file], &e) != PA_OK)
        task_fail_as(x, a, &e, false);
    pa_err_close(&e);
}

static int cmp_size_desc(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;   /* pairs (size, column) */
    return x[0] != y[0] ? (x[0] < y[0] ? 1 : -1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* One task per used column (see above). */
static int decode_by_column(dec *x, pa_err *err)
{
    pq_scan *s = x->s;
    int64_t *pairs = pa_malloc((size_t)(s->n_rcols ? s->n_rcols : 1) * 2 * sizeof *pairs);
    int *order = pa_malloc((size_t)(s->n_rcols ? s->n_rcols : 1) * sizeof *order);
    if (!pairs || !order) {
        pa_free(pairs);
        pa_free(order);
        return pa_error(err, PA_ENOMEM, "out of memory decoding");
    }
    size_t n = 0;
    for (int r = 0; r < s->n_rcols; r++)
        if (x->cols[r].used) {
            /* Only an order: a wrong size (see prepare_pages) costs balance, not results. */
            pairs[2 * n] = x->cols[r].cm->total_uncompressed_size;
            pairs[2 * n + 1] = r;
            n++;
        }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_size_desc);
    for (size_t k = 0; k < n; k++)
        order[k] = (int)pairs[2 * k + 1];
    column_ctx cc = {x, order};
    pa_parallel_for(x->w->tp, n, column_task, &cc);
    pa_free(pairs);
    pa_free(order);
    return batch_result(x, err);
}

/* Column tasks when there are at least two columns per worker (or one worker). */
static bool by_column(const dec *x)
{
    const pq_scan *s = x->s;
    int used = 0, workers = x->w->tp ? pa_threadpool_size(x->w->tp) : 1;
    for (int r = 0; r < s->n_rcols; r++)
        used += x->cols[r].used;
    return workers <= 1 || used >= 2 * workers;
}

/* ------------------------------------------------------------- the unit */

typedef struct compact_ctx {
    dec *x;
    int *cols;
    const uint32_t *sel;
    uint64_t n;
} compact_ctx;

static void compact_task(void *ctx, size_t i)
{
    compact_ctx *cc = ctx;
    scan__compact(&cc->x->cols[cc->cols[i]].d, cc->sel, cc->n);
}

/* A device buffer of the chunk for column c's upload; the error names the
 * file, row group and column, as col_alloc's do. */
static int upload_alloc(dec *x, const dcol *c, size_t size, void **out, pa_err *err)
{
    pa_err e2;
    pa_err_init(&e2);
    int rc = dv_chunk_alloc(x->chunk, size, out, &e2);
    if (rc != PA_OK)
        pa_error(err, rc, "%s: row group %u column %s: %s", SCAN_WHERE(x->s, x->u), c->name, e2.msg);
    pa_err_close(&e2);
    return rc;
}

/* Non-host-visible device: copy the compacted staging columns into chunk
 * buffers (one batched copy, no sync). */
static int upload_columns(dec *x, uint64_t n, void **dv_vals, int32_t **dv_offs, uint8_t **dv_valid, pa_err *err)
{
    pq_scan *s = x->s;
    size_t cap = (size_t)s->n_rcols * 3, k = 0;
    void **dsts = pa_calloc(cap ? cap : 1, sizeof *dsts);
    const void **srcs = pa_calloc(cap ? cap : 1, sizeof *srcs);
    size_t *sizes = pa_calloc(cap ? cap : 1, sizeof *sizes);
    int rc = PA_OK;
    if (!dsts || !srcs || !sizes) {
        rc = pa_error(err, PA_ENOMEM, "out of memory uploading a chunk");
        goto done;
    }
    for (int r = 0; r < s->n_rcols; r++) {
        dcol *c = &x->cols[r];
        if (!c->used || !c->output || c->on_dev)
            continue;
        size_t vs = c->is_string ? (size_t)c->d.offsets[n] : (size_t)n * (size_t)pa_type_bytes(c->d.type);
        void *p;
        PA_TRY(rc = upload_alloc(x, c, vs, &p, err));
        dv_vals[r] = p;
        dsts[k] = p, srcs[k] = c->d.values, sizes[k++] = vs;
        if (c->is_string) {
            PA_TRY(rc = upload_alloc(x, c, ((size_t)n + 1) * 4, &p, err));
            dv_offs[r] = p;
            dsts[k] = p, srcs[k] = c->d.offsets, sizes[k++] = ((size_t)n + 1) * 4;
        }
        if (c->d.validity) {
            PA_TRY(rc = upload_alloc(x, c, ((size_t)n + 7) / 8, &p, err));
            dv_valid[r] = p;
            dsts[k] = p, srcs[k] = c->d.validity, sizes[k++] = ((size_t)n + 7) / 8;
        }
    }
    if (k) {
        /* No sync: consumers wait for the chunk's ready event, and the
         * staging buffers are freed once the stream reached the copies. */
        PA_TRY(rc = dv_copy_batch_async(x->w->stream, k, dsts, srcs, sizes, DV_COPY_H2D, err));
        PA_TRY(rc = dv_chunk_set_ready(x->chunk, x->w->stream, err));
    }
fail:
done:
    pa_free(dsts);
    pa_free((void *)srcs);
    pa_free(sizes);
    return rc;
}

/* ------------------------------------------------------------- device columns
 *
 * On a device that is not host-visible (sim, cuda), the data pages of an
 * output column that no predicate reads are decompressed (kn_decompress_pages)
 * and decoded (kn_decode_pages) on the device, when every page is of a kind
 * the kernels take: fixed-width values, PLAIN or dictionary, flat levels,
 * a codec the device decompresses. Their stored bytes go up from the unit's
 * pinned read buffer in one batched copy; dictionaries are decoded on the
 * host (small) and go up with them. The rows a filter or the page index
 * keeps are then taken on the device (kn_take). Nothing waits: a corrupt
 * page is a data fault of the scan's stream, reported by the query's next
 * sync ("page K of the batch: ..."), where the host path names the file,
 * row group and column. Predicate columns stay on the host: the pushed-down
 * filter evaluates there.
 */

#define WHERE_BYTES 384

static bool filter_reads(const pq_scan *s, int r)
{
    if (!s->opt.filter_rows)
        return false;
    for (int i = 0; i < s->n_preds; i++)
        if (s->preds[i].col == r)
            return true;
    return false;
}

static void pick_device_columns(dec *x)
{
    pq_scan *s = x->s;
    if (dv_host_visible(s->dev) || s->opt.host_decode || (!s->opt.device_decode && !dv_decodes_pages(s->dev)))
        return;
    for (int r = 0; r < s->n_rcols; r++) {
        dcol *c = &x->cols[r];
        const pq_column_desc *d = &s->rcols[r].desc[x->u->file];
        if (!c->used || !c->output || filter_reads(s, r) || needs_fixup(d) || s->rcols[r].mixed)
            continue;
        bool ok = c->end_page > c->first_page;
        /* Strings: what dev_string_bound will size them by, from the headers
         * (a dictionary's entries are shorter than its page). */
        uint64_t bound = 0, dict_size = 0;
        if (c->is_string && c->dict_page >= 0)
            dict_size = (uint64_t)x->pages[c->dict_page].h.uncompressed_page_size;
        for (size_t i = c->first_page; ok && i < c->end_page; i++) {
            const dpage *p = &x->pages[i];
            if (p->dict) {
                int32_t enc = p->h.dictionary_page.encoding;
                ok = enc == PQ_ENC_PLAIN || enc == PQ_ENC_PLAIN_DICTIONARY;
                continue;
            }
            kn_page_job j;
            memset(&j, 0, sizeof j);
            j.codec = KN_CODEC_UNCOMPRESSED;
            page_view(p, &j.page);
            j.col = c->d.kc;
            bool dict = j.page.encoding == PQ_ENC_PLAIN_DICTIONARY || j.page.encoding == PQ_ENC_RLE_DICTIONARY;
            ok = kn_decode_pages_supported(&j) && (!dict || c->dict_page >= 0);
            if (c->is_string)
                bound += dict ? (uint64_t)(p->rows > 0 ? p->rows : 0) * dict_size
                              : (uint64_t)(p->h.uncompressed_page_size > 0 ? p->h.uncompressed_page_size : 0);
            ok = ok && bound <= INT32_MAX;
        }
        if (ok) {
            c->on_dev = true;
            c->dev_codec = c->cm->codec == PQ_CODEC_UNCOMPRESSED || kn_decompress_pages_supported(c->cm->codec);
            x->n_dev_cols++;
        }
    }
}

/* Device scratch of the unit: freed once the stream passed its use. */
typedef struct dscratch {
    void *p[8];
    int n;
} dscratch;

static int scratch_alloc(dec *x, dscratch *ds, size_t size, void **out, pa_err *err)
{
    pa_err e2;
    pa_err_init(&e2);
    int rc = dv_alloc(x->s->dev, size ? size : 1, out, &e2);
    if (rc == PA_OK)
        ds->p[ds->n++] = *out;
    else
        pa_error(err, rc, "%s: row group %u: decoding on the device: %s", SCAN_WHERE(x->s, x->u), e2.msg);
    pa_err_close(&e2);
    return rc;
}

/* The rows of column c at positions for the selected rows: sel[k]'s
 * position through c's segments (scan__compact's walk), into pinned idx. */
static void positions(const dcol *c, const uint32_t *sel, uint64_t n, int32_t *idx)
{
    uint32_t g = 0;
    for (uint64_t k = 0; k < n; k++) {
        int64_t row = sel[k];
        while (g < c->d.n_segs && row >= c->d.segs[g].row + c->d.segs[g].n)
            g++;
        idx[k] = (int32_t)(c->d.segs[g].pos + (row - c->d.segs[g].row));   /* scan__select checked every row */
    }
}

/* Where a page's bytes go in the device's staging: pages whose stored bytes
 * lie close together in the read buffer go up as one copy (the headers and
 * gaps between them included), so a column chunk is one copy, not one per
 * page; pages decompressed on the host (src elsewhere) one copy each. */
#define SPAN_GAP 4096

typedef struct placer {
    const uint8_t *src_end;   /* end of the span so far in the read buffer; NULL: none */
    uint64_t at;              /* staging bytes so far */
} placer;

static uint64_t place(placer *pl, const uint8_t *src, uint64_t len, bool in_buf, bool *extends)
{
    *extends = in_buf && pl->src_end && src >= pl->src_end && (uint64_t)(src - pl->src_end) <= SPAN_GAP;
    uint64_t at = *extends ? pl->at + (uint64_t)(src - pl->src_end) : pl->at;
    pl->at = at + len;
    pl->src_end = in_buf ? src + len : NULL;
    return at;
}

/* kn_decode_pages' scratch for page p (kernels.h), in 16-byte aligned
 * slices: per value 4 bytes for dictionary indices and RLE booleans, 8 for
 * DELTA_BINARY_PACKED values; strings 4 for their offsets, plus 4 for
 * dictionary indices or 8 for DELTA_LENGTH_BYTE_ARRAY lengths. */
static uint64_t scratch_bytes(const dec *x, const dpage *p)
{
    int32_t enc = data_encoding(p);
    bool dict = enc == PQ_ENC_PLAIN_DICTIONARY || enc == PQ_ENC_RLE_DICTIONARY;
    uint64_t per = x->cols[p->col].is_string ? 4 + (dict ? 4 : enc == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY ? 8 : 0)
                   : dict || enc == PQ_ENC_RLE        ? 4
                   : enc == PQ_ENC_DELTA_BINARY_PACKED ? 8
                                                       : 0;
    return per ? (((uint64_t)p->rows + 1) * per + 15) & ~(uint64_t)15 : 0;
}

static int device_columns(dec *x, const uint32_t *sel, uint64_t n, void **vals, int32_t **offs, uint8_t **valid,
                          pa_err *err)
{
    pq_scan *s = x->s;
    kn_ctx kn = {s->dev, x->w->stream};
    dscratch ds = {{0}, 0};
    size_t np = 0, nc = 0, n_copies = 0, host_unc = 0;
    uint64_t raw_bytes = 0, unc_bytes = 0, scr_bytes = 0;
    int rc = PA_OK;
    placer pl = {NULL, 0};
    for (size_t i = 0; i < x->n_pages; i++) {
        const dpage *p = &x->pages[i];
        if (p->dict || !x->cols[p->col].on_dev)
            continue;
        np++;
        bool on_host = p->compressed && !x->cols[p->col].dev_codec, ext;   /* decompressed on the host */
        place(&pl, on_host ? p->data : p->body, on_host ? p->data_len : p->body_len, !on_host, &ext);
        host_unc += on_host;
        if (p->compressed && x->cols[p->col].dev_codec) {
            nc++;
            unc_bytes += p->data_len;
        }
        scr_bytes += scratch_bytes(x, p);
    }
    raw_bytes = pl.at;
    size_t max_copies = np * 2 + (size_t)s->n_rcols * 3 + 2;
    void **dsts = pa_calloc(max_copies, sizeof *dsts);
    const void **srcs = pa_calloc(max_copies, sizeof *srcs);
    size_t *sizes = pa_calloc(max_copies, sizeof *sizes);
    uint8_t *raw = NULL, *unc = NULL, *scr = NULL;
    char *where = NULL;
    kn_page_job *jobs = NULL, *djobs = NULL;
    kn_codec_job *cjobs = NULL, *dcjobs = NULL;
    void **ddict = pa_calloc((size_t)(s->n_rcols ? s->n_rcols : 1), sizeof *ddict);
    if (!dsts || !srcs || !sizes || !ddict) {
        rc = pa_error(err, PA_ENOMEM, "out of memory decoding on the device");
        goto done;
    }
    PA_TRY(rc = scratch_alloc(x, &ds, (size_t)raw_bytes, (void **)&raw, err));
    if (unc_bytes)
        PA_TRY(rc = scratch_alloc(x, &ds, (size_t)unc_bytes, (void **)&unc, err));
    if (scr_bytes)
        PA_TRY(rc = scratch_alloc(x, &ds, (size_t)scr_bytes, (void **)&scr, err));
    /* What each page is, for a refusal's message (read by the kernels). */
    PA_TRY(rc = pinned_alloc(x, np * WHERE_BYTES, (void **)&where, err));
    PA_TRY(rc = scratch_alloc(x, &ds, np * sizeof *jobs, (void **)&djobs, err));
    PA_TRY(rc = pinned_alloc(x, np * sizeof *jobs, (void **)&jobs, err));
    if (nc) {
        PA_TRY(rc = scratch_alloc(x, &ds, nc * sizeof *cjobs, (void **)&dcjobs, err));
        PA_TRY(rc = pinned_alloc(x, nc * sizeof *cjobs, (void **)&cjobs, err));
    }
    /* Dictionaries (decoded by dict_task on the host) go up through pinned
     * staging, a string dictionary's offsets and bytes as one copy; a string
     * column's first offset, 0, with them (kn_decode_pages places the pages
     * after it). */
    int32_t *zero = NULL;
    for (int r = 0; r < s->n_rcols && rc == PA_OK; r++) {
        dcol *c = &x->cols[r];
        if (c->on_dev && c->is_string && (zero || (rc = pinned_alloc(x, sizeof *zero, (void **)&zero, err)) == PA_OK)) {
            *zero = 0;
            dsts[n_copies] = c->dv_offsets, srcs[n_copies] = zero, sizes[n_copies++] = sizeof *zero;
        }
        if (rc != PA_OK)
            break;
        if (!c->on_dev || c->dict_page < 0)
            continue;
        size_t ob = c->is_string ? ((size_t)c->dict.n + 1) * 4 : 0;
        size_t db = c->is_string ? ob + (size_t)c->dict.offsets[c->dict.n]
                                 : (size_t)c->dict.n * (size_t)pa_type_bytes(c->d.type);
        void *h = NULL;
        if ((rc = pinned_alloc(x, db, &h, err)) == PA_OK && (rc = dev_alloc(x, c, db, &ddict[r], err)) == PA_OK) {
            if (c->is_string) {
                memcpy(h, c->dict.offsets, ob);
                memcpy((uint8_t *)h + ob, c->dict.bytes, db - ob);
            } else {
                memcpy(h, c->dict.values, db);
            }
            dsts[n_copies] = ddict[r], srcs[n_copies] = h, sizes[n_copies++] = db;
        }
    }
    /* The jobs: stored bytes into raw, compressed ones decompressed into unc
     * (v2 levels, never compressed, copied there from the host), scratch for
     * dictionary indices. */
    if (rc == PA_OK) {
        uint64_t at_unc = 0, at_scr = 0;
        size_t k = 0, kc = 0, span = 0;
        placer pl2 = {NULL, 0};
        for (size_t i = 0; i < x->n_pages; i++) {
            const dpage *p = &x->pages[i];
            const dcol *c = &x->cols[p->col];
            if (p->dict || !c->on_dev)
                continue;
            bool on_host = p->compressed && !c->dev_codec, ext;   /* p->data: decompressed, pinned */
            uint64_t up = on_host ? p->data_len : p->body_len;
            const uint8_t *from = on_host ? p->data : p->body;
            uint8_t *stored = raw + place(&pl2, from, up, !on_host, &ext), *page = stored;
            if (ext) {   /* the span's copy reaches to this page's end */
                sizes[span] = (size_t)(stored + up - (uint8_t *)dsts[span]);
            } else {
                span = n_copies;
                dsts[n_copies] = stored, srcs[n_copies] = from, sizes[n_copies++] = (size_t)up;
            }
            char *w = where + k * WHERE_BYTES;
            snprintf(w, WHERE_BYTES, "%s: row group %u column %s page %u (at byte %llu)", SCAN_WHERE(s, x->u),
                     c->name, p->index, (unsigned long long)p->offset);
            kn_page_job *j = &jobs[k++];
            memset(j, 0, sizeof *j);
            j->where = w;
            page_view(p, &j->page);
            j->page.data = NULL;
            j->page.levels = NULL;
            if (p->compressed && !on_host) {
                uint64_t lv = 0;
                if (p->h.type == PQ_PAGE_DATA_PAGE_V2)
                    lv = (uint64_t)p->h.data_page_v2.definition_levels_byte_length +
                         (uint64_t)p->h.data_page_v2.repetition_levels_byte_length;
                page = unc + at_unc;
                at_unc += p->data_len;
                if (lv)
                    dsts[n_copies] = page, srcs[n_copies] = p->body, sizes[n_copies++] = (size_t)lv;
                cjobs[kc++] = (kn_codec_job){stored + lv, p->body_len - lv, page + lv, p->data_len - lv,
                                             c->cm->codec, 0, w};
                j->src_size = p->data_len;
            } else {
                j->src_size = up;
            }
            j->src = page;
            j->uncompressed_size = (uint64_t)p->h.uncompressed_page_size;
            j->codec = KN_CODEC_UNCOMPRESSED;
            j->col = c->d.kc;
            if ((j->page.encoding == PQ_ENC_PLAIN_DICTIONARY || j->page.encoding == PQ_ENC_RLE_DICTIONARY) &&
                c->is_string)
                j->dict = (kn_dict){NULL, ddict[p->col], (uint8_t *)ddict[p->col] + (c->dict.n + 1) * 4, c->dict.n};
            else if (j->page.encoding == PQ_ENC_PLAIN_DICTIONARY || j->page.encoding == PQ_ENC_RLE_DICTIONARY)
                j->dict = (kn_dict){ddict[p->col], NULL, NULL, c->dict.n};
            if ((j->scratch_size = scratch_bytes(x, p)) > 0) {
                j->scratch = scr + at_scr;
                at_scr += j->scratch_size;
            }
            j->out = c->is_string ? (kn_out){NULL, c->dv_offsets, c->dv_values, c->dv_validity, c->d.rows, c->dv_bytes_cap}
                                  : (kn_out){c->dv_values, NULL, NULL, c->dv_validity, c->d.rows, 0};
            j->row_offset = (uint64_t)p->pos;
        }
        dsts[n_copies] = djobs, srcs[n_copies] = jobs, sizes[n_copies++] = np * sizeof *jobs;
        if (nc)
            dsts[n_copies] = dcjobs, srcs[n_copies] = cjobs, sizes[n_copies++] = nc * sizeof *cjobs;
        rc = dv_copy_batch_async(x->w->stream, n_copies, dsts, srcs, sizes, DV_COPY_H2D, err);
    }
    /* The read buffer is read by the copies just queued: handed back in stream order. */
    if (rc == PA_OK) {
        dv_host_free_async(x->w->stream, x->u->buf, NULL);
        x->u->buf = NULL;
        x->u->buf_len = 0;
    }
    if (rc == PA_OK && nc)
        rc = kn_decompress_pages(&kn, dcjobs, (int64_t)nc, err);
    if (rc == PA_OK)
        rc = kn_decode_pages(&kn, djobs, (int64_t)np, err);
    if (rc == PA_OK) {
        pa_counter_add(PA_CTR_PAGES_DEVICE, (int64_t)np);
        pa_counter_add(PA_CTR_PAGES_HOST_DECOMPRESSED, (int64_t)host_unc);
    }
    /* The chunk's columns: the decoded ones themselves, or the rows kept,
     * through one index array for every column laid out alike (all of them
     * unless the page index picked different pages per column). */
    const dcol *idx_of = NULL;
    int32_t *didx = NULL;
    for (int r = 0; r < s->n_rcols && rc == PA_OK; r++) {
        dcol *c = &x->cols[r];
        if (!c->on_dev)
            continue;
        if (!sel) {
            if ((rc = dv_chunk_adopt(x->chunk, c->dv_values, err)) != PA_OK)
                break;
            vals[r] = c->dv_values;
            c->dv_values = NULL;
            if (c->dv_offsets) {
                if ((rc = dv_chunk_adopt(x->chunk, c->dv_offsets, err)) != PA_OK)
                    break;
                offs[r] = c->dv_offsets;
                c->dv_offsets = NULL;
            }
            if (c->dv_validity) {
                if ((rc = dv_chunk_adopt(x->chunk, c->dv_validity, err)) != PA_OK)
                    break;
                valid[r] = c->dv_validity;
                c->dv_validity = NULL;
            }
            continue;
        }
        if (!idx_of || idx_of->d.n_segs != c->d.n_segs ||
            memcmp(idx_of->d.segs, c->d.segs, c->d.n_segs * sizeof *c->d.segs) != 0) {
            int32_t *idx = NULL;
            if (didx)
                dv_free_async(x->w->stream, didx, NULL);
            didx = NULL;
            if ((rc = pinned_alloc(x, (size_t)n * 4, (void **)&idx, err)) != PA_OK ||
                (rc = dev_alloc(x, c, (size_t)n * 4, (void **)&didx, err)) != PA_OK)
                break;
            positions(c, sel, n, idx);
            if ((rc = dv_copy_async(x->w->stream, didx, idx, (size_t)n * 4, DV_COPY_H2D, err)) != PA_OK)
                break;
            idx_of = c;
        }
        pa_column src = {.type = c->d.type, .length = (int64_t)c->d.rows, .data = c->dv_values,
                         .offsets = c->dv_offsets, .validity = c->dv_validity};
        pa_column dst = {.type = c->d.type};
        /* Strings kept: at most the column's bound of bytes (the host knows no more). */
        size_t vb = c->is_string ? (size_t)c->dv_bytes_cap : (size_t)n * (size_t)pa_type_bytes(c->d.type);
        if ((rc = upload_alloc(x, c, vb, &dst.data, err)) == PA_OK &&
            (!c->is_string || (rc = upload_alloc(x, c, ((size_t)n + 1) * 4, (void **)&dst.offsets, err)) == PA_OK) &&
            (!c->dv_validity || (rc = upload_alloc(x, c, ((size_t)n + 7) / 8, (void **)&dst.validity, err)) == PA_OK))
            rc = kn_take(&kn, &src, didx, (int64_t)n, &dst, err);
        vals[r] = dst.data;
        offs[r] = dst.offsets;
        valid[r] = dst.validity;
    }
    if (didx)
        dv_free_async(x->w->stream, didx, NULL);
fail:
done:
    for (int r = 0; ddict && r < s->n_rcols; r++)
        if (ddict[r])
            dv_free_async(x->w->stream, ddict[r], NULL);
    pa_free(ddict);
    for (int i = 0; i < ds.n; i++)
        dv_free_async(x->w->stream, ds.p[i], NULL);
    pa_free(dsts);
    pa_free((void *)srcs);
    pa_free(sizes);
    return rc;
}

/* ------------------------------------------------------------- layouts
 *
 * Output columns a file does not hold as the scan's type: values of another
 * type (widened: INTEGER to BIGINT, to DOUBLE, DECIMAL to a larger scale)
 * converted after compaction, and columns made for every row (the file's
 * partition value, or NULL where union_by_name finds no such column), in
 * the memory the decoded columns use (chunk or pinned staging), so the
 * upload below takes them along. */

static int64_t pow10i(int k)
{
    int64_t p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* A DATE or timestamp column of another file's type as a later one in
 * pq_type_widen's order: days to microseconds or nanoseconds, microseconds
 * to nanoseconds, TIMESTAMP to TIMESTAMPTZ as the same UTC value. A value
 * beyond the wider type's range is an error naming file, row group and
 * column (valid rows only: NULL slots hold anything). */
static int convert_time(const dec *x, const dcol *c, pa_type to, void *dst, uint64_t n, pa_err *err)
{
    const pa_type_id from = c->d.type.id;
    const int32_t *i32 = c->d.values;
    const int64_t *i64 = c->d.values;
    int64_t *o = dst;
    int64_t m = from == PA_TYPE_DATE ? PA_USEC_PER_DAY : 1;
    if (to.id == PA_TYPE_TIMESTAMP_NS)
        m *= 1000;
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = from == PA_TYPE_DATE ? i32[i] : i64[i];
        bool valid = !c->d.validity || ((c->d.validity[i >> 3] >> (i & 7)) & 1);
        if (__builtin_mul_overflow(v, m, &o[i])) {
            if (valid)
                return pa_error(err, PA_EOVERFLOW, "%s: row group %u: column %s: %s value out of range for type %s",
                                SCAN_WHERE(x->s, x->u), c->name, pa_type_name(from), pa_type_name(to.id));
            o[i] = 0;
        }
    }
    return PA_OK;
}

static void convert_values(const void *src, pa_type from, void *dst, pa_type to, uint64_t n)
{
    const int32_t *i32 = src;
    const int64_t *i64 = src;
    if (to.id == PA_TYPE_DOUBLE && from.id == PA_TYPE_REAL) {   /* the same doubles */
        memcpy(dst, src, (size_t)n * 8);
        return;
    }
    if (to.id == PA_TYPE_DOUBLE) {
        double *d = dst;
        double div = 1.0;   /* 10^scale (exact up to 10^22) */
        for (int j = 0; from.id == PA_TYPE_DECIMAL && j < from.scale; j++)
            div *= 10.0;
        const __int128 *i128 = src;
        for (uint64_t i = 0; i < n; i++)
            d[i] = (from.id == PA_TYPE_INTEGER     ? (double)i32[i]
                    : pa_type_bytes(from) == 16 ? (double)i128[i]
                                                : (double)i64[i]) /
                   div;
        return;
    }
    /* BIGINT or DECIMAL from INTEGER, BIGINT or DECIMAL: times 10^k, in
     * unsigned arithmetic (NULL slots hold anything). The wider type holds
     * every value (pq_type_widen's precision), so nothing overflows. */
    int k = (to.id == PA_TYPE_DECIMAL ? to.scale : 0) - (from.id == PA_TYPE_DECIMAL ? from.scale : 0);
    if (pa_type_bytes(to) == 16) {   /* DECIMAL(19..38) */
        unsigned __int128 m = 1;
        for (int j = 0; j < k; j++)
            m *= 10;
        const __int128 *i128 = src;
        __int128 *o = dst;
        for (uint64_t i = 0; i < n; i++) {
            __int128 v = from.id == PA_TYPE_INTEGER ? i32[i] : pa_type_bytes(from) == 16 ? i128[i] : i64[i];
            o[i] = (__int128)((unsigned __int128)v * m);
        }
        return;
    }
    uint64_t m = (uint64_t)pow10i(k > 0 ? k : 0);
    int64_t *o = dst;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = from.id == PA_TYPE_INTEGER ? (uint64_t)(int64_t)i32[i] : (uint64_t)i64[i];
        o[i] = (int64_t)(v * m);
    }
}

static int make_constant(dec *x, int r, uint64_t n, pa_err *err)
{
    pq_scan *s = x->s;
    dcol *c = &x->cols[r];
    const scan_rcol *rc = &s->rcols[r];
    const char *v = rc->src[x->u->file] == SCAN_SRC_PART ? scan__part_value(s, r, x->u->file) : NULL;
    c->name = rc->name;
    c->output = true;
    c->is_string = pa_type_is_varlen(rc->type.id);
    c->d.type = rc->type;
    int rc2;
    size_t vb = (size_t)pa_type_bytes(rc->type);
    size_t len = c->is_string && v ? strlen(v) : 0;
    size_t size = c->is_string ? len * (size_t)n : vb * (size_t)n;
    if ((rc2 = col_alloc(x, c, size ? size : 1, &c->d.values, err)) != PA_OK)
        return rc2;
    if (c->is_string) {
        if ((rc2 = col_alloc(x, c, ((size_t)n + 1) * 4, (void **)&c->d.offsets, err)) != PA_OK)
            return rc2;
        if ((uint64_t)len * n > INT32_MAX)
            return pa_error(err, PA_EUNSUPPORTED, "%s: row group %u: partition value of %s repeated %llu times holds more than 2 GiB",
                            SCAN_WHERE(s, x->u), rc->name, (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) {
            if (len)   /* (v is NULL for a NULL) */
                memcpy((uint8_t *)c->d.values + i * len, v, len);
            c->d.offsets[i] = (int32_t)(i * len);
        }
        c->d.offsets[n] = (int32_t)(n * len);
    } else if (v) {
        int64_t q = 0;
        if (rc->type.id == PA_TYPE_DATE) {
            int32_t d = 0;
            pa_date_parse(v, &d, NULL);
            q = d;
        } else if (rc->type.id == PA_TYPE_TIMESTAMP || rc->type.id == PA_TYPE_TIMESTAMPTZ) {
            bool exact;
            pq_time_parse(v, rc->type.id, &q, &exact);   /* pq_hive_detect checked it */
        } else {
            q = strtoll(v, NULL, 10);
        }
        for (uint64_t i = 0; i < n; i++) {
            if (vb == 4)
                ((int32_t *)c->d.values)[i] = (int32_t)q;
            else
                ((int64_t *)c->d.values)[i] = q;
        }
    } else {
        memset(c->d.values, 0, size);
    }
    c->d.validity = NULL;
    if (!v) {
        if ((rc2 = col_alloc(x, c, ((size_t)n + 7) / 8, (void **)&c->d.validity, err)) != PA_OK)
            return rc2;
        memset(c->d.validity, 0, ((size_t)n + 7) / 8);
    }
    c->used = true;
    return PA_OK;
}

static int layout_columns(dec *x, uint64_t n, pa_err *err)
{
    pq_scan *s = x->s;
    for (int r = 0; r < s->n_rcols; r++) {
        dcol *c = &x->cols[r];
        const scan_rcol *rc = &s->rcols[r];
        if (!rc->output)
            continue;
        if (rc->src[x->u->file] != SCAN_SRC_FILE) {
            int e = make_constant(x, r, n, err);
            if (e != PA_OK)
                return e;
            continue;
        }
        pa_type t = c->d.type;
        if (!c->used || c->on_dev || (t.id == rc->type.id && t.precision == rc->type.precision && t.scale == rc->type.scale))
            continue;
        void *dst;
        int e = col_alloc(x, c, (size_t)(n ? n : 1) * (size_t)pa_type_bytes(rc->type), &dst, err);
        if (e != PA_OK)
            return e;
        if (pa_type_is_time64(rc->type.id)) {
            if ((e = convert_time(x, c, rc->type, dst, n, err)) != PA_OK)
                return e;
        } else {
            convert_values(c->d.values, t, dst, rc->type, n);
        }
        c->d.values = dst;
        c->d.type = rc->type;
    }
    return PA_OK;
}

static int assemble(dec *x, const uint32_t *sel, uint64_t n, dv_chunk **out, pa_err *err)
{
    pq_scan *s = x->s;
    int rc = PA_OK;
    size_t nr = (size_t)(s->n_rcols ? s->n_rcols : 1);
    void **vals = pa_calloc(nr, sizeof *vals);
    int32_t **offs = pa_calloc(nr, sizeof *offs);
    uint8_t **valid = pa_calloc(nr, sizeof *valid);
    if (!vals || !offs || !valid) {
        rc = pa_error(err, PA_ENOMEM, "out of memory assembling a chunk");
        goto done;
    }
    if ((rc = layout_columns(x, n, err)) != PA_OK)
        goto done;
    for (int r = 0; r < s->n_rcols; r++) {
        vals[r] = x->cols[r].d.values;
        offs[r] = x->cols[r].d.offsets;
        valid[r] = x->cols[r].d.validity;
    }
    if (!dv_host_visible(s->dev) && (rc = upload_columns(x, n, vals, offs, valid, err)) != PA_OK)
        goto done;
    if (x->n_dev_cols > 0 && ((rc = device_columns(x, sel, n, vals, offs, valid, err)) != PA_OK ||
                              (rc = dv_chunk_set_ready(x->chunk, x->w->stream, err)) != PA_OK))
        goto done;
    x->chunk->length = (int64_t)n;
    for (int i = 0; i < s->n_out; i++) {
        int r = s->out_rcol[i];
        pa_column *col = &x->chunk->columns[i];
        col->type = s->rcols[r].type;
        col->length = (int64_t)n;
        col->data = vals[r];
        col->offsets = x->cols[r].is_string ? offs[r] : NULL;
        col->validity = valid[r];
        const int32_t *ho = x->cols[r].d.offsets;   /* the host's copy */
        if (x->cols[r].is_string && ho && ho[0] == 0)
            pa_column_set_bytes(col, ho[n]);
    }
    *out = x->chunk;
    x->chunk = NULL;
done:
    pa_free(vals);
    pa_free(offs);
    pa_free(valid);
    return rc;
}

static int setup_columns(dec *x, pa_err *err)
{
    pq_scan *s = x->s;
    scan_unit *u = x->u;
    const pq_file_meta *m = s->files[u->file].meta;
    uint64_t whole_pages = 0;
    for (int r = 0; r < s->n_rcols; r++) {
        dcol *c = &x->cols[r];
        c->dict_page = -1;
        if (!(c->used = u->ucols[r].used))
            continue;
        const pq_column_desc *d = &s->rcols[r].desc[u->file];
        c->cm = &m->row_groups[u->rg].columns[d->leaf_index].meta_data;
        c->name = s->rcols[r].name;
        c->output = s->rcols[r].output;
        c->is_string = pa_type_is_varlen(d->type.id);
        c->d.type = d->type;
        c->d.kc = (kn_column){d->physical_type, d->type_length, d->type, m->leaves[d->leaf_index].max_def_level, 0};
        size_t before = x->n_pages;
        int rc = list_pages(x, r, err);
        if (rc != PA_OK)
            return rc;
        c->first_page = before;
        c->end_page = x->n_pages;
        if (u->ucols[r].whole)
            whole_pages += x->n_pages - before - (c->dict_page >= 0);
    }
    pthread_mutex_lock(&s->mu);
    s->stats.pages += whole_pages;
    pthread_mutex_unlock(&s->mu);
    return PA_OK;
}

int scan__decode_unit(pq_scan *s, scan_wctx *w, scan_unit *u, dv_chunk **out, pa_err *err)
{
    dec x;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.w = w;
    x.u = u;
    pthread_mutex_init(&x.mu, NULL);
    *out = NULL;
    uint32_t *sel = NULL;
    int *ccols = NULL;
    uint64_t n = 0, t0, t1, t2;
    int rc = PA_OK;
    if (!(x.cols = pa_calloc((size_t)(s->n_rcols ? s->n_rcols : 1), sizeof *x.cols))) {
        rc = pa_error(err, PA_ENOMEM, "out of memory decoding");
        goto done;
    }
    PA_TRY(rc = dv_chunk_create(s->dev, s->n_out, &x.chunk, err));
    PA_TRY(rc = setup_columns(&x, err));
    pick_device_columns(&x);
    PA_TRY(rc = prepare_pages(&x, err));

    t0 = t1 = pa_now_ns();
    if (by_column(&x)) {
        PA_TRY(rc = decode_by_column(&x, err));   /* its time counts as decoding */
    } else {
        pa_parallel_for(w->tp, x.n_pages, decompress_task, &x);
        PA_TRY(rc = batch_result(&x, err));
        t1 = pa_now_ns();
        pa_parallel_for(w->tp, x.n_pages, dict_task, &x);
        PA_TRY(rc = batch_result(&x, err));
        pa_parallel_for(w->tp, x.n_pages, measure_task, &x);
        PA_TRY(rc = batch_result(&x, err));
        for (int r = 0; r < s->n_rcols; r++)
            if (x.cols[r].on_dev && x.cols[r].is_string)
                dev_string_bound(&x, &x.cols[r]);
        for (int r = 0; r < s->n_rcols; r++)
            if (x.cols[r].used)
                PA_TRY(rc = layout_column(&x, r, err));
        PA_TRY(rc = decode_pages(&x, err));
        for (int r = 0; r < s->n_rcols; r++)
            if (x.cols[r].used)
                PA_TRY(rc = fixup_column(&x, &x.cols[r], &s->rcols[r].desc[u->file], err));
    }
    t2 = pa_now_ns();

    scan_dcol **dc = pa_calloc((size_t)(s->n_rcols ? s->n_rcols : 1), sizeof *dc);
    ccols = pa_calloc((size_t)(s->n_rcols ? s->n_rcols : 1), sizeof *ccols);
    if (!dc || !ccols) {
        pa_free(dc);
        rc = pa_error(err, PA_ENOMEM, "out of memory filtering");
        goto fail;
    }
    for (int r = 0; r < s->n_rcols; r++)
        dc[r] = x.cols[r].used && !x.cols[r].on_dev ? &x.cols[r].d : NULL;   /* no predicate reads on_dev */
    rc = scan__select(s, w, u, dc, &sel, &n, err);
    pa_free(dc);
    if (rc != PA_OK)
        goto fail;
    if (sel) {
        compact_ctx cc = {&x, ccols, sel, n};
        size_t k = 0;
        for (int r = 0; r < s->n_rcols; r++)
            if (x.cols[r].used && x.cols[r].output && !x.cols[r].on_dev)
                ccols[k++] = r;
        pa_parallel_for(w->tp, k, compact_task, &cc);
    }
    pthread_mutex_lock(&s->mu);
    s->stats.ns_decompress += t1 - t0;
    s->stats.ns_decode += t2 - t1;
    s->stats.ns_filter += pa_now_ns() - t2;
    for (uint32_t k = 0; k < u->rows.n; k++)
        s->stats.rows_decoded += (uint64_t)(u->rows.hi[k] - u->rows.lo[k]);
    pthread_mutex_unlock(&s->mu);
    if (n > 0)
        rc = assemble(&x, sel, n, out, err);
fail:
done:
    pa_free(ccols);
    /* A failure after device work was queued on the unit's buffers (the
     * chunk's, which go now): they return to the pool once the stream has
     * passed that work. Never a host wait here: on sim this thread may be
     * one of the executor threads the stream's work needs. */
    if (rc != PA_OK && x.n_dev_cols > 0 && x.chunk && w->stream)
        dv_chunk_release(x.chunk, w->stream);
    else
        dv_chunk_destroy(x.chunk);
    if (x.cols)
        for (int r = 0; r < s->n_rcols; r++) {
            pa_free(x.cols[r].walked);
            pa_free(x.cols[r].d.segs);
            if (x.cols[r].dv_values)   /* not adopted by a chunk: after the stream's work on it */
                dv_free_async(w->stream, x.cols[r].dv_values, NULL);
            if (x.cols[r].dv_offsets)
                dv_free_async(w->stream, x.cols[r].dv_offsets, NULL);
            if (x.cols[r].dv_validity)
                dv_free_async(w->stream, x.cols[r].dv_validity, NULL);
        }
    pa_free(x.cols);
    pthread_mutex_lock(&s->pool_mu);
    for (size_t i = 0; i < x.n_host; i++)
        pool_give(s, x.host[i], x.host_size[i]);
    pthread_mutex_unlock(&s->pool_mu);
    pa_free(x.host);
    pa_free(x.host_size);
    for (size_t i = 0; i < x.n_pinned; i++) {   /* staging a queued upload may still read */
        if (w->stream)
            dv_host_free_async(w->stream, x.pinned[i], NULL);
        else
            dv_host_free(s->dev, x.pinned[i]);
    }
    pa_free(x.pinned);
    pa_free(x.pages);
    pthread_mutex_destroy(&x.mu);
    return rc;
}

/*
 * scan_plan.c - planning one unit (row group): the page index of the
 * predicate columns gives the surviving row ranges; every read column then
 * reads either its whole column chunk or its dictionary page plus the data
 * pages that overlap those ranges (OffsetIndex); the byte ranges are
 * coalesced by io_plan_ranges into reads that land in one pinned buffer.
 */
#include "storage/scan_int.h"

#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------- row ranges */

int scan__ranges_add(scan_ranges *r, int64_t lo, int64_t hi, pa_err *err)
{
    if (lo >= hi)
        return PA_OK;
    if (r->n && r->hi[r->n - 1] >= lo) {   /* callers add in order: merge */
        if (hi > r->hi[r->n - 1])
            r->hi[r->n - 1] = hi;
        return PA_OK;
    }
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? r->cap * 2 : 8;
        int64_t *nl = pa_realloc(r->lo, nc * sizeof *nl);
        if (nl)
            r->lo = nl;
        int64_t *nh = nl ? pa_realloc(r->hi, nc * sizeof *nh) : NULL;
        if (!nh)
            return pa_error(err, PA_ENOMEM, "out of memory for row ranges");
        r->hi = nh;
        r->cap = nc;
    }
    r->lo[r->n] = lo;
    r->hi[r->n] = hi;
    r->n++;
    return PA_OK;
}

int scan__ranges_intersect(scan_ranges *a, const scan_ranges *b, pa_err *err)
{
    scan_ranges out = {0};
    uint32_t i = 0, j = 0;
    int rc = PA_OK;
    while (i < a->n && j < b->n && rc == PA_OK) {
        int64_t lo = a->lo[i] > b->lo[j] ? a->lo[i] : b->lo[j];
        int64_t hi = a->hi[i] < b->hi[j] ? a->hi[i] : b->hi[j];
        rc = scan__ranges_add(&out, lo, hi, err);
        if (a->hi[i] < b->hi[j])
            i++;
        else
            j++;
    }
    if (rc != PA_OK) {
        scan__ranges_free(&out);
        return rc;
    }
    scan__ranges_free(a);
    *a = out;
    return PA_OK;
}

void scan__ranges_free(scan_ranges *r)
{
    pa_free(r->lo);
    pa_free(r->hi);
    memset(r, 0, sizeof *r);
}

/* ----------------------------------------------------------- page index */

typedef struct col_index {
    pq_offset_index *oi;
    pq_column_index *ci;
    bool read;
    bool ci_bad;              /* the column index is malformed: pruned without it */
} col_index;

static int read_struct(pq_scan *s, scan_unit *u, const char *col, const char *what, int64_t off, int32_t len,
                       uint8_t **buf, pa_err *err)
{
    *buf = pa_malloc(len > 0 ? (size_t)len : 1);
    if (!*buf)
        return pa_error(err, PA_ENOMEM, "%s: row group %u column %s: out of memory for its %s", SCAN_WHERE(s, u),
                        col, what);
    pa_err e2;
    pa_err_init(&e2);
    int rc = io_read(s->io, s->files[u->file].io, (uint64_t)off, (size_t)len, *buf, &e2);
    if (rc != PA_OK)
        pa_error(err, rc, "%s: row group %u column %s: reading its %s: %s", SCAN_WHERE(s, u), col, what, e2.msg);
    pa_err_close(&e2);
    if (rc == PA_OK) {
        pthread_mutex_lock(&s->mu);
        s->stats.bytes_read += (uint64_t)len;
        s->stats.read_requests++;
        pthread_mutex_unlock(&s->mu);
    }
    return rc;
}

/* Read and check the offset index (and, when want_ci, the column index) of
 * read column r. No index: ix stays empty. */
static int load_index(pq_scan *s, scan_unit *u, int r, bool want_ci, col_index *ix, pa_err *err)
{
    const pq_column_desc *d = &s->rcols[r].desc[u->file];
    const pq_file_meta *m = s->files[u->file].meta;
    const pq_column_chunk *cc = &m->row_groups[u->rg].columns[d->leaf_index];
    const pq_column_meta *cm = &cc->meta_data;
    const char *name = s->rcols[r].name;
    char what[512];
    uint8_t *buf = NULL;
    int rc = PA_OK;
    if (!ix->read) {
        ix->read = true;
        if (!cc->has_offset_index_offset || !cc->has_offset_index_length)
            return PA_OK;
        snprintf(what, sizeof what, "%s: row group %u column %s: offset index", SCAN_WHERE(s, u), name);
        PA_TRY(rc = read_struct(s, u, name, "offset index", cc->offset_index_offset, cc->offset_index_length, &buf, err));
        PA_TRY(rc = pq_offset_index_decode(buf, (size_t)cc->offset_index_length, what,
                                           (uint64_t)cc->offset_index_offset, &ix->oi, err));
        pa_free(buf);
        buf = NULL;
        /* Pages must tile the chunk in row order. */
        const pq_offset_index *oi = ix->oi;
        int64_t start = pq_chunk_start(cm), end = start + cm->total_compressed_size;
        for (uint32_t j = 0; j < oi->n_page_locations; j++) {
            const pq_page_location *pl = &oi->page_locations[j];
            bool bad = pl->offset < start || pl->compressed_page_size <= 0 ||
                       pl->compressed_page_size > end - pl->offset ||
                       (j == 0 ? pl->first_row_index != 0
                               : pl->first_row_index <= oi->page_locations[j - 1].first_row_index ||
                                     pl->offset < oi->page_locations[j - 1].offset +
                                                      oi->page_locations[j - 1].compressed_page_size) ||
                       pl->first_row_index >= u->num_rows;
            if (bad) {
                rc = pa_error(err, PA_ECORRUPT, "%s: page %u (offset %lld, %d bytes, first row %lld) does not fit "
                              "the column chunk", what, j, (long long)pl->offset, pl->compressed_page_size,
                              (long long)pl->first_row_index);
                goto fail;
            }
        }
        if (oi->n_page_locations == 0) {
            rc = pa_error(err, PA_ECORRUPT, "%s: no pages", what);
            goto fail;
        }
    }
    /* The column index only prunes pages: a malformed one (parquetjs
     * writes ColumnIndex without its required null_pages) is left out, as
     * DuckDB and arrow leave it, and the pages are read. Out of memory and
     * read errors still fail. */
    if (want_ci && ix->oi && !ix->ci && !ix->ci_bad && cc->has_column_index_offset && cc->has_column_index_length) {
        snprintf(what, sizeof what, "%s: row group %u column %s: column index", SCAN_WHERE(s, u), name);
        PA_TRY(rc = read_struct(s, u, name, "column index", cc->column_index_offset, cc->column_index_length, &buf, err));
        pa_err e2;
        pa_err_init(&e2);
        rc = pq_column_index_decode(buf, (size_t)cc->column_index_length, what, (uint64_t)cc->column_index_offset,
                                    &ix->ci, &e2);
        if (rc == PA_ENOMEM) {
            pa_error(err, rc, "%s", e2.msg);
            pa_err_close(&e2);
            goto fail;
        }
        pa_err_close(&e2);
        const pq_column_index *ci = ix->ci;
        uint32_t n = ix->oi->n_page_locations;
        if (rc != PA_OK || !ci || ci->n_pages != n || ci->n_min_values != n || ci->n_max_values != n ||
            !ci->null_pages || (ci->null_counts && ci->n_null_counts != n) ||
            (ci->nan_counts && ci->n_nan_counts != n)) {
            pq_column_index_destroy(ix->ci);
            ix->ci = NULL;
            ix->ci_bad = true;
            rc = PA_OK;
        }
    }
fail:
    pa_free(buf);
    return rc;
}

static int64_t page_rows(const pq_offset_index *oi, uint32_t j, int64_t num_rows)
{
    int64_t next = j + 1 < oi->n_page_locations ? oi->page_locations[j + 1].first_row_index : num_rows;
    return next - oi->page_locations[j].first_row_index;
}

/* Rows of u that predicate k may match, from its column's page index. */
static int pred_ranges(pq_scan *s, scan_unit *u, int k, const col_index *ix, scan_ranges *out, pa_err *err)
{
    const scan_pred *p = &s->preds[k];
    const pq_column_desc *d = &s->rcols[p->col].desc[u->file];
    const pq_offset_index *oi = ix->oi;
    const pq_column_index *ci = ix->ci;
    pq_bin none = {NULL, 0};
    for (uint32_t j = 0; j < oi->n_page_locations; j++) {
        int64_t rows = page_rows(oi, j, u->num_rows);
        bool nullp = ci->null_pages[j];
        bool keep = scan__may_match(p, d, nullp ? none : ci->min_values[j], nullp ? none : ci->max_values[j], false,
                                    ci->null_counts ? ci->null_counts[j] : -1, rows,
                                    ci->nan_counts ? ci->nan_counts[j] : -1, nullp);
        if (keep) {
            int64_t lo = oi->page_locations[j].first_row_index;
            int rc = scan__ranges_add(out, lo, lo + rows, err);
            if (rc != PA_OK)
                return rc;
        }
    }
    return PA_OK;
}

static bool rcol_needed(const pq_scan *s, int r)
{
    if (s->rcols[r].output)
        return true;
    if (!s->opt.filter_rows)
        return false;
    for (int k = 0; k < s->n_preds; k++)
        if (s->preds[k].col == r)
            return true;
    return false;
}

static int add_range(scan_unit *u, size_t *cap, int64_t off, int64_t len, pa_err *err)
{
    if (u->n_ranges == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        io_range *nr = pa_realloc(u->ranges, nc * sizeof *nr);
        if (!nr)
            return pa_error(err, PA_ENOMEM, "out of memory planning reads");
        u->ranges = nr;
        *cap = nc;
    }
    u->ranges[u->n_ranges++] = (io_range){(uint64_t)off, (uint64_t)len};
    return PA_OK;
}

/* Which pages of column r to read, and their byte ranges. */
static int plan_column(pq_scan *s, scan_unit *u, int r, const col_index *ix, size_t *cap, pa_err *err)
{
    const pq_column_desc *d = &s->rcols[r].desc[u->file];
    const pq_column_meta *cm = &s->files[u->file].meta->row_groups[u->rg].columns[d->leaf_index].meta_data;
    scan_ucol *uc = &u->ucols[r];
    uc->used = true;
    uc->first_range = (uint32_t)u->n_ranges;
    uc->start = pq_chunk_start(cm);
    const pq_offset_index *oi = ix->oi;
    if (u->all_rows || !oi) {
        uc->whole = true;
        uc->len = cm->total_compressed_size;
        return add_range(u, cap, uc->start, uc->len, err);
    }
    uc->n_pages = oi->n_page_locations;
    uc->len = oi->page_locations[0].offset - uc->start;   /* dictionary page(s) */
    uc->picks = pa_calloc(oi->n_page_locations, sizeof *uc->picks);
    if (!uc->picks)
        return pa_error(err, PA_ENOMEM, "out of memory planning reads");
    int rc = uc->len > 0 ? add_range(u, cap, uc->start, uc->len, err) : PA_OK;
    uint32_t k = 0;
    for (uint32_t j = 0; j < oi->n_page_locations && rc == PA_OK; j++) {
        int64_t lo = oi->page_locations[j].first_row_index, hi = lo + page_rows(oi, j, u->num_rows);
        while (k < u->rows.n && u->rows.hi[k] <= lo)
            k++;
        if (k == u->rows.n || u->rows.lo[k] >= hi)
            continue;   /* no surviving row in this page */
        scan_pick *pk = &uc->picks[uc->n_picks++];
        pk->offset = oi->page_locations[j].offset;
        pk->size = oi->page_locations[j].compressed_page_size;
        pk->first_row = lo;
        pk->rows = hi - lo;
        rc = add_range(u, cap, pk->offset, pk->size, err);
    }
    return rc;
}

/* Device memory decoding u may take, from the footer: per column read, its
 * uncompressed bytes (string bytes, or the values) plus values or offsets
 * and validity for the rows kept; on a device that is not host-visible also
 * the stored bytes and the kernels' per-value scratch (scan_decode.c,
 * device_columns). An over-estimate for columns only filtered on, which
 * stay on the host; a corrupt size only makes the unit wait for memory. */
static uint64_t unit_mem_est(const pq_scan *s, const scan_unit *u)
{
    uint64_t rows = 0, est = 0;
    for (uint32_t k = 0; k < u->rows.n; k++)
        rows += (uint64_t)(u->rows.hi[k] - u->rows.lo[k]);
    bool dev = !dv_host_visible(s->dev);
    for (int r = 0; r < s->n_rcols; r++) {
        if (!u->ucols[r].used)
            continue;
        const pq_column_desc *d = &s->rcols[r].desc[u->file];
        const pq_column_meta *cm = &s->files[u->file].meta->row_groups[u->rg].columns[d->leaf_index].meta_data;
        uint64_t unc = cm->total_uncompressed_size > 0 ? (uint64_t)cm->total_uncompressed_size : 0;
        uint64_t stored = cm->total_compressed_size > 0 ? (uint64_t)cm->total_compressed_size : 0;
        pa_type t = s->rcols[r].type;
        uint64_t per = pa_type_is_varlen(t.id) ? 4 : (uint64_t)pa_type_bytes(t);
        uint64_t add = (unc < ((uint64_t)1 << 40) ? unc : (uint64_t)1 << 40) + rows * per + rows / 8 + 1024;
        if (dev)
            add += (stored < ((uint64_t)1 << 40) ? stored : (uint64_t)1 << 40) + rows * 8;
        est += add;
    }
    return est;
}

int scan__plan_unit(pq_scan *s, scan_unit *u, pa_err *err)
{
    int rc = PA_OK;
    size_t cap = 0;
    col_index *ix = pa_calloc((size_t)(s->n_rcols ? s->n_rcols : 1), sizeof *ix);
    u->ucols = pa_calloc((size_t)(s->n_rcols ? s->n_rcols : 1), sizeof *u->ucols);
    if (!ix || !u->ucols) {
        rc = pa_error(err, PA_ENOMEM, "out of memory planning reads");
        goto done;
    }
    u->planned = true;
    PA_TRY(rc = scan__ranges_add(&u->rows, 0, u->num_rows, err));
    if (s->opt.use_page_index) {
        for (int k = 0; k < s->n_preds; k++) {
            int r = s->preds[k].col;
            if (s->rcols[r].src[u->file] != SCAN_SRC_FILE)
                continue;
            PA_TRY(rc = load_index(s, u, r, true, &ix[r], err));
            if (!ix[r].ci)
                continue;
            scan_ranges pr = {0};
            rc = pred_ranges(s, u, k, &ix[r], &pr, err);
            if (rc == PA_OK)
                rc = scan__ranges_intersect(&u->rows, &pr, err);
            scan__ranges_free(&pr);
            if (rc != PA_OK)
                goto done;
        }
    }
    u->all_rows = u->rows.n == 1 && u->rows.lo[0] == 0 && u->rows.hi[0] == u->num_rows;
    if (u->rows.n == 0) {
        u->empty = true;
        pthread_mutex_lock(&s->mu);
        s->stats.row_groups_pruned++;
        pthread_mutex_unlock(&s->mu);
        goto done;
    }
    uint64_t pages = 0, pruned = 0;
    for (int r = 0; r < s->n_rcols; r++) {
        if (!rcol_needed(s, r) || s->rcols[r].src[u->file] != SCAN_SRC_FILE)
            continue;   /* (NULL and partition columns are made, not read) */
        if (!u->all_rows)
            PA_TRY(rc = load_index(s, u, r, false, &ix[r], err));
        PA_TRY(rc = plan_column(s, u, r, &ix[r], &cap, err));
        if (!u->ucols[r].whole) {
            pages += u->ucols[r].n_pages;
            pruned += u->ucols[r].n_pages - u->ucols[r].n_picks;
        }
    }
    pthread_mutex_lock(&s->mu);
    s->stats.pages += pages;
    s->stats.pages_pruned += pruned;
    pthread_mutex_unlock(&s->mu);
    u->mem_est = unit_mem_est(s, u);
    io_plan_options po = {s->opt.max_gap, s->opt.max_read};
    PA_TRY(rc = io_plan_ranges(u->ranges, u->n_ranges, &po, &u->plan, err));
done:
fail:
    for (int r = 0; ix && r < s->n_rcols; r++) {
        pq_offset_index_destroy(ix[r].oi);
        pq_column_index_destroy(ix[r].ci);
    }
    pa_free(ix);
    return rc;
}

int scan__alloc_unit_buffer(pq_scan *s, scan_unit *u, bool *pinned_full, pa_err *err)
{
    *pinned_full = false;
    const io_plan *pl = &u->plan;
    pa_free(u->range_at);   /* a retry after the pinned pool was full */
    u->range_at = pa_calloc(u->n_ranges ? u->n_ranges : 1, sizeof *u->range_at);
    uint64_t *base = pa_calloc(pl->n_reads ? pl->n_reads : 1, sizeof *base);
    int rc = PA_OK;
    if (!u->range_at || !base) {
        rc = pa_error(err, PA_ENOMEM, "out of memory planning reads");
        goto done;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < pl->n_reads; i++) {
        base[i] = total;
        total += pl->reads[i].length;
    }
    for (size_t i = 0; i < u->n_ranges; i++) {
        /* Decoding reads range i at buf[range_at[i]...]: it must lie in the
         * buffer. Cheap, and a broken plan then fails here, not as a read
         * past the pinned block (invisible to ASan). */
        if (pl->range_read[i] >= pl->n_reads ||
            pl->range_pos[i] + u->ranges[i].length > pl->reads[pl->range_read[i]].length) {
            rc = pa_error(err, PA_EINTERNAL, "%s: row group %u: byte range %zu (%llu bytes at offset %llu) "
                          "lies outside its planned read", SCAN_WHERE(s, u), i,
                          (unsigned long long)u->ranges[i].length, (unsigned long long)u->ranges[i].offset);
            goto done;
        }
        u->range_at[i] = base[pl->range_read[i]] + pl->range_pos[i];
    }
    if (total) {
        pa_err e2;
        pa_err_init(&e2);
        rc = dv_host_alloc(s->dev, (size_t)total, (void **)&u->buf, &e2);
        if (rc == PA_ENOMEM)
            *pinned_full = true;
        if (rc != PA_OK)
            pa_error(err, rc, "%s: row group %u: read buffer: %s", SCAN_WHERE(s, u), e2.msg);
        else
            u->buf_len = (size_t)total;
        pa_err_close(&e2);
    }
done:
    pa_free(base);
    return rc;
}

void scan__unit_release(pq_scan *s, scan_unit *u)
{
    if (u->buf)
        dv_host_free(s->dev, u->buf);
    u->buf = NULL;
    u->buf_len = 0;
    if (u->ucols)
        for (int r = 0; r < s->n_rcols; r++)
            pa_free(u->ucols[r].picks);
    pa_free(u->ucols);
    u->ucols = NULL;
    pa_free(u->ranges);
    u->ranges = NULL;
    u->n_ranges = 0;
    pa_free(u->range_at);
    u->range_at = NULL;
    pa_free(u->reqs);
    u->reqs = NULL;
    io_plan_free(&u->plan);
    scan__ranges_free(&u->rows);
}

/*
 * writer_meta.c - what the Parquet writer records about a column chunk:
 * ColumnMetaData (encodings and their page counts, sizes, offsets,
 * statistics with min/max cut to stats_truncate) and the ColumnIndex of its
 * pages (bounds, NULL pages and counts, boundary order).
 */
#include "storage/writer_int.h"

#include <string.h>

/* Room for one plain-encoded bound: 8 bytes, or a cut string + 4 for rounding up. */
static size_t bound_slot(const pq_writer *w) { return (size_t)w->opt.stats_truncate + 8; }

/* ColumnMetaData.statistics from the chunk's merged stats. */
static int chunk_statistics(wr_chunk *x, const wr_stats *st, pq_statistics *s, pa_err *err)
{
    pq_writer *w = x->w;
    memset(s, 0, sizeof *s);
    s->null_count = st->nulls;
    s->has_null_count = true;
    size_t slot = bound_slot(w);
    uint8_t *buf = pa_malloc(2 * slot);
    if (!buf)
        return pa_error(err, PA_ENOMEM, "parquet writer: out of memory for statistics");
    uint32_t lo_len, hi_len;
    bool lo_exact, hi_exact;
    int rc = PA_OK;
    if (wr__stats_bounds(x->c, st, w->opt.stats_truncate, buf, &lo_len, &lo_exact, buf + slot,
                         &hi_len, &hi_exact)) {
        if ((rc = wr__arena_dup(w, buf, lo_len, &s->min_value, err)) == PA_OK)
            rc = wr__arena_dup(w, buf + slot, hi_len, &s->max_value, err);
        s->is_min_value_exact = lo_exact;
        s->is_max_value_exact = hi_exact;
        s->has_is_min_value_exact = s->has_is_max_value_exact = true;
    }
    pa_free(buf);
    return rc;
}

/* Encode the chunk's ColumnIndex into *out; leaves it empty when some
 * non-NULL page has no bounds (only NaNs), as the index must then be omitted. */
int wr__column_index(wr_chunk *x, pq_buf *out, pa_err *err)
{
    pq_writer *w = x->w;
    uint32_t n = x->n_pages;
    size_t slot = bound_slot(w);
    pq_column_index ci;
    memset(&ci, 0, sizeof ci);
    uint8_t *buf = pa_malloc(2 * slot * n);
    ci.null_pages = pa_calloc(n, sizeof *ci.null_pages);
    ci.min_values = pa_calloc(n, sizeof *ci.min_values);
    ci.max_values = pa_calloc(n, sizeof *ci.max_values);
    ci.null_counts = pa_malloc(n * sizeof *ci.null_counts);
    int rc = PA_OK;
    if (!buf || !ci.null_pages || !ci.min_values || !ci.max_values || !ci.null_counts) {
        rc = pa_error(err, PA_ENOMEM, "parquet writer: out of memory for a column index");
        goto done;
    }
    ci.n_pages = ci.n_min_values = ci.n_max_values = ci.n_null_counts = n;
    static const uint8_t empty = 0;
    bool asc = true, desc = true;
    int prev = -1;
    for (uint32_t i = 0; i < n; i++) {
        const wr_page *pg = &x->pages[i];
        ci.null_counts[i] = pg->st.nulls;
        if (pg->s1 == pg->s0) {
            ci.null_pages[i] = true;
            ci.min_values[i] = ci.max_values[i] = (pq_bin){&empty, 0};
            continue;
        }
        uint8_t *lo = buf + 2 * slot * i, *hi = lo + slot;
        uint32_t lo_len, hi_len;
        bool e1, e2;
        if (!wr__stats_bounds(x->c, &pg->st, w->opt.stats_truncate, lo, &lo_len, &e1, hi, &hi_len, &e2))
            goto done;   /* no index for this chunk */
        ci.min_values[i] = (pq_bin){lo, lo_len};
        ci.max_values[i] = (pq_bin){hi, hi_len};
        if (prev >= 0) {
            const pq_bin *pl = &ci.min_values[prev], *ph = &ci.max_values[prev];
            int a = wr__stats_cmp(x->c, pl->ptr, pl->len, lo, lo_len);
            int b = wr__stats_cmp(x->c, ph->ptr, ph->len, hi, hi_len);
            if (a > 0 || b > 0)
                asc = false;
            if (a < 0 || b < 0)
                desc = false;
        }
        prev = (int)i;
    }
    ci.boundary_order = asc ? PQ_BO_ASCENDING : desc ? PQ_BO_DESCENDING : PQ_BO_UNORDERED;
    rc = pq_column_index_encode(&ci, out, err);
done:
    pa_free(buf);
    pa_free(ci.null_pages);
    pa_free(ci.min_values);
    pa_free(ci.max_values);
    pa_free(ci.null_counts);
    return rc;
}

/* ColumnMetaData: encodings, their page counts, sizes, offsets. */
int wr__chunk_meta(wr_chunk *x, pq_column_chunk *cc, const wr_stats *st, pa_err *err)
{
    pq_writer *w = x->w;
    pq_column_meta *m = &cc->meta_data;
    memset(cc, 0, sizeof *cc);
    cc->has_meta_data = true;
    m->type = x->c->kc.ptype;
    m->codec = w->opt.codec;
    m->num_values = x->rows;
    m->total_uncompressed_size = x->uncompressed;
    m->total_compressed_size = x->compressed;
    m->data_page_offset = x->data_page_offset;
    if (x->dict_pages) {
        m->dictionary_page_offset = x->dict_page_offset;
        m->has_dictionary_page_offset = true;
    }
    m->encodings = pq__arena_alloc(w->arena, 3 * sizeof *m->encodings);
    m->encoding_stats = pq__arena_alloc(w->arena, 3 * sizeof *m->encoding_stats);
    m->path_in_schema = pq__arena_alloc(w->arena, sizeof *m->path_in_schema);
    if (!m->encodings || !m->encoding_stats || !m->path_in_schema)
        return pa_error(err, PA_ENOMEM, "parquet writer: out of memory for metadata");
    m->path_in_schema[0] = x->c->name;
    m->n_path_in_schema = 1;
    int32_t data_type = w->opt.data_page_version == 2 ? PQ_PAGE_DATA_PAGE_V2 : PQ_PAGE_DATA_PAGE;
    uint32_t plain_pages = x->n_pages - x->dict_pages;
    if (x->dict_pages || plain_pages)
        m->encodings[m->n_encodings++] = PQ_ENC_PLAIN;
    if (x->c->nullable)
        m->encodings[m->n_encodings++] = PQ_ENC_RLE;
    if (x->dict_pages) {
        m->encodings[m->n_encodings++] = PQ_ENC_RLE_DICTIONARY;
        m->encoding_stats[m->n_encoding_stats++] =
            (pq_page_encoding_stats){PQ_PAGE_DICTIONARY_PAGE, PQ_ENC_PLAIN, 1};
        m->encoding_stats[m->n_encoding_stats++] =
            (pq_page_encoding_stats){data_type, PQ_ENC_RLE_DICTIONARY, (int32_t)x->dict_pages};
    }
    if (plain_pages)
        m->encoding_stats[m->n_encoding_stats++] =
            (pq_page_encoding_stats){data_type, PQ_ENC_PLAIN, (int32_t)plain_pages};
    if (w->opt.statistics) {
        m->has_statistics = true;
        return chunk_statistics(x, st, &m->statistics, err);
    }
    return PA_OK;
}

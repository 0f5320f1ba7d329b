/*
 * writer_chunk.c - one column chunk of the Parquet writer: page row ranges,
 * the dictionary decision (with fallback to PLAIN after the pages whose
 * dictionary fits), page encoding (v1 or v2, definition levels, codec) and
 * the chunk's OffsetIndex. Its metadata and ColumnIndex are built in
 * writer_meta.c. See writer_int.h for the design notes.
 */
#include "storage/writer_int.h"

#include <string.h>

/* Values the dictionary decision looks at first (see choose_dictionary). */
#define DICT_PROBE_VALUES 65536

static int grow_u32(uint32_t **p, size_t n, pa_err *err)
{
    uint32_t *q = pa_realloc(*p, (n ? n : 1) * sizeof *q);
    if (!q)
        return pa_error(err, PA_ENOMEM, "parquet writer: out of memory for %zu values", n);
    *p = q;
    return PA_OK;
}

/* Scratch for sel / indices / entry_rows for `rows` rows. */
static int scratch_reserve(pq_writer *w, size_t rows, pa_err *err)
{
    if (rows <= w->cap_sel && w->sel)
        return PA_OK;
    int rc;
    if ((rc = grow_u32(&w->sel, rows, err)) != PA_OK || (rc = grow_u32(&w->indices, rows, err)) != PA_OK ||
        (rc = grow_u32(&w->entry_rows, rows, err)) != PA_OK)
        return rc;
    w->cap_sel = rows;
    return PA_OK;
}

/* Cut the chunk into pages by PLAIN size (bits, so BOOLEAN counts 1/8). */
static int plan_pages(wr_chunk *x, pa_err *err)
{
    const wr_col *c = x->c;
    const pq_writer_options *o = &x->w->opt;
    uint64_t limit = o->page_bytes * 8;
    int64_t max_rows = o->page_rows > 0 ? o->page_rows : INT32_MAX;
    uint64_t fixed_bits = c->type.id == PA_TYPE_BOOLEAN ? 1
                          : (uint64_t)(c->kc.ptype == KN_PT_INT32 ? 4 : 8) * 8;
    uint32_t cap = 0;
    int64_t r = 0;
    size_t s = 0;
    do {
        if (x->n_pages == cap) {
            cap = cap ? cap * 2 : 8;
            wr_page *p = pa_realloc(x->pages, cap * sizeof *p);
            if (!p)
                return pa_error(err, PA_ENOMEM, "parquet writer: out of memory for pages");
            x->pages = p;
        }
        wr_page *pg = &x->pages[x->n_pages++];
        memset(pg, 0, sizeof *pg);
        pg->r0 = r;
        pg->s0 = s;
        uint64_t bits = 0;
        while (r < x->rows && bits < limit && r - pg->r0 < max_rows) {
            bool valid = !c->nullable || ((c->validity[r >> 3] >> (r & 7)) & 1);
            if (valid) {
                bits += c->width ? fixed_bits
                                 : 8 * (4 + (uint64_t)(c->offsets[r + 1] - c->offsets[r]));
                s++;
            }
            r++;
        }
        pg->r1 = r;
        pg->s1 = s;
        pg->plain_bytes = (bits + 7) / 8;
    } while (r < x->rows);
    return PA_OK;
}

/* Build the dictionary of the first `n` values; *fits = not too large. */
static int dict_build(wr_chunk *x, size_t n, bool *fits, kn_dict_result *res, pa_err *err)
{
    pq_writer *w = x->w;
    kn_dict_limits lim = {0, w->opt.dictionary_bytes};
    int rc = kn_dict_build(&x->c->kc, &x->view, x->sel, n, &lim, w->dict_scratch,
                           w->cap_dict_scratch, w->entry_rows, w->indices, res, err);
    *fits = rc == PA_OK && !res->too_large;
    return rc;
}

/* Decide which leading pages are dictionary encoded (x->dict_pages) and
 * leave that dictionary in w->entry_rows / w->indices. */
static int choose_dictionary(wr_chunk *x, pa_err *err)
{
    pq_writer *w = x->w;
    x->dict_pages = 0;
    if (!w->opt.dictionary || x->c->type.id == PA_TYPE_BOOLEAN || x->n_values == 0 ||
        x->c->type.id == PA_TYPE_INTERVAL ||
        (x->c->type.id == PA_TYPE_DECIMAL && x->c->type.precision > 18))   /* 16-byte values: PLAIN */
        return PA_OK;
    size_t need = kn_dict_build_scratch(x->n_values);
    if (need > w->cap_dict_scratch) {
        void *p = pa_realloc(w->dict_scratch, need);
        if (!p)
            return pa_error(err, PA_ENOMEM, "parquet writer: out of memory for a dictionary");
        w->dict_scratch = p;
        w->cap_dict_scratch = need;
    }
    kn_dict_result res;
    bool fits;
    int rc;
    /* Probe the first values: a column whose values barely repeat there is
     * not worth a dictionary (the early decision other writers make after
     * their first page), which spares building a large dictionary for
     * every chunk of unique keys. */
    size_t probe = DICT_PROBE_VALUES;
    if (x->n_values > probe) {
        if ((rc = dict_build(x, probe, &fits, &res, err)) != PA_OK)
            return rc;
        uint64_t plain = 0;
        if (x->c->width) {
            plain = (uint64_t)probe * (x->c->kc.ptype == KN_PT_INT32 ? 4 : 8);
        } else {
            for (size_t k = 0; k < probe; k++) {
                size_t r = x->sel ? x->sel[k] : k;
                plain += 4 + (uint64_t)(x->c->offsets[r + 1] - x->c->offsets[r]);
            }
        }
        uint64_t idx = ((uint64_t)probe * (uint64_t)kn_dict_index_width(res.n_entries) + 7) / 8;
        if (!fits || res.plain_bytes + idx >= plain)
            return PA_OK;
    }
    rc = dict_build(x, x->n_values, &fits, &res, err);
    if (rc != PA_OK)
        return rc;
    uint32_t k = x->n_pages;
    if (!fits) {
        /* Longest run of leading pages whose dictionary fits: a prefix fits
         * whenever a longer one does, so binary search over page ends. */
        uint32_t lo = 0, hi = x->n_pages;
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if ((rc = dict_build(x, x->pages[mid - 1].s1, &fits, &res, err)) != PA_OK)
                return rc;
            if (fits)
                lo = mid;
            else
                hi = mid;
        }
        k = lo;
        if (k == 0)
            return PA_OK;
        if ((rc = dict_build(x, x->pages[k - 1].s1, &fits, &res, err)) != PA_OK)
            return rc;
    }
    /* Worth it only if dictionary + indices are smaller than PLAIN. */
    uint64_t plain = 0;
    size_t n = x->pages[k - 1].s1;
    for (uint32_t i = 0; i < k; i++)
        plain += x->pages[i].plain_bytes;
    uint64_t idx = ((uint64_t)n * (uint64_t)kn_dict_index_width(res.n_entries) + 7) / 8 + 8 * k;
    if (res.plain_bytes + idx >= plain)
        return PA_OK;
    x->dict_pages = k;
    x->n_entries = res.n_entries;
    return PA_OK;
}

/* The view of the chunk's rows [r0, r1) for PLAIN encoding without sel. */
static kn_values slice(const wr_chunk *x, int64_t r0, int64_t r1)
{
    kn_values v = x->view;
    if (x->c->width)
        v.values = (const uint8_t *)v.values + r0 * x->c->width;
    else
        v.offsets += r0;
    v.n = (uint64_t)(r1 - r0);
    return v;
}

/* Compress body (n bytes) into w->zpage at `at`; *out = its bytes. */
static int compress_into(pq_writer *w, const uint8_t *body, size_t n, size_t at, size_t *out,
                         pa_err *err)
{
    int32_t codec = w->opt.codec;
    size_t bound = kn_compress_bound(codec, n);
    int rc = wr__reserve(&w->zpage, at + bound, err);
    if (rc != PA_OK)
        return rc;
    return kn_compress(codec, w->opt.level, body, n, w->zpage.data + at, bound, out, err);
}

/* Encode the header h into w->hdr, then write header and body. */
static int emit(wr_chunk *x, pq_page_header *h, const uint8_t *body, size_t body_len,
                size_t raw_len, int64_t *at, pa_err *err)
{
    pq_writer *w = x->w;
    if (raw_len > INT32_MAX || body_len > INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "parquet writer %s: column %s: a page of %zu bytes "
                        "exceeds 2^31-1 (lower page_bytes)", w->path, x->c->name, raw_len);
    w->hdr.len = 0;
    h->uncompressed_page_size = (int32_t)raw_len;
    h->compressed_page_size = (int32_t)body_len;
    if (w->opt.page_crc) {   /* over the bytes as written: v2 levels included */
        h->crc = (int32_t)kn_crc32(body, body_len);
        h->has_crc = true;
    }
    int rc = pq_page_header_encode(h, &w->hdr, err);
    if (rc != PA_OK)
        return rc;
    *at = (int64_t)w->offset;
    if ((rc = wr__write(w, w->hdr.data, w->hdr.len, err)) != PA_OK ||
        (rc = wr__write(w, body, body_len, err)) != PA_OK)
        return rc;
    x->uncompressed += (int64_t)(w->hdr.len + raw_len);
    x->compressed += (int64_t)(w->hdr.len + body_len);
    return PA_OK;
}

static int write_dictionary(wr_chunk *x, pa_err *err)
{
    pq_writer *w = x->w;
    size_t bound = kn_encode_bound(KN_ENC_PLAIN, &x->c->kc, &x->view, w->entry_rows, x->n_entries);
    size_t len = 0, zlen;
    int rc = wr__reserve(&w->page, bound, err);
    if (rc == PA_OK)
        rc = kn_encode_values(KN_ENC_PLAIN, &x->c->kc, &x->view, w->entry_rows, x->n_entries,
                              w->page.data, bound, &len, err);
    const uint8_t *body = w->page.data;
    zlen = len;
    if (rc == PA_OK && w->opt.codec != PQ_CODEC_UNCOMPRESSED) {
        rc = compress_into(w, w->page.data, len, 0, &zlen, err);
        body = w->zpage.data;
    }
    if (rc != PA_OK)
        return rc;
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DICTIONARY_PAGE;
    h.has_dictionary_page = true;
    h.dictionary_page.num_values = (int32_t)x->n_entries;
    h.dictionary_page.encoding = PQ_ENC_PLAIN;
    return emit(x, &h, body, zlen, len, &x->dict_page_offset, err);
}

/* Encode and write data page i. */
static int write_page(wr_chunk *x, uint32_t i, pa_err *err)
{
    pq_writer *w = x->w;
    const wr_col *c = x->c;
    wr_page *pg = &x->pages[i];
    size_t rows = (size_t)(pg->r1 - pg->r0), cnt = pg->s1 - pg->s0;
    bool dict = i < x->dict_pages, v2 = w->opt.data_page_version == 2;
    kn_values sl = slice(x, pg->r0, pg->r1);
    const uint32_t *sel = x->sel ? x->sel + pg->s0 : NULL;
    const kn_values *in = x->sel ? &x->view : &sl;
    size_t lv_bound = c->nullable ? kn_rle_encode_bound(rows, 1) + 4 : 0;
    size_t val_bound = dict ? 1 + kn_rle_encode_bound(cnt, kn_dict_index_width(x->n_entries))
                            : kn_encode_bound(KN_ENC_PLAIN, &c->kc, in, sel, cnt);
    int rc = wr__reserve(&w->page, lv_bound + val_bound, err);
    if (rc != PA_OK)
        return rc;
    size_t lv = 0, vl = 0;
    if (c->nullable && (rc = kn_encode_def_levels(c->validity, (uint64_t)pg->r0, rows, !v2,
                                                  w->page.data, lv_bound, &lv, err)) != PA_OK)
        return rc;
    if (dict)
        rc = kn_encode_dict_indices(w->indices + pg->s0, cnt, x->n_entries, w->page.data + lv,
                                    val_bound, &vl, err);
    else
        rc = kn_encode_values(KN_ENC_PLAIN, &c->kc, in, sel, cnt, w->page.data + lv, val_bound, &vl, err);
    if (rc != PA_OK)
        return rc;

    const uint8_t *body = w->page.data;
    size_t body_len = lv + vl;
    if (w->opt.codec != PQ_CODEC_UNCOMPRESSED) {
        size_t z;
        if (v2) {   /* v2: levels stay uncompressed in front of the values */
            if ((rc = compress_into(w, w->page.data + lv, vl, lv, &z, err)) != PA_OK)
                return rc;
            if (lv)
                memcpy(w->zpage.data, w->page.data, lv);
            body_len = lv + z;
        } else {
            if ((rc = compress_into(w, w->page.data, lv + vl, 0, &z, err)) != PA_OK)
                return rc;
            body_len = z;
        }
        body = w->zpage.data;
    }
    pq_page_header h;
    memset(&h, 0, sizeof h);
    int32_t enc = dict ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN;
    if (v2) {
        h.type = PQ_PAGE_DATA_PAGE_V2;
        h.has_data_page_v2 = true;
        pq_data_page_header_v2 *d = &h.data_page_v2;
        d->num_values = d->num_rows = (int32_t)rows;
        d->num_nulls = (int32_t)(rows - cnt);
        d->encoding = enc;
        d->definition_levels_byte_length = (int32_t)lv;
        d->is_compressed = w->opt.codec != PQ_CODEC_UNCOMPRESSED;
        d->has_is_compressed = true;
    } else {
        h.type = PQ_PAGE_DATA_PAGE;
        h.has_data_page = true;
        h.data_page.num_values = (int32_t)rows;
        h.data_page.encoding = enc;
        h.data_page.definition_level_encoding = PQ_ENC_RLE;
        h.data_page.repetition_level_encoding = PQ_ENC_RLE;
    }
    int64_t at;
    if ((rc = emit(x, &h, body, body_len, lv + vl, &at, err)) != PA_OK)
        return rc;
    if (i == 0)
        x->data_page_offset = at;
    x->locs[i].offset = at;
    x->locs[i].compressed_page_size = (int32_t)((int64_t)w->offset - at);
    x->locs[i].first_row_index = pg->r0;
    if (x->unencoded)
        x->unencoded[i] = (int64_t)(pg->plain_bytes - 4 * cnt);
    return PA_OK;
}

int wr__chunk_write(pq_writer *w, uint32_t ci, pq_column_chunk *cc, wr_index *idx, pa_err *err)
{
    wr_chunk x;
    memset(&x, 0, sizeof x);
    x.w = w;
    x.c = &w->cols[ci];
    x.rows = w->rg_rows;
    wr_col *c = x.c;
    x.view = (kn_values){c->values, c->offsets, c->bytes, (uint64_t)x.rows};
    int rc = scratch_reserve(w, (size_t)x.rows, err);
    if (rc != PA_OK)
        return rc;
    x.n_values = (size_t)(x.rows - c->n_nulls);
    if (c->n_nulls) {
        size_t k = 0;
        for (int64_t r = 0; r < x.rows; r++)
            if ((c->validity[r >> 3] >> (r & 7)) & 1)
                w->sel[k++] = (uint32_t)r;
        x.sel = w->sel;
    }
    wr_stats st;
    wr__stats_init(&st);
    PA_TRY(rc = plan_pages(&x, err));
    x.locs = pa_calloc(x.n_pages, sizeof *x.locs);
    if (pa_type_is_varlen(c->type.id))
        x.unencoded = pa_calloc(x.n_pages, sizeof *x.unencoded);
    if (!x.locs || (pa_type_is_varlen(c->type.id) && !x.unencoded)) {
        rc = pa_error(err, PA_ENOMEM, "parquet writer: out of memory for a page list");
        goto fail;
    }
    for (uint32_t i = 0; i < x.n_pages; i++) {
        wr_page *pg = &x.pages[i];
        wr__stats_init(&pg->st);
        wr__stats_add(c, x.sel, pg->s0, pg->s1, &pg->st);
        pg->st.nulls = (pg->r1 - pg->r0) - (int64_t)(pg->s1 - pg->s0);
        wr__stats_merge(&st, &pg->st);
    }
    PA_TRY(rc = choose_dictionary(&x, err));
    if (x.dict_pages)
        PA_TRY(rc = write_dictionary(&x, err));
    for (uint32_t i = 0; i < x.n_pages; i++)
        PA_TRY(rc = write_page(&x, i, err));
    PA_TRY(rc = wr__chunk_meta(&x, cc, &st, err));
    if (w->opt.page_index) {
        PA_TRY(rc = wr__column_index(&x, &idx->column_index, err));
        pq_offset_index oi = {x.locs, x.n_pages, x.unencoded, x.unencoded ? x.n_pages : 0, NULL};
        PA_TRY(rc = pq_offset_index_encode(&oi, &idx->offset_index, err));
    }
fail:
    pa_free(x.pages);
    pa_free(x.locs);
    pa_free(x.unencoded);
    return rc;
}

/*
 * test_scan_pageindex.c - page pruning with ColumnIndex/OffsetIndex. The
 * DuckDB test files have no page index, so this test writes its own file
 * with the kernels' encoders and the metadata encoders: 2 row groups of
 * 1000 rows, k = row number (INT64, SNAPPY, 100-row pages), s = "s%04d" of
 * k or NULL when k % 7 == 0 (dictionary-encoded, 150-row pages), n = k for
 * the second half of each row group else NULL (INT32, 100-row pages, the
 * first five all-NULL), v = k / 2 (DOUBLE, DATA_PAGE_V2, 256-row pages).
 * Pages of different columns have different boundaries. Expected rows and
 * pruned page counts are computed by hand from that layout.
 *
 * Runs on the device named by PISTA_TEST_DEVICE (default cpu; ctest runs it
 * on sim too, unit.sim.*), reading chunks through host copies
 * (scan_testutil.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "storage/storage.h"
#include "scan_testutil.h"

#define RG_ROWS 1000
#define N_RG 2
#define N_COLS 4

static char tmp_dir[256], file_path[400];
static dv_device *dev;

typedef struct obuf { uint8_t *p; size_t n, cap; } obuf;

static void put(obuf *o, const void *b, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->p = realloc(o->p, o->cap);
    }
    memcpy(o->p + o->n, b, n);
    o->n += n;
}

static void put_pq(obuf *o, pq_buf *b)
{
    put(o, b->data, b->len);
    pq_buf_free(b);
}

/* Per column chunk: what the footer and the page index need. */
typedef struct chunk_info {
    int64_t start, dict_off, data_off, comp, uncomp;
    bool has_dict;
    pq_page_location loc[16];
    bool null_page[16];
    int64_t nulls[16];
    uint8_t minv[16][16], maxv[16][16];
    pq_bin min[16], max[16];
    uint32_t n_pages;
    pq_buf ci, oi;
    int64_t ci_off, oi_off;
} chunk_info;

static int64_t kval(int g, int i) { return (int64_t)g * RG_ROWS + i; }
static bool s_null(int64_t k) { return k % 7 == 0; }
static bool n_null(int i) { return i < RG_ROWS / 2; }

/* Writes one page; body = levels (v1: with length prefix) + values. */
static void write_page(obuf *o, chunk_info *c, int codec, int type, const uint8_t *lv, size_t ln,
                       const uint8_t *vals, size_t vn, int32_t rows, int32_t nulls, int32_t enc, int64_t first_row)
{
    uint8_t *raw = malloc(ln + vn + 1), *comp = NULL;
    if (ln)
        memcpy(raw, lv, ln);
    memcpy(raw + ln, vals, vn);
    size_t usize = ln + vn, csize = usize;
    const uint8_t *stored = raw;
    if (codec != KN_CODEC_UNCOMPRESSED) {
        size_t skip = type == PQ_PAGE_DATA_PAGE_V2 ? ln : 0;   /* v2 levels are not compressed */
        size_t cap = kn_compress_bound(codec, usize - skip) + skip;
        comp = malloc(cap);
        memcpy(comp, raw, skip);
        size_t out;
        assert_int_equal(kn_compress(codec, 0, raw + skip, usize - skip, comp + skip, cap - skip, &out, NULL), PA_OK);
        csize = out + skip;
        stored = comp;
    }
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.uncompressed_page_size = (int32_t)usize;
    h.compressed_page_size = (int32_t)csize;
    if (type == PQ_PAGE_DICTIONARY_PAGE) {
        h.has_dictionary_page = true;
        h.dictionary_page.num_values = rows;
        h.dictionary_page.encoding = PQ_ENC_PLAIN;
    } else if (type == PQ_PAGE_DATA_PAGE) {
        h.has_data_page = true;
        h.data_page.num_values = rows;
        h.data_page.encoding = enc;
        h.data_page.definition_level_encoding = PQ_ENC_RLE;
        h.data_page.repetition_level_encoding = PQ_ENC_RLE;
    } else {
        h.has_data_page_v2 = true;
        h.data_page_v2.num_values = rows;
        h.data_page_v2.num_rows = rows;
        h.data_page_v2.num_nulls = nulls;
        h.data_page_v2.encoding = enc;
        h.data_page_v2.definition_levels_byte_length = (int32_t)ln;
        h.data_page_v2.is_compressed = codec != KN_CODEC_UNCOMPRESSED;
        h.data_page_v2.has_is_compressed = true;
    }
    pq_buf hb = {0};
    assert_int_equal(pq_page_header_encode(&h, &hb, NULL), PA_OK);
    int64_t off = (int64_t)o->n;
    size_t hl = hb.len;
    put_pq(o, &hb);
    put(o, stored, csize);
    c->comp += (int64_t)(hl + csize);
    c->uncomp += (int64_t)(hl + usize);
    if (type == PQ_PAGE_DICTIONARY_PAGE) {
        c->has_dict = true;
        c->dict_off = off;
    } else {
        if (c->n_pages == 0)
            c->data_off = off;
        c->loc[c->n_pages] = (pq_page_location){off, (int32_t)(hl + csize), first_row};
        c->n_pages++;
    }
    free(raw);
    free(comp);
}

/* Page statistics for the column index: min/max of the non-NULL values. */
static void page_stats(chunk_info *c, uint32_t j, const void *lo, const void *hi, size_t w, int64_t nulls, bool all_null)
{
    c->null_page[j] = all_null;
    c->nulls[j] = nulls;
    if (!all_null) {
        memcpy(c->minv[j], lo, w);
        memcpy(c->maxv[j], hi, w);
    }
    c->min[j] = (pq_bin){c->minv[j], all_null ? 0 : (uint32_t)w};
    c->max[j] = (pq_bin){c->maxv[j], all_null ? 0 : (uint32_t)w};
}

static void write_k(obuf *o, chunk_info *c, int g)
{
    kn_column kc = {KN_PT_INT64, 0, {PA_TYPE_BIGINT, 0, 0}, 0, 0};
    int64_t v[RG_ROWS];
    for (int i = 0; i < RG_ROWS; i++)
        v[i] = kval(g, i);
    c->start = (int64_t)o->n;
    for (int p = 0; p < RG_ROWS / 100; p++) {
        kn_values in = {v + p * 100, NULL, NULL, 100};
        uint8_t buf[1024];
        size_t n;
        assert_int_equal(kn_encode_values(KN_ENC_PLAIN, &kc, &in, NULL, 100, buf, sizeof buf, &n, NULL), PA_OK);
        page_stats(c, c->n_pages, &v[p * 100], &v[p * 100 + 99], 8, 0, false);
        write_page(o, c, KN_CODEC_SNAPPY, PQ_PAGE_DATA_PAGE, NULL, 0, buf, n, 100, 0, PQ_ENC_PLAIN, p * 100);
    }
}

static void write_s(obuf *o, chunk_info *c, int g)
{
    kn_column kc = {KN_PT_BYTE_ARRAY, 0, {PA_TYPE_VARCHAR, 0, 0}, 1, 0};
    /* Dictionary: every non-NULL value of the row group, in row order. */
    int32_t offs[RG_ROWS + 1];
    char bytes[RG_ROWS * 5 + 1];
    uint32_t entry[RG_ROWS];
    uint8_t valid[RG_ROWS / 8 + 1];
    memset(valid, 0, sizeof valid);
    uint32_t ne = 0;
    offs[0] = 0;
    for (int i = 0; i < RG_ROWS; i++) {
        int64_t k = kval(g, i);
        if (s_null(k))
            continue;
        valid[i / 8] |= (uint8_t)(1u << (i % 8));
        snprintf(bytes + offs[ne], 6, "s%04lld", (long long)k);
        entry[i] = ne;
        offs[ne + 1] = offs[ne] + 5;
        ne++;
    }
    kn_values dict = {NULL, offs, (const uint8_t *)bytes, ne};
    size_t cap = kn_encode_bound(KN_ENC_PLAIN, &kc, &dict, NULL, ne), n;
    uint8_t *buf = malloc(cap + 4096);
    assert_int_equal(kn_encode_values(KN_ENC_PLAIN, &kc, &dict, NULL, ne, buf, cap, &n, NULL), PA_OK);
    c->start = (int64_t)o->n;
    write_page(o, c, KN_CODEC_SNAPPY, PQ_PAGE_DICTIONARY_PAGE, NULL, 0, buf, n, (int32_t)ne, 0, 0, 0);
    for (int first = 0; first < RG_ROWS; first += 150) {
        int rows = first + 150 <= RG_ROWS ? 150 : RG_ROWS - first;
        uint32_t idx[150];
        int nn = 0, lo = -1, hi = -1;
        for (int i = first; i < first + rows; i++)
            if (!s_null(kval(g, i))) {
                idx[nn++] = entry[i];
                lo = lo < 0 ? i : lo;
                hi = i;
            }
        uint8_t lv[256], vals[512];
        size_t ln, vn;
        assert_int_equal(kn_encode_def_levels(valid, (uint64_t)first, (size_t)rows, true, lv, sizeof lv, &ln, NULL), PA_OK);
        assert_int_equal(kn_encode_dict_indices(idx, (size_t)nn, ne, vals, sizeof vals, &vn, NULL), PA_OK);
        page_stats(c, c->n_pages, bytes + offs[entry[lo]], bytes + offs[entry[hi]], 5, rows - nn, nn == 0);
        write_page(o, c, KN_CODEC_SNAPPY, PQ_PAGE_DATA_PAGE, lv, ln, vals, vn, rows, rows - nn, PQ_ENC_RLE_DICTIONARY,
                   first);
    }
    free(buf);
}

static void write_n(obuf *o, chunk_info *c, int g)
{
    kn_column kc = {KN_PT_INT32, 0, {PA_TYPE_INTEGER, 0, 0}, 1, 0};
    int32_t v[RG_ROWS];
    uint8_t valid[RG_ROWS / 8 + 1];
    memset(valid, 0, sizeof valid);
    for (int i = 0; i < RG_ROWS; i++) {
        v[i] = (int32_t)kval(g, i);
        if (!n_null(i))
            valid[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    c->start = (int64_t)o->n;
    for (int p = 0; p < RG_ROWS / 100; p++) {
        uint32_t sel[100];
        size_t nn = 0;
        for (int i = p * 100; i < p * 100 + 100; i++)
            if (!n_null(i))
                sel[nn++] = (uint32_t)i;
        kn_values in = {v, NULL, NULL, RG_ROWS};
        uint8_t lv[64], vals[512];
        size_t ln, vn;
        assert_int_equal(kn_encode_def_levels(valid, (uint64_t)p * 100, 100, true, lv, sizeof lv, &ln, NULL), PA_OK);
        assert_int_equal(kn_encode_values(KN_ENC_PLAIN, &kc, &in, sel, nn, vals, sizeof vals, &vn, NULL), PA_OK);
        page_stats(c, c->n_pages, &v[p * 100], &v[p * 100 + 99], 4, (int64_t)(100 - nn), nn == 0);
        write_page(o, c, KN_CODEC_UNCOMPRESSED, PQ_PAGE_DATA_PAGE, lv, ln, vals, vn, 100, (int32_t)(100 - nn),
                   PQ_ENC_PLAIN, p * 100);
    }
}

static void write_v(obuf *o, chunk_info *c, int g)
{
    kn_column kc = {KN_PT_DOUBLE, 0, {PA_TYPE_DOUBLE, 0, 0}, 0, 0};
    double v[RG_ROWS];
    for (int i = 0; i < RG_ROWS; i++)
        v[i] = (double)kval(g, i) / 2;
    c->start = (int64_t)o->n;
    for (int first = 0; first < RG_ROWS; first += 256) {
        int rows = first + 256 <= RG_ROWS ? 256 : RG_ROWS - first;
        kn_values in = {v + first, NULL, NULL, (uint64_t)rows};
        uint8_t vals[256 * 8];
        size_t vn;
        assert_int_equal(kn_encode_values(KN_ENC_PLAIN, &kc, &in, NULL, (size_t)rows, vals, sizeof vals, &vn, NULL), PA_OK);
        page_stats(c, c->n_pages, &v[first], &v[first + rows - 1], 8, 0, false);
        write_page(o, c, KN_CODEC_UNCOMPRESSED, PQ_PAGE_DATA_PAGE_V2, NULL, 0, vals, vn, rows, 0, PQ_ENC_PLAIN, first);
    }
}

static void build_file(void)
{
    obuf o = {0};
    put(&o, "PAR1", 4);
    static chunk_info ci[N_RG][N_COLS];
    memset(ci, 0, sizeof ci);
    for (int g = 0; g < N_RG; g++) {
        write_k(&o, &ci[g][0], g);
        write_s(&o, &ci[g][1], g);
        write_n(&o, &ci[g][2], g);
        write_v(&o, &ci[g][3], g);
    }
    /* Page index: every column index, then every offset index. */
    for (int pass = 0; pass < 2; pass++)
        for (int g = 0; g < N_RG; g++)
            for (int c = 0; c < N_COLS; c++) {
                chunk_info *x = &ci[g][c];
                if (pass == 0) {
                    pq_column_index idx = {0};
                    idx.null_pages = x->null_page;
                    idx.n_pages = x->n_pages;
                    idx.min_values = x->min;
                    idx.n_min_values = x->n_pages;
                    idx.max_values = x->max;
                    idx.n_max_values = x->n_pages;
                    idx.boundary_order = PQ_BO_ASCENDING;
                    idx.null_counts = x->nulls;
                    idx.n_null_counts = x->n_pages;
                    assert_int_equal(pq_column_index_encode(&idx, &x->ci, NULL), PA_OK);
                    x->ci_off = (int64_t)o.n;
                    put(&o, x->ci.data, x->ci.len);
                } else {
                    pq_offset_index idx = {0};
                    idx.page_locations = x->loc;
                    idx.n_page_locations = x->n_pages;
                    assert_int_equal(pq_offset_index_encode(&idx, &x->oi, NULL), PA_OK);
                    x->oi_off = (int64_t)o.n;
                    put(&o, x->oi.data, x->oi.len);
                }
            }
    /* Footer. */
    pq_schema_element schema[1 + N_COLS];
    memset(schema, 0, sizeof schema);
    schema[0] = (pq_schema_element){.name = "schema", .num_children = N_COLS, .has_num_children = true};
    static const char *names[N_COLS] = {"k", "s", "n", "v"};
    static const int32_t types[N_COLS] = {PQ_T_INT64, PQ_T_BYTE_ARRAY, PQ_T_INT32, PQ_T_DOUBLE};
    static const int32_t reps[N_COLS] = {PQ_REP_REQUIRED, PQ_REP_OPTIONAL, PQ_REP_OPTIONAL, PQ_REP_REQUIRED};
    for (int c = 0; c < N_COLS; c++) {
        pq_schema_element *e = &schema[1 + c];
        e->name = names[c];
        e->type = types[c];
        e->repetition = reps[c];
        e->has_type = e->has_repetition = true;
        if (c == 1) {
            e->converted_type = PQ_CT_UTF8;
            e->has_converted_type = true;
            e->logical.kind = PQ_LT_STRING;
        }
    }
    static int32_t enc_plain[] = {PQ_ENC_PLAIN, PQ_ENC_RLE}, enc_dict[] = {PQ_ENC_PLAIN, PQ_ENC_RLE, PQ_ENC_RLE_DICTIONARY};
    static const char *paths[N_COLS][1] = {{"k"}, {"s"}, {"n"}, {"v"}};
    pq_row_group rgs[N_RG];
    pq_column_chunk chunks[N_RG][N_COLS];
    memset(rgs, 0, sizeof rgs);
    memset(chunks, 0, sizeof chunks);
    int64_t kmin[N_RG], kmax[N_RG];
    for (int g = 0; g < N_RG; g++) {
        for (int c = 0; c < N_COLS; c++) {
            chunk_info *x = &ci[g][c];
            pq_column_chunk *cc = &chunks[g][c];
            pq_column_meta *m = &cc->meta_data;
            cc->has_meta_data = true;
            cc->file_offset = x->start;
            m->type = types[c];
            m->encodings = c == 1 ? enc_dict : enc_plain;
            m->n_encodings = c == 1 ? 3 : 2;
            m->path_in_schema = paths[c];
            m->n_path_in_schema = 1;
            m->codec = c < 2 ? PQ_CODEC_SNAPPY : PQ_CODEC_UNCOMPRESSED;
            m->num_values = RG_ROWS;
            m->total_compressed_size = x->comp;
            m->total_uncompressed_size = x->uncomp;
            m->data_page_offset = x->data_off;
            if (x->has_dict) {
                m->dictionary_page_offset = x->dict_off;
                m->has_dictionary_page_offset = true;
            }
            if (c == 0) {   /* chunk statistics for k only: row-group pruning */
                kmin[g] = kval(g, 0);
                kmax[g] = kval(g, RG_ROWS - 1);
                m->has_statistics = true;
                m->statistics.min_value = (pq_bin){(const uint8_t *)&kmin[g], 8};
                m->statistics.max_value = (pq_bin){(const uint8_t *)&kmax[g], 8};
                m->statistics.null_count = 0;
                m->statistics.has_null_count = true;
            }
            cc->column_index_offset = x->ci_off;
            cc->column_index_length = (int32_t)x->ci.len;
            cc->offset_index_offset = x->oi_off;
            cc->offset_index_length = (int32_t)x->oi.len;
            cc->has_column_index_offset = cc->has_column_index_length = true;
            cc->has_offset_index_offset = cc->has_offset_index_length = true;
        }
        rgs[g].columns = chunks[g];
        rgs[g].n_columns = N_COLS;
        rgs[g].num_rows = RG_ROWS;
        rgs[g].total_byte_size = 0;
        for (int c = 0; c < N_COLS; c++)
            rgs[g].total_byte_size += ci[g][c].uncomp;
    }
    pq_file_meta fm;
    memset(&fm, 0, sizeof fm);
    fm.version = 1;
    fm.schema = schema;
    fm.n_schema = 1 + N_COLS;
    fm.num_rows = (int64_t)N_RG * RG_ROWS;
    fm.row_groups = rgs;
    fm.n_row_groups = N_RG;
    fm.created_by = "pista test_scan_pageindex";
    pq_buf fb = {0};
    assert_int_equal(pq_file_meta_encode(&fm, &fb, NULL), PA_OK);
    uint32_t flen = (uint32_t)fb.len;
    put_pq(&o, &fb);
    uint8_t tail[8] = {(uint8_t)flen, (uint8_t)(flen >> 8), (uint8_t)(flen >> 16), (uint8_t)(flen >> 24), 'P', 'A', 'R', '1'};
    put(&o, tail, 8);
    for (int g = 0; g < N_RG; g++)
        for (int c = 0; c < N_COLS; c++) {
            pq_buf_free(&ci[g][c].ci);
            pq_buf_free(&ci[g][c].oi);
        }
    FILE *f = fopen(file_path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(o.p, 1, o.n, f), o.n);
    fclose(f);
    free(o.p);
}

/* ------------------------------------------------------------------ checks */

typedef struct result {
    int rc;
    int64_t rows;
    pq_scan_stats st;
    char msg[512];
} result;

/* Scans k,s,n,v (as asked) and checks every row against the layout; the
 * k values seen are returned in order through ks (capacity 2000). */
static void scan(const char *const *cols, size_t nc, const pq_pred *preds, size_t np, bool filter, bool page_index,
                 int64_t *ks, result *r)
{
    pq_scan_options o;
    pq_scan_options_init(&o);
    const char *p = file_path;
    o.paths = &p;
    o.n_paths = 1;
    o.columns = cols;
    o.n_columns = nc;
    o.preds = preds;
    o.n_preds = np;
    o.device = dev;
    o.filter_rows = filter;
    o.use_page_index = page_index;
    memset(r, 0, sizeof *r);
    pa_err err;
    pa_err_init(&err);
    pq_scan *s = NULL;
    r->rc = pq_scan_open(&o, &s, &err);
    while (r->rc == PA_OK) {
        dv_chunk *c;
        if ((r->rc = pq_scan_next(s, &c, &err)) != PA_OK || !c)
            break;
        c = st_host(dev, c);
        int kcol = -1;
        for (int i = 0; i < c->n_columns; i++)
            if (!strcmp(pq_scan_column_name(s, i), "k"))
                kcol = i;
        assert_true(kcol >= 0);
        for (int64_t row = 0; row < c->length; row++) {
            int64_t k = ((int64_t *)c->columns[kcol].data)[row];
            ks[r->rows++] = k;
            for (int i = 0; i < c->n_columns; i++) {
                const char *name = pq_scan_column_name(s, i);
                const pa_column *col = &c->columns[i];
                if (!strcmp(name, "s")) {
                    assert_int_equal(pa_column_valid(col, row), !s_null(k));
                    if (!s_null(k)) {
                        char want[8], got[16];
                        snprintf(want, sizeof want, "s%04lld", (long long)k);
                        pa_format_value(col, row, PA_FMT_ANSWER, got, sizeof got);
                        assert_string_equal(got, want);
                    }
                } else if (!strcmp(name, "n")) {
                    assert_int_equal(pa_column_valid(col, row), !n_null((int)(k % RG_ROWS)));
                    if (!n_null((int)(k % RG_ROWS)))
                        assert_int_equal(((int32_t *)col->data)[row], k);
                } else if (!strcmp(name, "v")) {
                    assert_true(((double *)col->data)[row] == (double)k / 2);
                }
            }
        }
        dv_chunk_destroy(c);
    }
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    if (s)
        pq_scan_get_stats(s, &r->st);
    pq_scan_close(s);
    pa_err_close(&err);
}

static void expect_range(const int64_t *ks, const result *r, int64_t lo, int64_t hi)
{
    assert_int_equal(r->rc, PA_OK);
    assert_int_equal(r->rows, hi - lo);
    for (int64_t i = 0; i < r->rows; i++)
        assert_int_equal(ks[i], lo + i);
}

static int64_t ks[N_RG * RG_ROWS];
static const char *ksnv[] = {"k", "s", "n", "v"};

static void test_full_scan(void **state)
{
    (void)state;
    result r;
    scan(ksnv, 4, NULL, 0, true, true, ks, &r);
    expect_range(ks, &r, 0, 2000);
    assert_int_equal(r.st.pages, 2 * (10 + 7 + 10 + 4));
    assert_int_equal(r.st.pages_pruned, 0);
}

static void test_range_pruning(void **state)
{
    (void)state;
    const char *cols[] = {"k", "s", "v"};
    pq_pred pr[] = {{"k", PQ_OP_GE, "1234"}, {"k", PQ_OP_LT, "1250"}};
    result r, whole, nofilter, noindex;
    scan(cols, 3, pr, 2, true, true, ks, &r);
    expect_range(ks, &r, 1234, 1250);
    assert_int_equal(r.st.row_groups_pruned, 1);          /* row group 0 by its statistics */
    assert_int_equal(r.st.pages, 10 + 7 + 4);
    assert_int_equal(r.st.pages_pruned, 9 + 6 + 2);      /* rows 200..299: k page 2, s page 1, v pages 0-1 */
    assert_int_equal(r.st.rows_decoded, 100);
    scan(cols, 3, NULL, 0, true, true, ks, &whole);
    assert_true(r.st.bytes_read * 3 < whole.st.bytes_read);
    /* Pruning alone: every row of the surviving pages of k. */
    scan(cols, 3, pr, 2, false, true, ks, &nofilter);
    expect_range(ks, &nofilter, 1200, 1300);
    /* Without the page index: the same answer, no page pruned. */
    scan(cols, 3, pr, 2, true, false, ks, &noindex);
    expect_range(ks, &noindex, 1234, 1250);
    assert_int_equal(noindex.st.pages_pruned, 0);
    assert_true(noindex.st.bytes_read > r.st.bytes_read);
}

static void test_null_pages(void **state)
{
    (void)state;
    const char *cols[] = {"k", "n"};
    pq_pred notnull = {"n", PQ_OP_IS_NOT_NULL, ""}, isnull = {"n", PQ_OP_IS_NULL, ""};
    result r;
    scan(cols, 2, &notnull, 1, true, true, ks, &r);
    assert_int_equal(r.rc, PA_OK);
    assert_int_equal(r.rows, 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(ks[i], (i / 500) * 1000 + 500 + i % 500);
    assert_int_equal(r.st.pages, 2 * (10 + 10));
    assert_int_equal(r.st.pages_pruned, 2 * (5 + 5));   /* k and n: the all-NULL first halves */
    scan(cols, 2, &isnull, 1, true, true, ks, &r);
    assert_int_equal(r.rows, 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(ks[i], (i / 500) * 1000 + i % 500);
    assert_int_equal(r.st.pages_pruned, 2 * (5 + 5));
}

static void test_string_and_double_pages(void **state)
{
    (void)state;
    const char *cols[] = {"k", "s"};
    pq_pred eq = {"s", PQ_OP_EQ, "s1500"};
    result r;
    scan(cols, 2, &eq, 1, true, true, ks, &r);
    expect_range(ks, &r, 1500, 1501);
    assert_int_equal(r.st.row_groups_pruned, 1);   /* row group 0: every s page pruned */
    assert_int_equal(r.st.pages_pruned, 8 + 6);    /* rows 1450..1599: k pages 4-5, s page 3 */
    pq_pred lt = {"v", PQ_OP_LT, "10"};
    const char *kv[] = {"k", "v"};
    scan(kv, 2, &lt, 1, true, true, ks, &r);
    expect_range(ks, &r, 0, 20);
    assert_int_equal(r.st.row_groups_pruned, 1);
    /* s IS NULL reads only the pages that hold NULLs: all of them here. */
    pq_pred sn = {"s", PQ_OP_IS_NULL, ""};
    scan(cols, 2, &sn, 1, true, true, ks, &r);
    assert_int_equal(r.rc, PA_OK);
    assert_int_equal(r.rows, 286);   /* multiples of 7 in 0..1999 */
    for (int64_t i = 0; i < r.rows; i++)
        assert_int_equal(ks[i], 7 * i);
}

/* Damaged page index and pages: an error naming the file, or a result. */
static void test_corrupt_index(void **state)
{
    (void)state;
    FILE *f = fopen(file_path, "rb");
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *orig = malloc(n), *copy = malloc(n);
    assert_int_equal(fread(orig, 1, n, f), n);
    fclose(f);
    char path[450];
    snprintf(path, sizeof path, "%s/damaged.parquet", tmp_dir);
    uint64_t seed = 42;
    int errors = 0;
    const char *cols[] = {"k", "s", "n", "v"};
    pq_pred pr[] = {{"k", PQ_OP_GE, "1234"}, {"n", PQ_OP_IS_NOT_NULL, ""}};
    for (int it = 0; it < 300; it++) {
        memcpy(copy, orig, n);
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t pos = 4 + (size_t)(seed >> 33) % (n - 12);
        copy[pos] ^= (uint8_t)(1u << ((seed >> 20) & 7));
        FILE *w = fopen(path, "wb");
        assert_int_equal(fwrite(copy, 1, n, w), n);
        fclose(w);
        pq_meta_cache_clear();
        pq_scan_options o;
        pq_scan_options_init(&o);
        const char *p = path;
        o.paths = &p;
        o.n_paths = 1;
        o.columns = cols;
        o.n_columns = 4;
        o.preds = pr;
        o.n_preds = (size_t)(it % 3);
        o.device = dev;
        pa_err err;
        pa_err_init(&err);
        pq_scan *s = NULL;
        int rc = pq_scan_open(&o, &s, &err);
        while (rc == PA_OK) {
            dv_chunk *c;
            if ((rc = pq_scan_next(s, &c, &err)) != PA_OK || !c)
                break;
            rc = st_ready(dev, c, &err);   /* a page the device refused */
            dv_chunk_destroy(c);
        }
        pq_scan_close(s);
        if (rc != PA_OK) {
            errors++;
            if (!strstr(err.msg, path))
                fail_msg("flip at %zu: error without the file name: %s", pos, err.msg);
        }
        pa_err_close(&err);
    }
    unlink(path);
    pq_meta_cache_clear();
    free(orig);
    free(copy);
    assert_true(errors > 30);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pista_scan_pi_XXXXXX");
    if (!mkdtemp(tmp_dir))
        return -1;
    snprintf(file_path, sizeof file_path, "%s/pageindex.parquet", tmp_dir);
    dv_options opt = {.spec = st_spec(), .cpu_threads = 3};
    if (dv_open(&opt, &dev, NULL) != PA_OK)
        return -1;
    build_file();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pq_meta_cache_clear();
    io_engine_shared_shutdown();
    dv_close(dev);
    unlink(file_path);
    rmdir(tmp_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_scan),
        cmocka_unit_test(test_range_pruning),
        cmocka_unit_test(test_null_pages),
        cmocka_unit_test(test_string_and_double_pages),
        cmocka_unit_test(test_corrupt_index),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

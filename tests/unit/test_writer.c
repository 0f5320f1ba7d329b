/*
 * test_writer.c - the Parquet writer, checked by reading its files back with
 * our own footer reader, page walk and page decoders: every engine type with
 * NULLs (none, some, all), every codec, data page v1 and v2, small pages and
 * row groups, the dictionary fallback, statistics and the page index against
 * min/max computed here from the generator, string truncation, 0 rows,
 * bounded memory over 20 row groups, I/O errors and allocation failures.
 * DuckDB's view of the same kinds of files is tests/sh/test_parquet_write_oracle.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "storage/storage.h"
#include "tmp_testutil.h"

static pa_err err;
static char tmp_dir[256];

#define OK(call)                                                                       \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != PA_OK) {                                                            \
            print_message("%s -> %s: %s\n", #call, pa_status_name(rc_), err.msg);     \
            fail();                                                                    \
        }                                                                              \
    } while (0)

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp_dir, name);
    return buf[k];
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}


/* ------------------------------------------------------------ generator
 * Column k of global row i; the expected values of every check below. */

enum { C_BOOL, C_INT, C_BIGINT, C_DOUBLE, C_DEC15, C_DEC9, C_DATE, C_STR, N_COLS };
static const char *col_names[N_COLS] = {"b", "i", "l", "d", "m", "m9", "dt", "s"};
static pa_type col_type(int k)
{
    switch (k) {
    case C_BOOL: return (pa_type){PA_TYPE_BOOLEAN, 0, 0};
    case C_INT: return (pa_type){PA_TYPE_INTEGER, 0, 0};
    case C_BIGINT: return (pa_type){PA_TYPE_BIGINT, 0, 0};
    case C_DOUBLE: return (pa_type){PA_TYPE_DOUBLE, 0, 0};
    case C_DEC15: return (pa_type){PA_TYPE_DECIMAL, 15, 2};
    case C_DEC9: return (pa_type){PA_TYPE_DECIMAL, 9, 3};
    case C_DATE: return (pa_type){PA_TYPE_DATE, 0, 0};
    default: return (pa_type){PA_TYPE_VARCHAR, 0, 0};
    }
}

/* null_mode: 0 none, 1 some, 2 all. */
static bool gen_null(int mode, int k, int64_t i)
{
    return mode == 2 || (mode == 1 && (i + k) % 5 == 1);
}

static int64_t gen_int(int k, int64_t i)
{
    switch (k) {
    case C_BOOL: return i % 3 == 0;
    case C_INT: return i == 3 ? INT32_MIN : i == 4 ? INT32_MAX : (int32_t)((uint32_t)i * 2654435761u);
    case C_BIGINT: return i == 5 ? INT64_MIN : i == 6 ? INT64_MAX : i * 1000003 - 500000000000;
    case C_DEC15: return i * 12345 - 9999999;
    case C_DEC9: return (i * 7919) % 1999999999 - 999999999;
    case C_DATE: return (int32_t)(i % 20000) - 3000;
    default: return 0;
    }
}

static double gen_double(int64_t i)
{
    if (i % 11 == 0)
        return -0.0;
    if (i % 11 == 5)
        return 0.0;
    if (i == 7)
        return 1e300;
    if (i == 8)
        return -1e300;
    return ((double)i - 1000) * 0.37;
}

/* String of row i into buf (>= 256 bytes); returns its length. */
static size_t gen_str(int64_t i, char *buf)
{
    if (i % 7 == 0)
        return 0;
    if (i % 50 == 1) {   /* long: 200 bytes */
        for (int k = 0; k < 200; k++)
            buf[k] = (char)('a' + (i + k) % 26);
        return 200;
    }
    if (i % 13 == 2)
        return (size_t)sprintf(buf, "\xe6\x97\xa5\xe6\x9c\xac-%lld", (long long)(i % 31));
    return (size_t)sprintf(buf, "v%lld", (long long)(i % 97));
}

/* Engine columns for rows [first, first + n); buffers freed by batch_free. */
typedef struct batch {
    pa_column cols[N_COLS];
} batch;

static void batch_make(batch *b, int64_t first, int64_t n, int null_mode)
{
    for (int k = 0; k < N_COLS; k++) {
        pa_column *c = &b->cols[k];
        memset(c, 0, sizeof *c);
        c->type = col_type(k);
        c->length = n;
        int wd = pa_type_bytes(c->type);
        if (null_mode)
            c->validity = calloc((size_t)n / 8 + 1, 1);
        if (k == C_STR) {
            c->offsets = calloc((size_t)n + 1, sizeof *c->offsets);
            c->data = malloc((size_t)n * 200 + 1);
        } else {
            c->data = calloc((size_t)n + 1, (size_t)wd);
        }
        int32_t pos = 0;
        for (int64_t r = 0; r < n; r++) {
            int64_t i = first + r;
            bool null = gen_null(null_mode, k, i);
            if (c->validity && !null)
                c->validity[r / 8] |= (uint8_t)(1u << (r % 8));
            if (k == C_STR) {
                /* NULL rows get junk bytes: the writer must ignore them. */
                char tmp[256];
                size_t len = null ? 3 : gen_str(i, tmp);
                memcpy((char *)c->data + pos, null ? "xyz" : tmp, len);
                pos += (int32_t)len;
                c->offsets[r + 1] = pos;
            } else if (k == C_DOUBLE) {
                ((double *)c->data)[r] = null ? 12345.0 : gen_double(i);
            } else if (wd == 1) {
                ((uint8_t *)c->data)[r] = (uint8_t)gen_int(k, i);
            } else if (wd == 4) {
                ((int32_t *)c->data)[r] = (int32_t)gen_int(k, i);
            } else {
                ((int64_t *)c->data)[r] = gen_int(k, i);
            }
        }
    }
}

static void batch_free(batch *b)
{
    for (int k = 0; k < N_COLS; k++) {
        free(b->cols[k].data);
        free(b->cols[k].offsets);
        free(b->cols[k].validity);
    }
}

static void decls(pq_write_column *d, bool nullable)
{
    for (int k = 0; k < N_COLS; k++)
        d[k] = (pq_write_column){col_names[k], col_type(k), nullable};
}

/* Write `rows` rows in batches of `step` with the given options. */
static void write_file(const char *path, const pq_writer_options *o, int64_t rows, int64_t step,
                       int null_mode)
{
    pq_write_column d[N_COLS];
    decls(d, null_mode != 0);
    pq_writer *w = NULL;
    OK(pq_writer_create(path, d, N_COLS, o, &w, &err));
    for (int64_t first = 0; first < rows; first += step) {
        int64_t n = rows - first < step ? rows - first : step;
        batch b;
        batch_make(&b, first, n, null_mode);
        OK(pq_writer_write(w, b.cols, n, &err));
        batch_free(&b);
    }
    assert_int_equal(pq_writer_rows(w), rows);
    assert_true(tmp_exists(path));
    assert_false(exists(path));
    OK(pq_writer_close(w, &err));
    assert_false(tmp_exists(path));
    assert_true(exists(path));
}

/* ------------------------------------------------------------- read back */

static uint8_t *read_range(const char *path, int64_t off, int32_t len)
{
    uint8_t *b = malloc((size_t)len + 1);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, b, (size_t)len, off), len);
    close(fd);
    return b;
}

/* Expected plain-encoded min/max over rows [r0, r1) of column k (no NULL
 * rows counted); returns false when every row is NULL. */
static bool expect_bounds(int k, int null_mode, int64_t r0, int64_t r1, uint8_t *lo, uint32_t *lo_len,
                          uint8_t *hi, uint32_t *hi_len)
{
    bool any = false;
    int64_t imin = 0, imax = 0;
    double dmin = 0, dmax = 0;
    char smin[256], smax[256], s[256];
    size_t smin_len = 0, smax_len = 0;
    for (int64_t i = r0; i < r1; i++) {
        if (gen_null(null_mode, k, i))
            continue;
        if (k == C_STR) {
            size_t n = gen_str(i, s);
            if (!any || memcmp(s, smin, n < smin_len ? n : smin_len) < 0 ||
                (memcmp(s, smin, n < smin_len ? n : smin_len) == 0 && n < smin_len)) {
                memcpy(smin, s, n);
                smin_len = n;
            }
            if (!any || memcmp(s, smax, n < smax_len ? n : smax_len) > 0 ||
                (memcmp(s, smax, n < smax_len ? n : smax_len) == 0 && n > smax_len)) {
                memcpy(smax, s, n);
                smax_len = n;
            }
        } else if (k == C_DOUBLE) {
            double v = gen_double(i);
            if (!any || v < dmin)
                dmin = v;
            if (!any || v > dmax)
                dmax = v;
        } else {
            int64_t v = gen_int(k, i);
            if (!any || v < imin)
                imin = v;
            if (!any || v > imax)
                imax = v;
        }
        any = true;
    }
    if (!any)
        return false;
    if (k == C_STR) {
        /* Truncated at 64 bytes: the long strings are ASCII, so the max is
         * the 64-byte prefix with its last byte incremented. */
        *lo_len = (uint32_t)(smin_len > 64 ? 64 : smin_len);
        memcpy(lo, smin, *lo_len);
        *hi_len = (uint32_t)(smax_len > 64 ? 64 : smax_len);
        memcpy(hi, smax, *hi_len);
        if (smax_len > 64)
            hi[63]++;
    } else if (k == C_DOUBLE) {
        if (dmin == 0)
            dmin = -0.0;
        if (dmax == 0)
            dmax = 0.0;
        memcpy(lo, &dmin, 8);
        memcpy(hi, &dmax, 8);
        *lo_len = *hi_len = 8;
    } else if (k == C_BOOL) {
        lo[0] = (uint8_t)imin;
        hi[0] = (uint8_t)imax;
        *lo_len = *hi_len = 1;
    } else if (k == C_INT || k == C_DATE || k == C_DEC9) {
        int32_t a = (int32_t)imin, b = (int32_t)imax;
        memcpy(lo, &a, 4);
        memcpy(hi, &b, 4);
        *lo_len = *hi_len = 4;
    } else {
        memcpy(lo, &imin, 8);
        memcpy(hi, &imax, 8);
        *lo_len = *hi_len = 8;
    }
    return true;
}

static void assert_bin(pq_bin b, const uint8_t *v, uint32_t len, const char *what)
{
    if (!b.ptr || b.len != len || memcmp(b.ptr, v, len) != 0) {
        print_message("%s: got %u bytes, want %u\n", what, b.ptr ? b.len : 0, len);
        fail();
    }
}

/* Decode one data page (already decompressed when needed) into out. */
static void decode_page(const pq_page_info *p, const uint8_t *body, int32_t codec, const kn_column *kc,
                        const kn_dict *dict, kn_out *out, uint64_t row)
{
    const pq_page_header *h = &p->header;
    kn_page pg;
    memset(&pg, 0, sizeof pg);
    uint8_t *scratch = NULL;
    if (h->type == PQ_PAGE_DATA_PAGE) {
        pg.version = 1;
        pg.encoding = h->data_page.encoding;
        pg.def_level_encoding = h->data_page.definition_level_encoding;
        pg.num_values = h->data_page.num_values;
        pg.data = body;
        pg.size = (uint64_t)h->compressed_page_size;
        if (codec != PQ_CODEC_UNCOMPRESSED) {
            scratch = malloc((size_t)h->uncompressed_page_size + 1);
            OK(kn_decompress(codec, body, (size_t)h->compressed_page_size, scratch,
                             (size_t)h->uncompressed_page_size, &err));
            pg.data = scratch;
            pg.size = (uint64_t)h->uncompressed_page_size;
        }
    } else {
        const pq_data_page_header_v2 *d = &h->data_page_v2;
        assert_int_equal(h->type, PQ_PAGE_DATA_PAGE_V2);
        pg.version = 2;
        pg.encoding = d->encoding;
        pg.num_values = d->num_values;
        pg.num_nulls = d->num_nulls;
        pg.levels = body;
        pg.def_levels_size = (uint32_t)d->definition_levels_byte_length;
        size_t lv = (size_t)d->definition_levels_byte_length;
        pg.data = body + lv;
        pg.size = (uint64_t)h->compressed_page_size - lv;
        assert_int_equal(d->is_compressed, codec != PQ_CODEC_UNCOMPRESSED);
        if (d->is_compressed) {
            size_t raw = (size_t)h->uncompressed_page_size - lv;
            scratch = malloc(raw + 1);
            OK(kn_decompress(codec, pg.data, (size_t)pg.size, scratch, raw, &err));
            pg.data = scratch;
            pg.size = raw;
        }
    }
    OK(kn_page_decode(&pg, kc, dict, out, row, &err));
    free(scratch);
}

typedef struct readback {
    int64_t rows;
    uint32_t row_groups;
    uint32_t dict_chunks, fallback_chunks;   /* chunks with a dictionary; and with PLAIN pages after it */
    uint32_t pages;
} readback;

/* Read every column of path with our reader and compare each value with
 * the generator; check chunk statistics and the page index too. */
static void read_and_check(const char *path, int null_mode, int32_t codec, int page_version,
                           readback *rb)
{
    memset(rb, 0, sizeof *rb);
    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    assert_int_equal(m->n_leaves, N_COLS);
    pq_column_desc *desc = NULL;
    uint32_t nd = 0;
    OK(pq_schema_map(m, &desc, &nd, &err));
    assert_int_equal(nd, N_COLS);
    for (int k = 0; k < N_COLS; k++) {
        assert_string_equal(desc[k].name, col_names[k]);
        assert_int_equal(desc[k].unsupported[0], 0);
        pa_type t = col_type(k);
        assert_int_equal(desc[k].type.id, t.id);
        assert_int_equal(desc[k].type.precision, t.precision);
        assert_int_equal(desc[k].type.scale, t.scale);
        assert_int_equal(desc[k].nullable, null_mode != 0);
    }
    rb->rows = m->num_rows;
    rb->row_groups = m->n_row_groups;
    int64_t first = 0;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        int64_t n = rg->num_rows;
        for (int k = 0; k < N_COLS; k++) {
            const pq_column_chunk *cc = &rg->columns[k];
            const pq_column_meta *cm = &cc->meta_data;
            assert_int_equal(cm->codec, codec);
            assert_int_equal(cm->num_values, n);
            kn_column kc = {desc[k].physical_type, 0, desc[k].type, (int16_t)(null_mode ? 1 : 0), 0};
            uint8_t *chunk = NULL;
            pq_page_info *pages = NULL;
            uint32_t np = 0;
            OK(pq_chunk_pages_read(m, g, (uint32_t)k, &chunk, &pages, &np, &err));
            /* Decode every page into one output. */
            int wd = pa_type_bytes(kc.type);
            kn_out out;
            memset(&out, 0, sizeof out);
            out.capacity = (uint64_t)n;
            out.values = calloc((size_t)n + 1, wd ? (size_t)wd : 1);
            out.offsets = calloc((size_t)n + 2, sizeof *out.offsets);
            out.bytes_capacity = (uint64_t)n * 200 + 1;
            out.bytes = malloc(out.bytes_capacity);
            out.validity = calloc((size_t)n / 8 + 2, 1);
            kn_dict dict;
            memset(&dict, 0, sizeof dict);
            kn_out dout;
            memset(&dout, 0, sizeof dout);
            uint64_t row = 0;
            uint32_t data_pages = 0, plain_after_dict = 0;
            int64_t page_first[4096];
            for (uint32_t p = 0; p < np; p++) {
                const pq_page_header *h = &pages[p].header;
                const uint8_t *body = chunk + (pages[p].offset - (uint64_t)pq_chunk_start(cm)) +
                                      pages[p].header_len;
                if (h->type == PQ_PAGE_DICTIONARY_PAGE) {
                    assert_int_equal(p, 0);
                    rb->dict_chunks++;
                    uint32_t ne = (uint32_t)h->dictionary_page.num_values;
                    const uint8_t *db = body;
                    uint8_t *scratch = NULL;
                    size_t dlen = (size_t)h->compressed_page_size;
                    if (codec != PQ_CODEC_UNCOMPRESSED) {
                        scratch = malloc((size_t)h->uncompressed_page_size + 1);
                        OK(kn_decompress(codec, body, dlen, scratch, (size_t)h->uncompressed_page_size, &err));
                        db = scratch;
                        dlen = (size_t)h->uncompressed_page_size;
                    }
                    kn_column dk = kc;
                    dk.max_def_level = 0;
                    dout.capacity = ne;
                    dout.values = calloc(ne + 1, wd ? (size_t)wd : 1);
                    dout.offsets = calloc(ne + 2, sizeof *dout.offsets);
                    dout.bytes_capacity = dlen + 1;
                    dout.bytes = malloc(dout.bytes_capacity);
                    OK(kn_decode_values(PQ_ENC_PLAIN, &dk, NULL, db, dlen, ne, &dout, 0, NULL, &err));
                    dict = (kn_dict){dout.values, dout.offsets, dout.bytes, ne};
                    free(scratch);
                    continue;
                }
                assert_int_equal(h->type, page_version == 2 ? PQ_PAGE_DATA_PAGE_V2 : PQ_PAGE_DATA_PAGE);
                int32_t enc = page_version == 2 ? h->data_page_v2.encoding : h->data_page.encoding;
                if (enc == PQ_ENC_PLAIN && dict.n)
                    plain_after_dict++;
                if (enc == PQ_ENC_RLE_DICTIONARY)
                    assert_int_equal(plain_after_dict, 0);   /* PLAIN pages only after dictionary ones */
                assert_true(data_pages < 4096);
                page_first[data_pages++] = (int64_t)row;
                decode_page(&pages[p], body, codec, &kc, dict.n ? &dict : NULL, &out, row);
                row += (uint64_t)(page_version == 2 ? h->data_page_v2.num_values : h->data_page.num_values);
            }
            assert_int_equal(row, n);
            rb->pages += data_pages;
            if (plain_after_dict)
                rb->fallback_chunks++;
            /* Values. */
            for (int64_t r = 0; r < n; r++) {
                int64_t i = first + r;
                bool valid = (out.validity[r / 8] >> (r % 8)) & 1;
                if (gen_null(null_mode, k, i)) {
                    assert_false(valid);
                    continue;
                }
                assert_true(valid);
                if (k == C_STR) {
                    char s[256];
                    size_t len = gen_str(i, s);
                    assert_int_equal(out.offsets[r + 1] - out.offsets[r], len);
                    assert_memory_equal(out.bytes + out.offsets[r], s, len);
                } else if (k == C_DOUBLE) {
                    double v = ((double *)out.values)[r], e = gen_double(i);
                    assert_memory_equal(&v, &e, 8);   /* exact, -0.0 included */
                } else if (wd == 1) {
                    assert_int_equal(((uint8_t *)out.values)[r], gen_int(k, i));
                } else if (wd == 4) {
                    assert_int_equal(((int32_t *)out.values)[r], gen_int(k, i));
                } else {
                    assert_int_equal(((int64_t *)out.values)[r], gen_int(k, i));
                }
            }
            /* Chunk statistics. */
            uint8_t lo[80], hi[80];
            uint32_t lo_len, hi_len;
            assert_true(cm->has_statistics);
            int64_t nulls = 0;
            for (int64_t i = first; i < first + n; i++)
                nulls += gen_null(null_mode, k, i);
            assert_int_equal(cm->statistics.null_count, nulls);
            if (expect_bounds(k, null_mode, first, first + n, lo, &lo_len, hi, &hi_len)) {
                assert_bin(cm->statistics.min_value, lo, lo_len, "chunk min");
                assert_bin(cm->statistics.max_value, hi, hi_len, "chunk max");
            } else {
                assert_null(cm->statistics.min_value.ptr);
                assert_null(cm->statistics.max_value.ptr);
            }
            /* Page index: offsets match the page walk, bounds the generator. */
            assert_true(cc->has_offset_index_offset && cc->has_column_index_offset);
            uint8_t *oib = read_range(path, cc->offset_index_offset, cc->offset_index_length);
            uint8_t *cib = read_range(path, cc->column_index_offset, cc->column_index_length);
            pq_offset_index *oi = NULL;
            pq_column_index *ci = NULL;
            OK(pq_offset_index_decode(oib, (size_t)cc->offset_index_length, "oi", 0, &oi, &err));
            OK(pq_column_index_decode(cib, (size_t)cc->column_index_length, "ci", 0, &ci, &err));
            assert_int_equal(oi->n_page_locations, data_pages);
            assert_int_equal(ci->n_pages, data_pages);
            uint32_t dp = 0;
            for (uint32_t p = 0; p < np; p++) {
                if (pages[p].header.type == PQ_PAGE_DICTIONARY_PAGE)
                    continue;
                const pq_page_location *loc = &oi->page_locations[dp];
                assert_int_equal(loc->offset, pages[p].offset);
                assert_int_equal(loc->compressed_page_size,
                                 pages[p].header_len + (uint32_t)pages[p].header.compressed_page_size);
                assert_int_equal(loc->first_row_index, page_first[dp]);
                int64_t r0 = first + page_first[dp];
                int64_t r1 = first + (dp + 1 < data_pages ? page_first[dp + 1] : n);
                int64_t pn = 0;
                for (int64_t i = r0; i < r1; i++)
                    pn += gen_null(null_mode, k, i);
                assert_int_equal(ci->null_counts[dp], pn);
                bool any = expect_bounds(k, null_mode, r0, r1, lo, &lo_len, hi, &hi_len);
                assert_int_equal(ci->null_pages[dp], !any);
                if (any) {
                    assert_bin(ci->min_values[dp], lo, lo_len, "page min");
                    assert_bin(ci->max_values[dp], hi, hi_len, "page max");
                }
                dp++;
            }
            pq_offset_index_destroy(oi);
            pq_column_index_destroy(ci);
            free(oib);
            free(cib);
            free(out.values);
            free(out.offsets);
            free(out.bytes);
            free(out.validity);
            free(dout.values);
            free(dout.offsets);
            free(dout.bytes);
            pa_free(chunk);
            pa_free(pages);
        }
        first += n;
    }
    assert_int_equal(first, m->num_rows);
    pa_free(desc);
    pq_file_meta_release(m);
}

/* ----------------------------------------------------------------- tests */

static void test_memory_bounded(void **state)
{
    (void)state;
    /* 20 row groups of 50000 rows written in unaligned batches: host memory
     * must stay near one row group, not grow with the file. */
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.row_group_rows = 50000;
    pq_write_column d[N_COLS];
    decls(d, true);
    pa_mem_stats base, mid, end;
    pa_host_mem_stats(&base);
    pq_writer *w = NULL;
    const char *path = tmp_path("mem.parquet");
    OK(pq_writer_create(path, d, N_COLS, &o, &w, &err));
    /* Raw bytes of one row group: fixed widths + string bytes + offsets + validity. */
    uint64_t raw = 0;
    for (int64_t first = 0; first < 1000000; first += 33333) {
        int64_t n = 1000000 - first < 33333 ? 1000000 - first : 33333;
        batch b;
        batch_make(&b, first, n, 1);
        OK(pq_writer_write(w, b.cols, n, &err));
        batch_free(&b);
        if (first == 0) {
            for (int k = 0; k < N_COLS; k++)
                raw += (uint64_t)(k == C_STR ? 4 : pa_type_bytes(col_type(k)));
            raw = raw * 50000 + (uint64_t)N_COLS * 50000 / 8;
            char s[256];
            for (int64_t i = 0; i < 50000; i++)
                raw += gen_str(i, s);
        }
        if (first / 33333 == 5)
            pa_host_mem_stats(&mid);
    }
    pa_host_mem_stats(&end);
    assert_int_equal(pq_writer_row_groups(w), 20);   /* the last write filled the 20th */
    OK(pq_writer_close(w, &err));
    int64_t peak_mid = mid.peak - base.current, peak_end = end.peak - base.current;
    print_message("row group raw %llu bytes; peak after 3 row groups %lld, after 20 %lld\n",
                  (unsigned long long)raw, (long long)peak_mid, (long long)peak_end);
    /* The buffers, the dictionary scratch of one column, the 1 MiB output
     * buffer and page buffers: under 2.5 row groups + 2 MiB. */
    assert_true((uint64_t)peak_end < raw * 5 / 2 + (2u << 20));
    /* And no growth with the number of row groups beyond footer metadata. */
    assert_true(peak_end - peak_mid < 256 * 1024);
    readback rb;
    read_and_check(path, 1, o.codec, 1, &rb);
    assert_int_equal(rb.rows, 1000000);
    assert_int_equal(rb.row_groups, 20);
    unlink(path);
}

static void roundtrip(int32_t codec, int page_version, int null_mode, int64_t rows, int64_t rg_rows,
                      uint64_t page_bytes, int64_t step)
{
    if (!kn_codec_supported(codec))
        skip();
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.codec = codec;
    o.data_page_version = page_version;
    o.row_group_rows = rg_rows;
    o.page_bytes = page_bytes;
    const char *path = tmp_path("rt.parquet");
    write_file(path, &o, rows, step, null_mode);
    readback rb;
    read_and_check(path, null_mode, codec, page_version, &rb);
    assert_int_equal(rb.rows, rows);
    assert_int_equal(rb.row_groups, (rows + rg_rows - 1) / rg_rows);
    unlink(path);
}

static void test_codecs_v1(void **state)
{
    (void)state;
    int32_t codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP, PQ_CODEC_ZSTD, PQ_CODEC_LZ4_RAW};
    for (int c = 0; c < 5; c++)
        for (int nm = 0; nm < 3; nm++)
            roundtrip(codecs[c], 1, nm, 3000, 1100, 2048, 700);
}

static void test_codecs_v2(void **state)
{
    (void)state;
    int32_t codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP, PQ_CODEC_ZSTD, PQ_CODEC_LZ4_RAW};
    for (int c = 0; c < 5; c++)
        for (int nm = 0; nm < 3; nm++)
            roundtrip(codecs[c], 2, nm, 3000, 1100, 2048, 3000);
}

static void test_one_row_pages(void **state)
{
    (void)state;
    /* page_bytes 1: every page holds one value (or one run of NULLs' row). */
    roundtrip(PQ_CODEC_SNAPPY, 1, 1, 300, 120, 1, 17);
    roundtrip(PQ_CODEC_UNCOMPRESSED, 2, 0, 64, 64, 1, 64);
}

static void test_default_options_big_pages(void **state)
{
    (void)state;
    pq_writer_options o;
    pq_writer_options_init(&o);
    assert_int_equal(o.codec, kn_codec_supported(PQ_CODEC_LZ4_RAW) ? PQ_CODEC_LZ4_RAW : PQ_CODEC_UNCOMPRESSED);
    roundtrip(o.codec, 1, 1, 20000, 1 << 20, 1 << 20, 20000);
}

/* Strings repeating over 40 values for 4000 rows, then all distinct: with a
 * 2 KiB dictionary cap the chunk must be a dictionary page, dictionary
 * pages, then PLAIN pages. */
/* Chunks above the dictionary probe (65536 values): unique columns stay
 * PLAIN after the probe, repeating ones get a dictionary. */
static void test_large_chunk(void **state)
{
    (void)state;
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.codec = PQ_CODEC_SNAPPY;
    o.row_group_rows = 200000;
    const char *path = tmp_path("large.parquet");
    write_file(path, &o, 200000, 65000, 1);
    readback rb;
    read_and_check(path, 1, o.codec, 1, &rb);
    assert_int_equal(rb.rows, 200000);
    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    const pq_column_chunk *cols = m->row_groups[0].columns;
    assert_false(cols[C_BIGINT].meta_data.has_dictionary_page_offset);   /* all distinct */
    assert_false(cols[C_INT].meta_data.has_dictionary_page_offset);
    assert_true(cols[C_DATE].meta_data.has_dictionary_page_offset);     /* 20000 distinct */
    assert_true(cols[C_STR].meta_data.has_dictionary_page_offset);
    assert_false(cols[C_DEC15].meta_data.has_dictionary_page_offset);   /* unique */
    pq_file_meta_release(m);
    unlink(path);
}

static void test_dictionary_fallback(void **state)
{
    (void)state;
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.codec = PQ_CODEC_ZSTD;
    o.dictionary_bytes = 2048;
    o.page_bytes = 4096;
    const int64_t n = 10000;
    pa_column c;
    memset(&c, 0, sizeof c);
    c.type.id = PA_TYPE_VARCHAR;
    c.length = n;
    c.offsets = calloc(n + 1, sizeof *c.offsets);
    c.data = malloc(n * 32);
    int32_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
        pos += i < 4000 ? sprintf((char *)c.data + pos, "key-%lld", (long long)(i % 40))
                        : sprintf((char *)c.data + pos, "unique-%08lld-x", (long long)i);
        c.offsets[i + 1] = pos;
    }
    pq_write_column d = {"s", c.type, false};
    const char *path = tmp_path("fallback.parquet");
    pq_writer *w = NULL;
    OK(pq_writer_create(path, &d, 1, &o, &w, &err));
    OK(pq_writer_write(w, &c, n, &err));
    OK(pq_writer_close(w, &err));

    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    const pq_column_meta *cm = &m->row_groups[0].columns[0].meta_data;
    assert_true(cm->has_dictionary_page_offset);
    uint8_t *chunk;
    pq_page_info *pages;
    uint32_t np;
    OK(pq_chunk_pages_read(m, 0, 0, &chunk, &pages, &np, &err));
    assert_int_equal(pages[0].header.type, PQ_PAGE_DICTIONARY_PAGE);
    assert_int_equal(pages[0].header.dictionary_page.num_values, 40);
    uint32_t dict_pages = 0, plain_pages = 0;
    for (uint32_t p = 1; p < np; p++) {
        int32_t enc = pages[p].header.data_page.encoding;
        if (enc == PQ_ENC_RLE_DICTIONARY) {
            assert_int_equal(plain_pages, 0);
            dict_pages++;
        } else {
            assert_int_equal(enc, PQ_ENC_PLAIN);
            plain_pages++;
        }
    }
    print_message("fallback: %u dictionary pages, %u PLAIN pages\n", dict_pages, plain_pages);
    assert_true(dict_pages >= 1 && plain_pages >= 1);
    /* Encoding stats agree with the pages. */
    bool seen_dict = false, seen_plain = false;
    for (uint32_t i = 0; i < cm->n_encoding_stats; i++) {
        const pq_page_encoding_stats *es = &cm->encoding_stats[i];
        if (es->page_type == PQ_PAGE_DATA_PAGE && es->encoding == PQ_ENC_RLE_DICTIONARY) {
            assert_int_equal(es->count, dict_pages);
            seen_dict = true;
        }
        if (es->page_type == PQ_PAGE_DATA_PAGE && es->encoding == PQ_ENC_PLAIN) {
            assert_int_equal(es->count, plain_pages);
            seen_plain = true;
        }
    }
    assert_true(seen_dict && seen_plain);
    /* Values: decode every page. */
    kn_column kc = {KN_PT_BYTE_ARRAY, 0, c.type, 0, 0};
    kn_out dout = {0}, out = {0};
    const uint8_t *base = chunk;
    uint8_t *raw = malloc(1 << 20);
    int32_t hl = (int32_t)pages[0].header_len;
    OK(kn_decompress(PQ_CODEC_ZSTD, base + hl, (size_t)pages[0].header.compressed_page_size, raw,
                     (size_t)pages[0].header.uncompressed_page_size, &err));
    dout.capacity = 40;
    dout.offsets = calloc(41, sizeof *dout.offsets);
    dout.bytes = malloc(4096);
    dout.bytes_capacity = 4096;
    OK(kn_decode_values(PQ_ENC_PLAIN, &kc, NULL, raw, (size_t)pages[0].header.uncompressed_page_size, 40,
                        &dout, 0, NULL, &err));
    kn_dict dict = {NULL, dout.offsets, dout.bytes, 40};
    out.capacity = n;
    out.offsets = calloc(n + 1, sizeof *out.offsets);
    out.bytes = malloc(n * 32);
    out.bytes_capacity = n * 32;
    uint64_t row = 0;
    for (uint32_t p = 1; p < np; p++) {
        const uint8_t *body = base + (pages[p].offset - pages[0].offset) + pages[p].header_len;
        decode_page(&pages[p], body, PQ_CODEC_ZSTD, &kc, &dict, &out, row);
        row += (uint64_t)pages[p].header.data_page.num_values;
    }
    assert_int_equal(row, n);
    assert_int_equal(out.offsets[n], pos);
    assert_memory_equal(out.bytes, c.data, (size_t)pos);
    free(raw);
    free(dout.offsets);
    free(dout.bytes);
    free(out.offsets);
    free(out.bytes);
    pa_free(chunk);
    pa_free(pages);
    pq_file_meta_release(m);
    free(c.offsets);
    free(c.data);
    unlink(path);
}

/* Statistics edge cases: truncated multi-byte strings, NaN, all-NaN pages. */
static void test_stats_edges(void **state)
{
    (void)state;
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.stats_truncate = 8;
    o.page_rows = 2;
    o.dictionary = false;
    pa_column c[2];
    memset(c, 0, sizeof c);
    /* Strings: "aaaaaaa\xc3\xa9zz" (cut inside é -> 7 bytes), "zzzzzzzz\x7f" -> "zzzzzzz{"? no:
     * max "zzzzzzz\xc3\xbfq" cut to "zzzzzzz" (7 bytes, before the 2-byte char) then 'z'+1. */
    const char *sv[4] = {"aaaaaaa\xc3\xa9zz", "b", "zzzzzzz\xc3\xbfq", "c"};
    int32_t off[5] = {0};
    char bytes[64];
    int32_t pos = 0;
    for (int i = 0; i < 4; i++) {
        memcpy(bytes + pos, sv[i], strlen(sv[i]));
        pos += (int32_t)strlen(sv[i]);
        off[i + 1] = pos;
    }
    c[0].type.id = PA_TYPE_VARCHAR;
    c[0].length = 4;
    c[0].data = bytes;
    c[0].offsets = off;
    double dv[4] = {NAN, NAN, 1.5, NAN};
    c[1].type.id = PA_TYPE_DOUBLE;
    c[1].length = 4;
    c[1].data = dv;
    pq_write_column d[2] = {{"s", c[0].type, false}, {"d", c[1].type, false}};
    const char *path = tmp_path("edges.parquet");
    pq_writer *w = NULL;
    OK(pq_writer_create(path, d, 2, &o, &w, &err));
    OK(pq_writer_write(w, c, 4, &err));
    OK(pq_writer_close(w, &err));
    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    const pq_statistics *s = &m->row_groups[0].columns[0].meta_data.statistics;
    assert_bin(s->min_value, (const uint8_t *)"aaaaaaa", 7, "string min");
    assert_bin(s->max_value, (const uint8_t *)"zzzzzz{", 7, "string max");
    assert_false(s->is_min_value_exact);
    assert_false(s->is_max_value_exact);
    /* The max bound really is above the value. */
    assert_true(memcmp("zzzzzz{", sv[2], 7) > 0);
    s = &m->row_groups[0].columns[1].meta_data.statistics;
    double one5 = 1.5;
    assert_bin(s->min_value, (const uint8_t *)&one5, 8, "double min without NaN");
    assert_bin(s->max_value, (const uint8_t *)&one5, 8, "double max without NaN");
    /* Page 0 of d holds only NaN: no ColumnIndex for that chunk, OffsetIndex kept. */
    const pq_column_chunk *dc = &m->row_groups[0].columns[1];
    assert_false(dc->has_column_index_offset);
    assert_true(dc->has_offset_index_offset);
    assert_true(m->row_groups[0].columns[0].has_column_index_offset);
    pq_file_meta_release(m);
    unlink(path);
}

/* Statistics, page index and dictionary can each be switched off. */
static void test_options_off(void **state)
{
    (void)state;
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.statistics = false;
    o.page_index = false;
    o.dictionary = false;
    o.codec = PQ_CODEC_UNCOMPRESSED;
    const char *path = tmp_path("off.parquet");
    write_file(path, &o, 500, 500, 1);
    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    for (uint32_t k = 0; k < N_COLS; k++) {
        const pq_column_chunk *cc = &m->row_groups[0].columns[k];
        assert_false(cc->meta_data.has_statistics);
        assert_false(cc->meta_data.has_dictionary_page_offset);
        assert_false(cc->has_column_index_offset || cc->has_offset_index_offset);
        for (uint32_t e = 0; e < cc->meta_data.n_encodings; e++)
            assert_int_not_equal(cc->meta_data.encodings[e], PQ_ENC_RLE_DICTIONARY);
    }
    pq_file_meta_release(m);
    unlink(path);
}

static void test_zero_rows(void **state)
{
    (void)state;
    const char *path = tmp_path("empty.parquet");
    write_file(path, NULL, 0, 1, 1);
    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    assert_int_equal(m->num_rows, 0);
    assert_int_equal(m->n_row_groups, 0);
    assert_int_equal(m->n_leaves, N_COLS);
    assert_non_null(m->created_by);
    assert_true(strncmp(m->created_by, "pista version ", 14) == 0);
    pq_file_meta_release(m);
    unlink(path);
}

static void test_key_value_and_created_by(void **state)
{
    (void)state;
    pq_writer_options o;
    pq_writer_options_init(&o);
    pq_key_value kv[2] = {{"origin", "test"}, {"flag", NULL}};
    o.key_value = kv;
    o.n_key_value = 2;
    o.created_by = "tester 1.0";
    pq_write_column d = {"x", {PA_TYPE_BIGINT, 0, 0}, false};
    int64_t v[3] = {3, -1, 2};
    pa_column c = {.type = {PA_TYPE_BIGINT, 0, 0}, .length = 3, .data = v, .offsets = NULL, .validity = NULL};
    const char *path = tmp_path("kv.parquet");
    pq_writer *w = NULL;
    OK(pq_writer_create(path, &d, 1, &o, &w, &err));
    OK(pq_writer_write(w, &c, 3, &err));
    OK(pq_writer_close(w, &err));
    pq_file_meta *m = NULL;
    OK(pq_footer_read(path, &m, &err));
    assert_string_equal(m->created_by, "tester 1.0");
    assert_int_equal(m->n_key_value_metadata, 2);
    assert_string_equal(m->key_value_metadata[0].key, "origin");
    assert_string_equal(m->key_value_metadata[0].value, "test");
    assert_null(m->key_value_metadata[1].value);
    assert_int_equal(m->schema[1].repetition, PQ_REP_REQUIRED);
    int64_t lo = -1, hi = 3;
    assert_bin(m->row_groups[0].columns[0].meta_data.statistics.min_value, (uint8_t *)&lo, 8, "min");
    assert_bin(m->row_groups[0].columns[0].meta_data.statistics.max_value, (uint8_t *)&hi, 8, "max");
    pq_file_meta_release(m);
    unlink(path);
}

static void test_bad_input(void **state)
{
    (void)state;
    pq_write_column d[2] = {{"a", {PA_TYPE_INTEGER, 0, 0}, false}, {"m", {PA_TYPE_DECIMAL, 9, 2}, true}};
    int32_t a[2] = {1, 2};
    int64_t mv[2] = {5, 1000000000};   /* 10^9 has 10 digits: not DECIMAL(9,2) */
    uint8_t valid = 1;                  /* row 1 NULL */
    pa_column c[2] = {{.type = {PA_TYPE_INTEGER, 0, 0}, .length = 2, .data = a, .validity = &valid},
                      {.type = {PA_TYPE_DECIMAL, 9, 2}, .length = 2, .data = mv}};
    const char *path = tmp_path("bad.parquet");
    pq_writer *w = NULL;
    /* NULL in a REQUIRED column. */
    OK(pq_writer_create(path, d, 2, NULL, &w, &err));
    assert_int_equal(pq_writer_write(w, c, 2, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "not nullable"));
    pa_err_clear(&err);
    assert_int_equal(pq_writer_write(w, c, 1, &err), PA_EINVAL);   /* sticky */
    pa_err_clear(&err);
    assert_int_equal(pq_writer_close(w, &err), PA_EINVAL);
    pa_err_clear(&err);
    assert_false(exists(path));
    /* DECIMAL beyond its precision. */
    c[0].validity = NULL;
    OK(pq_writer_create(path, d, 2, NULL, &w, &err));
    assert_int_equal(pq_writer_write(w, c, 2, &err), PA_EOVERFLOW);
    assert_non_null(strstr(err.msg, "10000000.00"));
    pa_err_clear(&err);
    pq_writer_abort(w);
    /* Type mismatch. */
    c[1].type.scale = 3;
    OK(pq_writer_create(path, d, 2, NULL, &w, &err));
    assert_int_equal(pq_writer_write(w, c, 1, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "DECIMAL(9,3)"));
    pa_err_clear(&err);
    pq_writer_abort(w);
    assert_false(exists(path));
    /* Bad declarations and options. */
    pq_write_column dup[2] = {{"a", {PA_TYPE_INTEGER, 0, 0}, false}, {"a", {PA_TYPE_BIGINT, 0, 0}, false}};
    assert_int_equal(pq_writer_create(path, dup, 2, NULL, &w, &err), PA_EINVAL);
    pa_err_clear(&err);
    pq_write_column wide = {"w", {PA_TYPE_DECIMAL, 39, 2}, false};
    assert_int_equal(pq_writer_create(path, &wide, 1, NULL, &w, &err), PA_EINVAL);
    pa_err_clear(&err);
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.codec = PQ_CODEC_LZO;
    assert_int_equal(pq_writer_create(path, d, 2, &o, &w, &err), PA_EUNSUPPORTED);
    pa_err_clear(&err);
    pq_writer_options_init(&o);
    o.data_page_version = 3;
    assert_int_equal(pq_writer_create(path, d, 2, &o, &w, &err), PA_EINVAL);
    pa_err_clear(&err);
    assert_false(exists(path));
}

static void test_unwritable(void **state)
{
    (void)state;
    pq_write_column d = {"x", {PA_TYPE_INTEGER, 0, 0}, false};
    pq_writer *w = NULL;
    assert_int_equal(pq_writer_create("/nonexistent-pista-dir/x.parquet", &d, 1, NULL, &w, &err), PA_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-pista-dir/.x.parquet.tmp."));
    pa_err_clear(&err);
}

/* A write that fails midway (file size limit: EFBIG, like ENOSPC) is
 * PA_EIO naming the file, and leaves no file behind. */
static void test_write_error(void **state)
{
    (void)state;
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 100000;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.codec = PQ_CODEC_UNCOMPRESSED;
    o.row_group_rows = 20000;
    const char *path = tmp_path("full.parquet");
    pq_write_column d[N_COLS];
    decls(d, false);
    pq_writer *w = NULL;
    OK(pq_writer_create(path, d, N_COLS, &o, &w, &err));
    int rc = PA_OK;
    for (int64_t first = 0; first < 200000 && rc == PA_OK; first += 10000) {
        batch b;
        batch_make(&b, first, 10000, 0);
        rc = pq_writer_write(w, b.cols, 10000, &err);
        batch_free(&b);
    }
    if (rc == PA_OK)
        rc = pq_writer_close(w, &err);
    else
        assert_int_equal(pq_writer_close(w, NULL), PA_EIO);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, PA_EIO);
    assert_non_null(strstr(err.msg, ".full.parquet.tmp."));
    pa_err_clear(&err);
    assert_false(exists(path));
    assert_false(tmp_exists(path));
}

/* Make every allocation of a small write fail in turn. */
static void test_alloc_failures(void **state)
{
    (void)state;
    const char *path = tmp_path("fault.parquet");
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.row_group_rows = 60;
    o.page_bytes = 64;
    batch b;
    batch_make(&b, 0, 100, 1);
    pq_write_column d[N_COLS];
    decls(d, true);
    pa_mem_stats before, after;
    int64_t k;
    int failures = 0;
    for (k = 0; k < 100000; k++) {
        pa_host_mem_stats(&before);
        pq_writer *w = NULL;
        pa_fault_alloc_after(k);
        int rc = pq_writer_create(path, d, N_COLS, &o, &w, &err);
        if (rc == PA_OK) {
            rc = pq_writer_write(w, b.cols, 100, &err);
            int rc2 = pq_writer_close(w, &err);
            if (rc == PA_OK)
                rc = rc2;
        }
        pa_fault_alloc_clear();
        pa_host_mem_stats(&after);
        assert_int_equal(after.current, before.current);   /* no leak */
        if (rc == PA_OK)
            break;
        assert_int_equal(rc, PA_ENOMEM);
        assert_false(exists(path));
        assert_false(tmp_exists(path));
        pa_err_clear(&err);
        failures++;
    }
    print_message("allocation failure injected at %d points before success\n", failures);
    assert_true(failures > 20);
    batch_free(&b);
    readback rb;
    read_and_check(path, 1, o.codec, 1, &rb);
    assert_int_equal(rb.rows, 100);
    assert_int_equal(rb.row_groups, 2);
    unlink(path);
}

static int setup(void **state)
{
    (void)state;
    pa_err_init(&err);
    const char *t = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/pista_writer_XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rmdir(tmp_dir);
    pa_err_close(&err);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_bounded),   /* first: it reads the process-wide peak */
        cmocka_unit_test(test_codecs_v1),
        cmocka_unit_test(test_codecs_v2),
        cmocka_unit_test(test_one_row_pages),
        cmocka_unit_test(test_default_options_big_pages),
        cmocka_unit_test(test_large_chunk),
        cmocka_unit_test(test_dictionary_fallback),
        cmocka_unit_test(test_stats_edges),
        cmocka_unit_test(test_options_off),
        cmocka_unit_test(test_zero_rows),
        cmocka_unit_test(test_key_value_and_created_by),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

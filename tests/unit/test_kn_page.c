/*
 * test_kn_page.c - page-level round trips: random columns of every supported
 * (physical, engine) pair, with and without NULLs, encoded by the kn_
 * encoders into v1 and v2 data pages (and dictionary pages), then measured
 * and decoded at a row offset and compared row by row. Also several pages
 * into one output, and batches of compressed page jobs on a thread pool.
 */
#include "kn_testutil.h"

typedef struct combo {
    kn_column col;
    int encodings[6];
} combo;

#define END -1
static combo combos(int i, bool *ok)
{
    static const struct { int pt; pa_type_id t; int tl; int enc[6]; } c[] = {
        {KN_PT_BOOLEAN, PA_TYPE_BOOLEAN, 0, {KN_ENC_PLAIN, KN_ENC_RLE, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_INT32, PA_TYPE_INTEGER, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_BINARY_PACKED, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, KN_ENC_PLAIN_DICTIONARY, END}},
        {KN_PT_INT32, PA_TYPE_DATE, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_BINARY_PACKED, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_INT32, PA_TYPE_DECIMAL, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_BINARY_PACKED, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_INT32, PA_TYPE_BIGINT, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_BINARY_PACKED, END}},
        {KN_PT_INT64, PA_TYPE_BIGINT, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_BINARY_PACKED, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_INT64, PA_TYPE_DECIMAL, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_BINARY_PACKED, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_FLOAT, PA_TYPE_DOUBLE, 0, {KN_ENC_PLAIN, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_DOUBLE, PA_TYPE_DOUBLE, 0, {KN_ENC_PLAIN, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, {KN_ENC_PLAIN, KN_ENC_DELTA_LENGTH_BYTE_ARRAY, KN_ENC_DELTA_BYTE_ARRAY, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_VARCHAR, 7, {KN_ENC_PLAIN, KN_ENC_DELTA_BYTE_ARRAY, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 6, {KN_ENC_PLAIN, KN_ENC_BYTE_STREAM_SPLIT, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 8, {KN_ENC_PLAIN, KN_ENC_RLE_DICTIONARY, END}},
        {KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 16, {KN_ENC_PLAIN, KN_ENC_BYTE_STREAM_SPLIT, END}},
        {KN_PT_BYTE_ARRAY, PA_TYPE_DECIMAL, 0, {KN_ENC_PLAIN, KN_ENC_RLE_DICTIONARY, END}},
    };
    combo r;
    memset(&r, 0, sizeof r);
    *ok = i < (int)(sizeof c / sizeof c[0]);
    if (!*ok)
        return r;
    r.col = kcol(c[i].pt, c[i].t, c[i].tl, 0);
    memcpy(r.encodings, c[i].enc, sizeof r.encodings);
    return r;
}

/* Decode a dictionary page into a kn_dict backed by `o`. */
static void decode_dict(const kn_column *col, const uint8_t *page, size_t size, uint32_t n,
                        tout *o, kn_dict *d)
{
    pa_err err;
    pa_err_init(&err);
    kn_column dc = *col;
    dc.max_def_level = 0;
    uint64_t bytes = 0;
    KN_OK(kn_measure_values(KN_ENC_PLAIN, &dc, NULL, page, size, n, &bytes, &err));
    tout_make(o, &dc, n, (size_t)bytes);
    size_t used = 0;
    KN_OK(kn_decode_values(KN_ENC_PLAIN, &dc, NULL, page, size, n, &o->out, 0, &used, &err));
    assert_int_equal(used, size);
    d->values = o->out.values;
    d->offsets = o->out.offsets;
    d->bytes = o->out.bytes;
    d->n = n;
    pa_err_close(&err);
}

/* Build one page of t, decode it at row `at` and compare. */
static void round_trip(const tcol *t, int enc, int version)
{
    pa_err err;
    pa_err_init(&err);
    uint8_t *dpage = NULL;
    size_t dsize = 0, size = 0;
    uint32_t dn = 0, lsize = 0;
    uint8_t *body = build_page(t, enc, version, &dpage, &dsize, &dn, &size, &lsize);
    tout dout;
    memset(&dout, 0, sizeof dout);
    kn_dict dict;
    memset(&dict, 0, sizeof dict);
    if (dpage)
        decode_dict(&t->col, dpage, dsize, dn, &dout, &dict);

    kn_page pg;
    memset(&pg, 0, sizeof pg);
    pg.version = version;
    pg.encoding = enc;
    pg.def_level_encoding = KN_ENC_RLE;
    pg.num_values = (int32_t)t->n;
    pg.num_nulls = (int32_t)(t->n - t->n_valid);
    if (version == 1) {
        pg.data = body;
        pg.size = size;
    } else {
        pg.levels = body;
        pg.def_levels_size = lsize;
        pg.data = body + lsize;
        pg.size = size - lsize;
    }
    kn_page_info info;
    KN_OK(kn_page_measure(&pg, &t->col, dpage ? &dict : NULL, &info, &err));
    assert_int_equal(info.rows, t->n);
    assert_int_equal(info.non_null, t->n_valid);
    uint64_t want_bytes = is_string_col(&t->col) ? (uint64_t)t->offsets[t->n] : 0;
    assert_int_equal(info.string_bytes, want_bytes);

    const size_t at = 5, start = 3;
    tout o;
    tout_make(&o, &t->col, t->n + at, (size_t)info.string_bytes + start);
    if (o.out.offsets)
        o.out.offsets[at] = (int32_t)start;
    KN_OK(kn_page_decode(&pg, &t->col, dpage ? &dict : NULL, &o.out, at, &err));
    if (o.out.offsets) {
        /* expect_rows compares lengths and bytes, independent of the start. */
        assert_int_equal(o.out.offsets[at + t->n], start + info.string_bytes);
    }
    expect_rows(t, &o.out, at);
    tout_free(&o);
    tout_free(&dout);
    free(dpage);
    free(body);
    pa_err_close(&err);
}

static void test_round_trips(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 7, 9, 300, 5000};
    rng r = {0x1234567};
    int cases = 0;
    for (int ci = 0;; ci++) {
        bool ok;
        combo c = combos(ci, &ok);
        if (!ok)
            break;
        for (int e = 0; c.encodings[e] != END; e++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (int opt = 0; opt < 2; opt++)
                    for (int version = 1; version <= 2; version++)
                        for (int pct = 0; pct <= (opt ? 100 : 0); pct += 50)
                            for (int distinct = 0; distinct <= 4; distinct += 4) {
                                kn_column col = c.col;
                                col.max_def_level = (int16_t)opt;
                                tcol t;
                                tcol_make(&t, col, sizes[si], pct == 50 ? 30 : pct,
                                          (uint64_t)distinct, &r);
                                round_trip(&t, c.encodings[e], version);
                                tcol_free(&t);
                                cases++;
                            }
    }
    print_message("%d page round trips\n", cases);
}

/* Three pages of one chunk into one output, strings appended in order. */
static void test_pages_into_one_chunk(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {99};
    kn_column col = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 1);
    static const int encs[3] = {KN_ENC_PLAIN, KN_ENC_DELTA_BYTE_ARRAY, KN_ENC_DELTA_LENGTH_BYTE_ARRAY};
    tcol t[3];
    uint8_t *body[3];
    size_t size[3], total_rows = 0, total_bytes = 0;
    for (int k = 0; k < 3; k++) {
        tcol_make(&t[k], col, 100 + 37 * (size_t)k, 20, 0, &r);
        uint8_t *dp = NULL;
        size_t ds;
        uint32_t dn, ls;
        body[k] = build_page(&t[k], encs[k], 1, &dp, &ds, &dn, &size[k], &ls);
        total_rows += t[k].n;
        total_bytes += (size_t)t[k].offsets[t[k].n];
    }
    tout o;
    tout_make(&o, &col, total_rows, total_bytes);
    o.out.offsets[0] = 0;
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        kn_page pg = {.version = 1, .encoding = encs[k], .def_level_encoding = KN_ENC_RLE,
                      .num_values = (int32_t)t[k].n, .data = body[k], .size = size[k]};
        KN_OK(kn_page_decode(&pg, &col, NULL, &o.out, at, &err));
        expect_rows(&t[k], &o.out, at);
        at += t[k].n;
    }
    assert_int_equal(o.out.offsets[total_rows], total_bytes);
    /* A buffer one byte short is refused, not overrun. */
    o.out.bytes_capacity = total_bytes - 1;
    kn_page pg = {.version = 1, .encoding = encs[2], .def_level_encoding = KN_ENC_RLE,
                  .num_values = (int32_t)t[2].n, .data = body[2], .size = size[2]};
    assert_int_equal(kn_page_decode(&pg, &col, NULL, &o.out, at - t[2].n, &err), PA_EINVAL);
    for (int k = 0; k < 3; k++) {
        free(body[k]);
        tcol_free(&t[k]);
    }
    tout_free(&o);
    pa_err_close(&err);
}

/* Batches of compressed page jobs (v1 and v2) on a thread pool. */
static void test_page_jobs(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    pa_threadpool *tp = NULL;
    KN_OK(pa_threadpool_create(3, &tp, &err));
    rng r = {7};
    static const int codecs[] = {KN_CODEC_UNCOMPRESSED, KN_CODEC_SNAPPY, KN_CODEC_GZIP,
                                 KN_CODEC_LZ4, KN_CODEC_ZSTD, KN_CODEC_LZ4_RAW};
    enum { NJ = 12 };
    kn_column col = kcol(KN_PT_INT64, PA_TYPE_BIGINT, 0, 1);
    kn_page_job jobs[NJ];
    tcol t[NJ];
    uint8_t *stored[NJ], *scratch[NJ];
    size_t rows = 0;
    for (int k = 0; k < NJ; k++) {
        /* Multiples of 8 rows: jobs run at once must not share a byte of
         * the validity bitmap (kn_page_decode_batch). */
        tcol_make(&t[k], col, 1000 + (size_t)k * 16, 10, 50, &r);
        rows += t[k].n;
    }
    tout o;
    tout_make(&o, &col, rows, 0);
    size_t at = 0;
    for (int k = 0; k < NJ; k++) {
        int version = 1 + (k & 1), codec = codecs[k % 6];
        uint8_t *dp = NULL;
        size_t ds, size;
        uint32_t dn, ls;
        uint8_t *body = build_page(&t[k], KN_ENC_DELTA_BINARY_PACKED, version, &dp, &ds, &dn, &size, &ls);
        size_t lv = version == 2 ? ls : 0;
        size_t bound = kn_compress_bound(codec, size - lv);
        stored[k] = malloc(lv + bound + 1);
        memcpy(stored[k], body, lv);
        size_t clen;
        KN_OK(kn_compress(codec, 0, body + lv, size - lv, stored[k] + lv, bound, &clen, &err));
        scratch[k] = malloc(size + 1);
        memset(&jobs[k], 0, sizeof jobs[k]);
        jobs[k].src = stored[k];
        jobs[k].src_size = lv + clen;
        jobs[k].uncompressed_size = size;
        jobs[k].codec = codec;
        jobs[k].v2_is_compressed = 1;
        jobs[k].scratch = scratch[k];
        jobs[k].scratch_size = size;
        jobs[k].page = (kn_page){.version = version, .encoding = KN_ENC_DELTA_BINARY_PACKED,
                                 .def_level_encoding = KN_ENC_RLE, .num_values = (int32_t)t[k].n,
                                 .num_nulls = (int32_t)(t[k].n - t[k].n_valid),
                                 .def_levels_size = (uint32_t)lv};
        jobs[k].col = col;
        jobs[k].out = o.out;
        jobs[k].row_offset = at;
        jobs[k].status = 12345;
        at += t[k].n;
        free(body);
    }
    KN_OK(kn_page_decode_batch(jobs, NJ, tp, &err));
    at = 0;
    for (int k = 0; k < NJ; k++) {
        assert_int_equal(jobs[k].status, PA_OK);
        expect_rows(&t[k], &o.out, at);
        at += t[k].n;
    }
    /* One corrupt job fails alone; the others still decode. */
    stored[3][jobs[3].src_size / 2] ^= 0xff;
    jobs[3].src_size -= 3;
    int rc = kn_page_decode_batch(jobs, NJ, tp, &err);
    assert_int_not_equal(rc, PA_OK);
    assert_int_not_equal(jobs[3].status, PA_OK);
    assert_int_equal(jobs[4].status, PA_OK);
    assert_true(err.code != PA_OK);
    for (int k = 0; k < NJ; k++) {
        free(stored[k]);
        free(scratch[k]);
        tcol_free(&t[k]);
    }
    tout_free(&o);
    pa_threadpool_destroy(tp);
    pa_err_close(&err);
}

/* Deprecated BIT_PACKED levels, the spec example (Encodings.md): 0..7 at
 * width 3 packed MSB first is 00000101 00111001 01110111; with max level 7
 * only the last row is valid. */
static void test_bit_packed_levels(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 7);
    uint8_t body[3 + 4] = {0x05, 0x39, 0x77, 0x2a, 0, 0, 0};
    kn_page pg = {.version = 1, .encoding = KN_ENC_PLAIN, .def_level_encoding = KN_ENC_BIT_PACKED,
                  .num_values = 8, .data = body, .size = sizeof body};
    int32_t vals[8];
    uint8_t valid[1];
    kn_out out = {.values = vals, .validity = valid, .capacity = 8};
    KN_OK(kn_page_decode(&pg, &col, NULL, &out, 0, &err));
    assert_int_equal(valid[0], 0x80);
    assert_int_equal(vals[7], 42);
    for (int i = 0; i < 7; i++)
        assert_int_equal(vals[i], 0);
    pa_err_close(&err);
}

/* A hand-made v1 page: OPTIONAL INT32, rows [7, NULL, NULL, 9]. Levels
 * 1,0,0,1 as one bit-packed group: header 0x03, byte 0b00001001; length 2. */
static void test_hand_v1_page(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 1);
    uint8_t body[] = {2, 0, 0, 0, 0x03, 0x09, 7, 0, 0, 0, 9, 0, 0, 0};
    kn_page pg = {.version = 1, .encoding = KN_ENC_PLAIN, .def_level_encoding = KN_ENC_RLE,
                  .num_values = 4, .data = body, .size = sizeof body};
    kn_page_info info;
    KN_OK(kn_page_measure(&pg, &col, NULL, &info, &err));
    assert_int_equal(info.non_null, 2);
    int32_t vals[6] = {-1, -1, -1, -1, -1, -1};
    uint8_t valid[1] = {0xff};
    kn_out out = {.values = vals, .validity = valid, .capacity = 6};
    KN_OK(kn_page_decode(&pg, &col, NULL, &out, 1, &err));
    assert_int_equal(vals[0], -1);
    assert_int_equal(vals[1], 7);
    assert_int_equal(vals[2], 0);
    assert_int_equal(vals[3], 0);
    assert_int_equal(vals[4], 9);
    assert_int_equal(vals[5], -1);
    assert_int_equal(valid[0], 0xff & ~(1 << 2) & ~(1 << 3));
    /* Output too small for the row offset. */
    assert_int_equal(kn_page_decode(&pg, &col, NULL, &out, 3, &err), PA_EINVAL);
    pa_err_close(&err);
}

/* Pages whose levels disagree with the schema (issue 18: a REQUIRED column
 * turned OPTIONAL in the footer, or back) are corrupt, never shifted values.
 * Each case is checked against its message; err is reset in between (the
 * first error is kept). */
static void expect_mismatch(const kn_page *pg, int max_def, const char *text)
{
    pa_err err;
    pa_err_init(&err);
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, max_def);
    int32_t vals[8];
    uint8_t valid[1];
    kn_out out = {.values = vals, .validity = max_def ? valid : NULL, .capacity = 8};
    assert_int_equal(kn_page_decode(pg, &col, NULL, &out, 0, &err), PA_ECORRUPT);
    if (!strstr(err.msg, text))
        fail_msg("expected '%s' in: %s", text, err.msg);
    pa_err_close(&err);
}

static void test_levels_mismatch(void **state)
{
    (void)state;
    /* v1, 4 rows: an RLE run of 6 levels of 1, then 6 values. */
    uint8_t run6[] = {2, 0, 0, 0, 0x0C, 0x01, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0};
    kn_page v1 = {.version = 1, .encoding = KN_ENC_PLAIN, .def_level_encoding = KN_ENC_RLE,
                  .num_values = 4, .data = run6, .size = sizeof run6};
    expect_mismatch(&v1, 1, "levels hold more than the page's 4 values");
    /* v1, 4 rows: a run of 4, then a second run the page has no rows for. */
    uint8_t two_runs[] = {4, 0, 0, 0, 0x08, 0x01, 0x04, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
    v1.data = two_runs, v1.size = sizeof two_runs;
    expect_mismatch(&v1, 1, "definition levels do not match the schema");
    /* An OPTIONAL page read as REQUIRED: the levels' 6 bytes are left over. */
    uint8_t opt[] = {2, 0, 0, 0, 0x08, 0x01, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
    v1.data = opt, v1.size = sizeof opt;
    expect_mismatch(&v1, 0, "6 bytes after the page's 4 values");
    /* v2 pages say what their levels are. */
    uint8_t lv[] = {0x08, 0x01}, vals[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
    kn_page v2 = {.version = 2, .encoding = KN_ENC_PLAIN, .num_values = 4, .levels = lv,
                  .def_levels_size = sizeof lv, .data = vals, .size = sizeof vals};
    expect_mismatch(&v2, 0, "schema says the column is REQUIRED");
    v2.def_levels_size = 0;
    v2.levels = NULL;
    expect_mismatch(&v2, 1, "schema says the column is OPTIONAL");
    v2.num_nulls = 1;
    expect_mismatch(&v2, 0, "1 NULLs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_v1_page),
        cmocka_unit_test(test_bit_packed_levels),
        cmocka_unit_test(test_levels_mismatch),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_pages_into_one_chunk),
        cmocka_unit_test(test_page_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

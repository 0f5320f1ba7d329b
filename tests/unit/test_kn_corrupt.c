/*
 * test_kn_corrupt.c - corrupt and truncated input: every truncation point and
 * random byte flips (fixed seeds) of encoded pages for every encoding, of
 * dictionary pages and of compressed streams. The contract under test: a
 * status, or a result inside the buffers sized by kn_page_measure - never a
 * crash or an out-of-bounds access (run under ASan/UBSan in CI; outputs are
 * exact-size heap buffers so any overrun is caught).
 */
#include "kn_testutil.h"

typedef struct cfg {
    int pt;
    pa_type_id t;
    int tl;
    int enc;
} cfg;

static const cfg cfgs[] = {
    {KN_PT_BOOLEAN, PA_TYPE_BOOLEAN, 0, KN_ENC_PLAIN},
    {KN_PT_BOOLEAN, PA_TYPE_BOOLEAN, 0, KN_ENC_RLE},
    {KN_PT_INT32, PA_TYPE_INTEGER, 0, KN_ENC_PLAIN},
    {KN_PT_INT32, PA_TYPE_INTEGER, 0, KN_ENC_DELTA_BINARY_PACKED},
    {KN_PT_INT64, PA_TYPE_BIGINT, 0, KN_ENC_DELTA_BINARY_PACKED},
    {KN_PT_INT64, PA_TYPE_BIGINT, 0, KN_ENC_RLE_DICTIONARY},
    {KN_PT_DOUBLE, PA_TYPE_DOUBLE, 0, KN_ENC_BYTE_STREAM_SPLIT},
    {KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, KN_ENC_PLAIN},
    {KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, KN_ENC_DELTA_LENGTH_BYTE_ARRAY},
    {KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, KN_ENC_DELTA_BYTE_ARRAY},
    {KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, KN_ENC_RLE_DICTIONARY},
    {KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 12, KN_ENC_PLAIN},
    {KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_VARCHAR, 5, KN_ENC_DELTA_BYTE_ARRAY},
};
#define NCFG (sizeof cfgs / sizeof cfgs[0])

/* Measure then decode one (possibly corrupt) page the way a scan would. */
static void try_page(const kn_column *col, const kn_page *pg, const kn_dict *dict, int *ok, int *bad)
{
    pa_err err;
    pa_err_init(&err);
    kn_page_info info;
    int rc = kn_page_measure(pg, col, dict, &info, &err);
    if (rc == PA_OK) {
        assert_true(info.non_null <= info.rows);
        if (info.string_bytes > (1u << 24)) {
            rc = PA_ECORRUPT;   /* absurd sizes are possible from measure; a scan caps them */
        } else {
            tout o;
            tout_make(&o, col, info.rows, (size_t)info.string_bytes);
            rc = kn_page_decode(pg, col, dict, &o.out, 0, &err);
            if (rc == PA_OK && o.out.offsets) {
                for (uint64_t i = 0; i < info.rows; i++)
                    assert_true(o.out.offsets[i] <= o.out.offsets[i + 1]);
                assert_true((uint64_t)o.out.offsets[info.rows] <= info.string_bytes);
            }
            tout_free(&o);
        }
    }
    if (rc == PA_OK) {
        (*ok)++;
    } else {
        assert_true(rc == PA_ECORRUPT || rc == PA_EINVAL || rc == PA_EUNSUPPORTED);
        if (rc == PA_ECORRUPT)
            assert_true(strlen(err.msg) > 0);
        (*bad)++;
    }
    pa_err_close(&err);
}

static void test_pages(void **state)
{
    (void)state;
    rng r = {2024};
    int ok = 0, bad = 0;
    for (size_t c = 0; c < NCFG; c++)
        for (int version = 1; version <= 2; version++) {
            kn_column col = kcol(cfgs[c].pt, cfgs[c].t, cfgs[c].tl, 1);
            tcol t;
            tcol_make(&t, col, 70, 20, cfgs[c].enc == KN_ENC_RLE_DICTIONARY ? 9 : 0, &r);
            uint8_t *dp = NULL;
            size_t ds = 0, size;
            uint32_t dn = 0, ls;
            uint8_t *body = build_page(&t, cfgs[c].enc, version, &dp, &ds, &dn, &size, &ls);
            /* decode the dictionary once (it is not corrupted here) */
            tout dout;
            memset(&dout, 0, sizeof dout);
            kn_dict dict;
            memset(&dict, 0, sizeof dict);
            if (dp) {
                pa_err err;
                pa_err_init(&err);
                kn_column dc = col;
                dc.max_def_level = 0;
                uint64_t b;
                KN_OK(kn_measure_values(KN_ENC_PLAIN, &dc, NULL, dp, ds, dn, &b, &err));
                tout_make(&dout, &dc, dn, (size_t)b);
                KN_OK(kn_decode_values(KN_ENC_PLAIN, &dc, NULL, dp, ds, dn, &dout.out, 0, NULL, &err));
                dict = (kn_dict){dout.out.values, dout.out.offsets, dout.out.bytes, dn};
                pa_err_close(&err);
            }
            kn_page pg = {.version = version, .encoding = cfgs[c].enc, .def_level_encoding = KN_ENC_RLE,
                          .num_values = (int32_t)t.n, .num_nulls = (int32_t)(t.n - t.n_valid)};
            /* Every truncation point: copy into an exact-size buffer. */
            for (size_t cut = 0; cut <= size; cut++) {
                uint8_t *b = malloc(cut ? cut : 1);
                memcpy(b, body, cut);
                if (version == 1) {
                    pg.data = b;
                    pg.size = cut;
                } else {
                    size_t lv = cut < ls ? cut : ls;
                    pg.levels = b;
                    pg.def_levels_size = (uint32_t)lv;
                    pg.data = b + lv;
                    pg.size = cut - lv;
                }
                try_page(&col, &pg, dp ? &dict : NULL, &ok, &bad);
                free(b);
            }
            /* Random flips of 1-3 bytes. */
            uint8_t *b = malloc(size + 1);
            for (int trial = 0; trial < 400; trial++) {
                memcpy(b, body, size);
                int flips = 1 + (int)rng_below(&r, 3);
                for (int f = 0; f < flips && size; f++)
                    b[rng_below(&r, size)] ^= (uint8_t)(1 + rng_below(&r, 255));
                if (version == 1) {
                    pg.data = b;
                    pg.size = size;
                } else {
                    pg.levels = b;
                    pg.def_levels_size = ls;
                    pg.data = b + ls;
                    pg.size = size - ls;
                }
                try_page(&col, &pg, dp ? &dict : NULL, &ok, &bad);
            }
            free(b);
            tout_free(&dout);
            free(dp);
            free(body);
            tcol_free(&t);
        }
    print_message("pages: %d decoded, %d refused\n", ok, bad);
    assert_true(bad > 0 && ok > 0);
}

/* Corrupt dictionary pages and indices past the dictionary. */
static void test_dictionary_pages(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {31};
    kn_column col = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 0);
    tcol t;
    tcol_make(&t, col, 50, 0, 0, &r);
    kn_values in = tcol_view(&t);
    size_t bound = kn_encode_bound(KN_ENC_PLAIN, &col, &in, NULL, 50), len;
    uint8_t *page = malloc(bound);
    KN_OK(kn_encode_values(KN_ENC_PLAIN, &col, &in, NULL, 50, page, bound, &len, &err));
    for (int trial = 0; trial < 2000; trial++) {
        uint8_t *b = malloc(len);
        memcpy(b, page, len);
        b[rng_below(&r, len)] ^= (uint8_t)(1 + rng_below(&r, 255));
        size_t cut = trial % 3 == 0 ? rng_below(&r, len + 1) : len;
        uint64_t bytes;
        if (kn_measure_values(KN_ENC_PLAIN, &col, NULL, b, cut, 50, &bytes, &err) == PA_OK) {
            tout o;
            tout_make(&o, &col, 50, (size_t)bytes);
            int rc = kn_decode_values(KN_ENC_PLAIN, &col, NULL, b, cut, 50, &o.out, 0, NULL, &err);
            if (rc == PA_OK)
                assert_int_equal(o.out.offsets[50], bytes);
            tout_free(&o);
        }
        free(b);
    }
    /* Indices outside a 2-entry dictionary: width 2, RLE run of value 3. */
    const int32_t doff[3] = {0, 1, 2};
    kn_dict dict = {NULL, doff, (const uint8_t *)"xy", 2};
    const uint8_t idx[3] = {2, 0x08, 0x03};
    kn_page pg = {.version = 1, .encoding = KN_ENC_RLE_DICTIONARY, .num_values = 4, .data = idx, .size = 3};
    kn_page_info info;
    assert_int_equal(kn_page_measure(&pg, &col, &dict, &info, &err), PA_ECORRUPT);
    int32_t off[5] = {0};
    uint8_t bytes[8];
    kn_out o = {.offsets = off, .bytes = bytes, .capacity = 4, .bytes_capacity = 8};
    assert_int_equal(kn_page_decode(&pg, &col, &dict, &o, 0, &err), PA_ECORRUPT);
    /* No dictionary at all. */
    assert_int_not_equal(kn_page_decode(&pg, &col, NULL, &o, 0, &err), PA_OK);
    free(page);
    tcol_free(&t);
    pa_err_close(&err);
}

static void test_codecs(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {55};
    static const int codecs[] = {KN_CODEC_SNAPPY, KN_CODEC_GZIP, KN_CODEC_LZ4, KN_CODEC_ZSTD,
                                 KN_CODEC_LZ4_RAW};
    uint8_t src[600], out[600];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)("abcabcabd"[i % 9] + (rng_below(&r, 10) == 0));
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        size_t bound = kn_compress_bound(codecs[c], sizeof src), len;
        uint8_t *cmp = malloc(bound);
        KN_OK(kn_compress(codecs[c], 0, src, sizeof src, cmp, bound, &len, &err));
        int ok = 0;
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *b = malloc(cut ? cut : 1);
            memcpy(b, cmp, cut);
            if (kn_decompress(codecs[c], b, cut, out, sizeof out, &err) == PA_OK)
                ok++;
            free(b);
        }
        assert_int_equal(ok, 0);   /* a truncated stream never gives all the bytes */
        for (int trial = 0; trial < 500; trial++) {
            uint8_t *b = malloc(len);
            memcpy(b, cmp, len);
            b[rng_below(&r, len)] ^= (uint8_t)(1 + rng_below(&r, 255));
            (void)kn_decompress(codecs[c], b, len, out, sizeof out, &err);
            free(b);
        }
        free(cmp);
    }
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_dictionary_pages),
        cmocka_unit_test(test_codecs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_kconf_decode.c - conformance of kn_decode_pages on the device named
 * by PISTA_TEST_DEVICE (default "cpu"): random data pages (v1 and v2, PLAIN,
 * dictionary, DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT and RLE boolean
 * values, REQUIRED and OPTIONAL columns of every fixed-width
 * type the device decodes, NULL rates from none to all) built with the
 * project's encoders decode, as one batch into one column at row offsets
 * that share validity words, to exactly what the host decoder
 * (kn_page_job_run) gives; thousands of truncated, bit-flipped and
 * mislabelled pages are refused exactly when the host decoder refuses them
 * and otherwise decode to its values; a job the device does not decode is
 * refused as unsupported; a failing batch reports the page's index.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

static dv_device *dev;
static dv_stream *stream;

static int setup(void **state)
{
    (void)state;
    const char *s = getenv("PISTA_TEST_DEVICE");
    dv_options o = {.spec = s && *s ? s : "cpu", .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &dev, &e) != PA_OK || dv_stream_create(dev, &stream, &e) != PA_OK)
        fail_msg("cannot open device: %s", e.msg);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dv_stream_destroy(stream);
    dv_close(dev);
    return 0;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static uint64_t rnd64(void) { return (uint64_t)rnd() << 32 | rnd(); }

/* A column kind the device decodes. */
typedef struct kind {
    int32_t ptype;
    pa_type type;
    int pw;           /* PLAIN bytes per value (0: dictionary only) */
    int ow;           /* engine bytes per value */
} kind;

static const kind KINDS[] = {
    {KN_PT_INT32, {PA_TYPE_INTEGER, 0, 0}, 4, 4},
    {KN_PT_INT32, {PA_TYPE_DATE, 0, 0}, 4, 4},
    {KN_PT_INT32, {PA_TYPE_DECIMAL, 9, 2}, 4, 8},
    {KN_PT_INT64, {PA_TYPE_BIGINT, 0, 0}, 8, 8},
    {KN_PT_FLOAT, {PA_TYPE_DOUBLE, 0, 0}, 4, 8},
    {KN_PT_DOUBLE, {PA_TYPE_DOUBLE, 0, 0}, 8, 8},
    {KN_PT_BYTE_ARRAY, {PA_TYPE_DECIMAL, 18, 3}, 0, 8},
    {KN_PT_BOOLEAN, {PA_TYPE_BOOLEAN, 0, 0}, -1, 1},   /* PLAIN: one bit per value */
};

enum { E_PLAIN, E_DICT, E_DELTA, E_BSS, E_RLE };

/* Encodings a kind has: PLAIN unless dictionary-only, dictionary unless
 * BOOLEAN, DELTA for INT32 and INT64, BYTE_STREAM_SPLIT for the numbers of
 * a PLAIN width, RLE for BOOLEAN. */
static bool has_enc(const kind *k, int e)
{
    switch (e) {
    case E_PLAIN: return k->pw != 0;
    case E_DICT: return k->pw >= 0;
    case E_DELTA: return k->ptype == KN_PT_INT32 || k->ptype == KN_PT_INT64;
    case E_BSS: return k->pw > 0;
    default: return k->pw < 0;
    }
}

static int pick_enc(const kind *k)
{
    for (;;) {
        int e = (int)(rnd() % 5);
        if (has_enc(k, e))
            return e;
    }
}
#define N_KINDS (int)(sizeof KINDS / sizeof KINDS[0])

/* One page on the host: its bytes, header fields and dictionary. */
typedef struct hpage {
    kind k;
    int maxd;
    kn_page pg;        /* data/levels unset: the job's src holds the bytes */
    uint8_t *bytes;
    size_t size;
    uint8_t *dict;     /* engine values, k.ow bytes each */
    uint64_t dict_n;
} hpage;

static void free_hpage(hpage *p)
{
    free(p->bytes);
    free(p->dict);
}

/* A random finite value of a PLAIN width (floats from integers). */
static uint64_t plain_value(const kind *k)
{
    if (k->ptype == KN_PT_FLOAT) {
        float f = (float)((int32_t)rnd() % 100000) / 8.0f;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    if (k->ptype == KN_PT_DOUBLE) {
        double d = (double)(int64_t)rnd64() / 1024.0;
        uint64_t u;
        memcpy(&u, &d, 8);
        return u;
    }
    uint64_t v = rnd64();
    return k->pw == 4 ? (uint32_t)v : v;
}

/* Validity of n rows (all valid when maxd is 0, else null_pct% NULL) as
 * definition levels in lv; returns the valid count. */
static int page_levels(int version, int maxd, int n, int null_pct, uint8_t *lv, size_t lcap, size_t *lsize)
{
    uint8_t *valid = calloc((size_t)n / 8 + 2, 1);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (maxd == 0 || (int)(rnd() % 100) >= null_pct) {
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
            m++;
        }
    *lsize = 0;
    if (maxd > 0)
        assert_int_equal(kn_encode_def_levels(valid, 0, (size_t)n, version == 1, lv, lcap, lsize, NULL), PA_OK);
    free(valid);
    return m;
}

/* m indices into a dictionary of dict_n entries as a dictionary page's
 * values: the bit width byte (sometimes wider than needed, up to 32), then
 * runs and noise, so both run kinds occur. */
static void dict_indices(uint64_t dict_n, int m, uint8_t *vals, size_t vcap, size_t *vsize)
{
    int bw = 0;
    while (((uint64_t)1 << bw) < dict_n)
        bw++;
    if (rnd() % 4 == 0)
        bw += (int)(rnd() % (uint32_t)(33 - bw));
    uint32_t *ix = malloc(((size_t)m + 1) * 4), run = 0;
    for (int i = 0; i < m; i++) {
        if (run == 0 || rnd() % 16 == 0)
            run = rnd() % (uint32_t)dict_n;
        ix[i] = rnd() % 3 ? run : rnd() % (uint32_t)dict_n;
    }
    vals[0] = (uint8_t)bw;
    assert_int_equal(kn_rle_encode(ix, (size_t)m, bw, vals + 1, vcap - 1, vsize, NULL), PA_OK);
    (*vsize)++;
    free(ix);
}

/* The page's bytes (levels, then values) and header fields. */
static uint8_t *page_finish(kn_page *pg, int version, int32_t encoding, int n, int m, const uint8_t *lv, size_t lsize,
                            const uint8_t *vals, size_t vsize, size_t *size)
{
    *size = lsize + vsize;
    uint8_t *b = malloc(*size + 1);
    memcpy(b, lv, lsize);
    memcpy(b + lsize, vals, vsize);
    pg->version = version;
    pg->encoding = encoding;
    pg->def_level_encoding = KN_ENC_RLE;
    pg->num_values = n;
    pg->num_nulls = n - m;
    pg->def_levels_size = version == 2 ? (uint32_t)lsize : 0;
    return b;
}

static hpage make_page(int version, int enc, int maxd, const kind *k, int n, int null_pct)
{
    bool dict = enc == E_DICT;
    hpage p;
    memset(&p, 0, sizeof p);
    p.k = *k;
    p.maxd = maxd;
    size_t lcap = (size_t)n + 64, vcap = (size_t)n * 10 + 2048, lsize = 0, vsize = 0;
    uint8_t *lv = malloc(lcap), *vals = malloc(vcap);
    int m = page_levels(version, maxd, n, null_pct, lv, lcap, &lsize);
    if (dict) {
        p.dict_n = 1 + rnd() % (rnd() % 2 ? 5 : 300);
        p.dict = malloc(p.dict_n * (size_t)k->ow + 1);
        for (uint64_t d = 0; d < p.dict_n; d++) {
            uint64_t v = rnd64();
            memcpy(p.dict + d * (uint64_t)k->ow, &v, (size_t)k->ow);
        }
        dict_indices(p.dict_n, m, vals, vcap, &vsize);
    } else if (enc == E_DELTA) {
        /* Runs, noise and the extremes of the physical type (full-range deltas). */
        bool i32 = k->ptype == KN_PT_INT32;
        int64_t *ev = malloc(((size_t)m + 1) * 8);
        int32_t *ev32 = malloc(((size_t)m + 1) * 4);
        int64_t cur = 0;
        for (int i = 0; i < m; i++) {
            uint32_t r = rnd() % 10;
            cur = r < 5 ? (int64_t)((uint64_t)cur + rnd() % 7) : r < 8 ? (int64_t)rnd64() : r == 8 ? INT64_MIN : INT64_MAX;
            if (i32)
                cur = r == 8 ? INT32_MIN : r == 9 ? INT32_MAX : (int32_t)cur;
            ev[i] = cur;
            ev32[i] = (int32_t)cur;
        }
        kn_column col = {k->ptype, 0, k->type, 0, 0};
        kn_values in = {k->ow == 4 ? (void *)ev32 : (void *)ev, NULL, NULL, (uint64_t)m};
        size_t cap = kn_encode_bound(KN_ENC_DELTA_BINARY_PACKED, &col, &in, NULL, (size_t)m);
        assert_true(cap > 0 && cap <= vcap);
        assert_int_equal(kn_encode_values(KN_ENC_DELTA_BINARY_PACKED, &col, &in, NULL, (size_t)m, vals, vcap, &vsize,
                                          NULL), PA_OK);
        free(ev);
        free(ev32);
    } else if (enc == E_RLE) {   /* a 4-byte length, then the values at bit width 1 (runs and noise) */
        uint32_t *bv = malloc(((size_t)m + 1) * 4), run = 0;
        for (int i = 0; i < m; i++) {
            if (rnd() % 16 == 0)
                run ^= 1;
            bv[i] = rnd() % 4 ? run : rnd() % 2;
        }
        assert_int_equal(kn_rle_encode(bv, (size_t)m, 1, vals + 4, vcap - 4, &vsize, NULL), PA_OK);
        uint32_t len = (uint32_t)vsize;
        memcpy(vals, &len, 4);
        vsize += 4;
        free(bv);
    } else if (enc == E_BSS) {   /* byte b of value i at b * m + i */
        for (int i = 0; i < m; i++) {
            uint64_t v = plain_value(k);
            for (int b = 0; b < k->pw; b++)
                vals[(size_t)b * (size_t)m + (size_t)i] = (uint8_t)(v >> (8 * b));
        }
        vsize = (size_t)m * (size_t)k->pw;
    } else if (k->pw < 0) {
        memset(vals, 0, ((size_t)m + 7) / 8);
        for (int i = 0; i < m; i++)
            if (rnd() % 2)
                vals[i >> 3] |= (uint8_t)(1u << (i & 7));
        vsize = ((size_t)m + 7) / 8;
    } else {
        for (int i = 0; i < m; i++) {
            uint64_t v = plain_value(k);
            memcpy(vals + vsize, &v, (size_t)k->pw);
            vsize += (size_t)k->pw;
        }
    }
    int32_t e = dict ? (rnd() % 2 ? KN_ENC_RLE_DICTIONARY : KN_ENC_PLAIN_DICTIONARY)
                : enc == E_DELTA ? KN_ENC_DELTA_BINARY_PACKED
                : enc == E_BSS   ? KN_ENC_BYTE_STREAM_SPLIT
                : enc == E_RLE   ? KN_ENC_RLE
                                 : KN_ENC_PLAIN;
    p.bytes = page_finish(&p.pg, version, e, n, m, lv, lsize, vals, vsize, &p.size);
    free(lv);
    free(vals);
    return p;
}

static kn_column column_of(const hpage *p)
{
    return (kn_column){p->k.ptype, 0, p->k.type, (int16_t)p->maxd, 0};
}

/* The host decoder's result for page p at row `at` of an output of cap rows
 * (values and validity zeroed first); its status. */
static int host_decode(const hpage *p, uint64_t at, uint8_t *values, uint8_t *validity, uint64_t cap)
{
    kn_page_job j;
    memset(&j, 0, sizeof j);
    j.src = p->bytes;
    j.src_size = p->size;
    j.uncompressed_size = p->size;
    j.codec = KN_CODEC_UNCOMPRESSED;
    j.page = p->pg;
    j.col = column_of(p);
    j.dict = (kn_dict){p->dict, NULL, NULL, p->dict_n};
    j.out = (kn_out){values, NULL, NULL, validity, cap, 0};
    j.row_offset = at;
    pa_err e;
    pa_err_init(&e);
    int rc = kn_page_job_run(&j, &e);
    pa_err_close(&e);
    return rc;
}

/* Decode pages[0..n) on the device as one batch: page i at rows at[i] of
 * one output of cap rows, ow bytes per row. Returns the call's result (call,
 * then sync, message in err); statuses in status[]; the output in values
 * and validity (host copies). */
static int device_decode(hpage *pages, int n, const uint64_t *at, uint64_t cap, int ow, uint8_t *values,
                         uint8_t *validity, int32_t *status, pa_err *err)
{
    size_t vbytes = (size_t)cap * (size_t)ow + 1, wbytes = ((size_t)cap + 31) / 32 * 4 + 4;
    uint8_t *dvals = NULL, *dvalid = NULL;
    assert_int_equal(dv_alloc(dev, vbytes, (void **)&dvals, NULL), PA_OK);
    assert_int_equal(dv_alloc(dev, wbytes, (void **)&dvalid, NULL), PA_OK);
    /* Output poisoned: every slot and bit of a decoded page must be written. */
    uint8_t *fill = malloc(vbytes > wbytes ? vbytes : wbytes);
    memset(fill, 0xa5, vbytes > wbytes ? vbytes : wbytes);
    assert_int_equal(dv_copy_async(stream, dvals, fill, vbytes, DV_COPY_H2D, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, dvalid, fill, wbytes, DV_COPY_H2D, NULL), PA_OK);
    kn_page_job *jobs = calloc((size_t)n, sizeof *jobs);
    void **bufs = calloc((size_t)n * 3, sizeof *bufs);
    for (int i = 0; i < n; i++) {
        hpage *p = &pages[i];
        kn_page_job *j = &jobs[i];
        assert_int_equal(dv_alloc(dev, p->size + 1, &bufs[3 * i], NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, bufs[3 * i], p->bytes, p->size + 1, DV_COPY_H2D, NULL), PA_OK);
        j->src = bufs[3 * i];
        j->src_size = p->size;
        j->uncompressed_size = p->size;
        j->codec = KN_CODEC_UNCOMPRESSED;
        j->page = p->pg;
        j->col = column_of(p);
        if (p->dict) {
            size_t db = p->dict_n * (size_t)p->k.ow;
            assert_int_equal(dv_alloc(dev, db, &bufs[3 * i + 1], NULL), PA_OK);
            assert_int_equal(dv_copy_async(stream, bufs[3 * i + 1], p->dict, db, DV_COPY_H2D, NULL), PA_OK);
            j->dict = (kn_dict){bufs[3 * i + 1], NULL, NULL, p->dict_n};
        }
        if (p->dict || p->pg.encoding == KN_ENC_DELTA_BINARY_PACKED || p->pg.encoding == KN_ENC_RLE) {
            size_t sb = ((size_t)(p->pg.num_values > 0 ? p->pg.num_values : 0) + 1) * 8;
            assert_int_equal(dv_alloc(dev, sb, &bufs[3 * i + 2], NULL), PA_OK);
            j->scratch = bufs[3 * i + 2];
            j->scratch_size = sb;
        }
        j->out = (kn_out){dvals, NULL, NULL, p->maxd > 0 || rnd() % 2 ? dvalid : NULL, cap, 0};
        j->row_offset = at[i];
        j->status = -12345;
    }
    kn_page_job *djobs = NULL;
    assert_int_equal(dv_alloc(dev, (size_t)n * sizeof *jobs + 1, (void **)&djobs, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, djobs, jobs, (size_t)n * sizeof *jobs, DV_COPY_H2D, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    free(fill);
    kn_ctx kn = {dev, stream};
    int rc = kn_decode_pages(&kn, djobs, n, err);
    int rs = dv_stream_sync(stream, rc == PA_OK ? err : NULL);
    if (rc == PA_OK)
        rc = rs;
    dv_clear_fault(dev);
    assert_int_equal(dv_copy_async(stream, jobs, djobs, (size_t)n * sizeof *jobs, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, values, dvals, (size_t)cap * (size_t)ow, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, validity, dvalid, ((size_t)cap + 7) / 8, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    for (int i = 0; i < n; i++) {
        status[i] = jobs[i].status;
        for (int b = 0; b < 3; b++)
            if (bufs[3 * i + b])
                dv_free(dev, bufs[3 * i + b]);
    }
    dv_free(dev, djobs);
    dv_free(dev, dvals);
    dv_free(dev, dvalid);
    free(jobs);
    free(bufs);
    return rc;
}

static bool bit(const uint8_t *v, uint64_t i) { return (v[i >> 3] >> (i & 7)) & 1; }

/* Compare rows [at, at+n) of the device's output with the host's. */
static void same_rows(const hpage *p, int idx, uint64_t at, const uint8_t *dv, const uint8_t *dvalid,
                      const uint8_t *hv, const uint8_t *hvalid)
{
    int ow = p->k.ow;
    for (uint64_t r = at; r < at + (uint64_t)p->pg.num_values; r++) {
        if (p->maxd > 0 && bit(dvalid, r) != bit(hvalid, r))
            fail_msg("page %d (v%d, enc %d, ptype %d, maxd %d): row %llu validity %d, host %d", idx, p->pg.version,
                     p->pg.encoding, p->k.ptype, p->maxd, (unsigned long long)(r - at), bit(dvalid, r),
                     bit(hvalid, r));
        if (memcmp(dv + r * (uint64_t)ow, hv + r * (uint64_t)ow, (size_t)ow) != 0)
            fail_msg("page %d (v%d, enc %d, ptype %d, maxd %d, %d rows): row %llu value differs", idx,
                     p->pg.version, p->pg.encoding, p->k.ptype, p->maxd, p->pg.num_values,
                     (unsigned long long)(r - at));
    }
}

/* Random pages of one kind as one batch, each decoded right after the one
 * before (row offsets not multiples of 8 or 32), against the host. */
static void test_batches(void **state)
{
    (void)state;
    for (int round = 0; round < 32; round++) {
        const kind *k = &KINDS[round % N_KINDS];
        int n = 1 + (int)(rnd() % 24), maxd = round % 3 == 0 ? 0 : 1;
        hpage *pages = calloc((size_t)n, sizeof *pages);
        uint64_t *at = calloc((size_t)n, sizeof *at), cap = (uint64_t)(rnd() % 5);
        for (int i = 0; i < n; i++) {
            int rows = rnd() % 8 == 0 ? (int)(rnd() % 3) : (int)(rnd() % 3000);
            int null_pct = (int)(rnd() % 5) * 25;   /* 0, 25, 50, 75, 100 */
            pages[i] = make_page(1 + (int)(rnd() % 2), pick_enc(k), maxd, k, rows, null_pct);
            at[i] = cap;
            cap += (uint64_t)rows;
        }
        cap += rnd() % 40;
        uint8_t *hv = calloc((size_t)cap * 8 + 8, 1), *hvalid = calloc((size_t)cap / 8 + 8, 1);
        uint8_t *dv = calloc((size_t)cap * 8 + 8, 1), *dvalid = calloc((size_t)cap / 8 + 8, 1);
        for (int i = 0; i < n; i++)
            if (host_decode(&pages[i], at[i], hv, hvalid, cap) != PA_OK)
                fail_msg("round %d: the host refused page %d that it encoded", round, i);
        int32_t *status = calloc((size_t)n, sizeof *status);
        pa_err e;
        pa_err_init(&e);
        int rc = device_decode(pages, n, at, cap, k->ow, dv, dvalid, status, &e);
        if (rc != PA_OK)
            fail_msg("round %d: the device refused the batch: %s", round, e.msg);
        pa_err_close(&e);
        for (int i = 0; i < n; i++) {
            assert_int_equal(status[i], PA_OK);
            same_rows(&pages[i], i, at[i], dv, dvalid, hv, hvalid);
        }
        for (int i = 0; i < n; i++)
            free_hpage(&pages[i]);
        free(pages);
        free(at);
        free(hv);
        free(hvalid);
        free(dv);
        free(dvalid);
        free(status);
    }
}

/* Damage page p: cut it short, flip bytes, or change a header field. */
static void damage(hpage *p)
{
    switch (rnd() % 6) {
    case 0:
        if (p->size)
            p->size = rnd() % p->size;
        break;
    case 1:
    case 2:
        for (int f = 1 + (int)(rnd() % 3); f > 0 && p->size; f--)
            p->bytes[rnd() % p->size] ^= (uint8_t)(1u << (rnd() % 8));
        break;
    case 3:
        if (p->size)
            p->bytes[rnd() % (p->size < 8 ? p->size : 8)] = (uint8_t)rnd();   /* headers of runs, prefixes */
        break;
    case 4: p->pg.num_nulls += rnd() % 2 ? 1 : -1; break;
    default:
        if (p->pg.version == 2)
            p->pg.def_levels_size = (uint32_t)(rnd() % (p->size + 2));
        else
            p->pg.num_values += rnd() % 2 ? 1 : -1;
        break;
    }
}

/* Damaged pages: refused exactly when the host refuses them, with the same
 * status, else the same rows. Each page gets rows of its own in the batch
 * output so that a refused page's partial writes stay out of the others. */
static void test_damaged(void **state)
{
    (void)state;
    int refused = 0, total = 0;
    for (int round = 0; round < 60; round++) {
        const kind *k = &KINDS[rnd() % N_KINDS];
        int n = 50, maxd = (int)(rnd() % 2);
        hpage *pages = calloc((size_t)n, sizeof *pages);
        uint64_t *at = calloc((size_t)n, sizeof *at), cap = 0;
        for (int i = 0; i < n; i++) {
            int rows = (int)(rnd() % 200);
            pages[i] = make_page(1 + (int)(rnd() % 2), pick_enc(k), maxd, k, rows, (int)(rnd() % 3) * 30);
            damage(&pages[i]);
            at[i] = cap;
            cap += (uint64_t)rows + 64;   /* room for a num_values one larger, on word boundaries */
            cap = (cap + 31) / 32 * 32;
        }
        uint8_t *hv = calloc((size_t)cap * 8 + 8, 1), *hvalid = calloc((size_t)cap / 8 + 8, 1);
        uint8_t *dv = calloc((size_t)cap * 8 + 8, 1), *dvalid = calloc((size_t)cap / 8 + 8, 1);
        int32_t *want = calloc((size_t)n, sizeof *want), *status = calloc((size_t)n, sizeof *status);
        for (int i = 0; i < n; i++)
            want[i] = host_decode(&pages[i], at[i], hv, hvalid, cap);
        pa_err e;
        pa_err_init(&e);
        int rc = device_decode(pages, n, at, cap, k->ow, dv, dvalid, status, &e);
        int first = -1;
        for (int i = 0; i < n; i++) {
            total++;
            if (want[i] != PA_OK && first < 0)
                first = i;
            if (status[i] != want[i])
                fail_msg("round %d page %d (v%d, enc %d, ptype %d, maxd %d): device status %d, host %d", round, i,
                         pages[i].pg.version, pages[i].pg.encoding, k->ptype, maxd, status[i], want[i]);
            if (want[i] == PA_OK)
                same_rows(&pages[i], i, at[i], dv, dvalid, hv, hvalid);
            else
                refused++;
        }
        if (first >= 0) {
            assert_int_not_equal(rc, PA_OK);
            assert_non_null(strstr(e.msg, "of the batch"));
        } else {
            assert_int_equal(rc, PA_OK);
        }
        pa_err_close(&e);
        for (int i = 0; i < n; i++)
            free_hpage(&pages[i]);
        free(pages);
        free(at);
        free(hv);
        free(hvalid);
        free(dv);
        free(dvalid);
        free(want);
        free(status);
    }
    /* Both outcomes occurred often enough to mean something. */
    assert_true(refused > total / 5);
    assert_true(refused < total * 4 / 5);
}

/* What the device does not decode is refused as unsupported, never decoded
 * differently: BIT_PACKED levels, DELTA string encodings, BYTE_STREAM_SPLIT
 * of booleans, DELTA strings and PLAIN FIXED_LEN_BYTE_ARRAY strings, RLE
 * of anything but booleans. */
static void test_unsupported(void **state)
{
    (void)state;
    hpage p = make_page(1, E_PLAIN, 1, &KINDS[0], 10, 0);
    kn_page_job j;
    memset(&j, 0, sizeof j);
    j.codec = KN_CODEC_UNCOMPRESSED;
    j.page = p.pg;
    j.col = column_of(&p);
    assert_true(kn_decode_pages_supported(&j));
    j.page.def_level_encoding = KN_ENC_BIT_PACKED;
    assert_false(kn_decode_pages_supported(&j));
    j.page = p.pg;
    j.page.encoding = KN_ENC_DELTA_LENGTH_BYTE_ARRAY;
    assert_false(kn_decode_pages_supported(&j));
    j.page.encoding = KN_ENC_BYTE_STREAM_SPLIT;
    assert_true(kn_decode_pages_supported(&j));
    j.page.encoding = KN_ENC_RLE;   /* RLE values of an INT32 column */
    assert_false(kn_decode_pages_supported(&j));
    j.page = p.pg;
    j.codec = KN_CODEC_SNAPPY;
    assert_false(kn_decode_pages_supported(&j));
    j.codec = KN_CODEC_UNCOMPRESSED;
    j.col.ptype = KN_PT_BYTE_ARRAY;
    j.col.type.id = PA_TYPE_VARCHAR;
    assert_true(kn_decode_pages_supported(&j));   /* PLAIN strings */
    j.page.encoding = KN_ENC_DELTA_LENGTH_BYTE_ARRAY;   /* strings' lengths DELTA_BINARY_PACKED */
    assert_true(kn_decode_pages_supported(&j));
    j.page.encoding = KN_ENC_DELTA_BYTE_ARRAY;
    assert_false(kn_decode_pages_supported(&j));
    j.page.encoding = KN_ENC_PLAIN;
    j.col.ptype = KN_PT_FIXED_LEN_BYTE_ARRAY;   /* PLAIN FIXED_LEN_BYTE_ARRAY strings: the host's */
    j.col.type_length = 4;
    assert_false(kn_decode_pages_supported(&j));
    j.page.encoding = KN_ENC_RLE_DICTIONARY;    /* their dictionary pages decode there */
    assert_true(kn_decode_pages_supported(&j));
    j.col.type_length = 0;
    j.col = column_of(&p);
    j.col.ptype = KN_PT_BOOLEAN;
    j.col.type.id = PA_TYPE_BOOLEAN;
    j.page.encoding = KN_ENC_RLE;   /* RLE booleans decode there */
    assert_true(kn_decode_pages_supported(&j));
    j.page.encoding = KN_ENC_BYTE_STREAM_SPLIT;   /* not defined for booleans */
    assert_false(kn_decode_pages_supported(&j));

    /* On the device: the BIT_PACKED page of a batch is refused, the other decodes. */
    hpage two[2] = {make_page(2, E_PLAIN, 1, &KINDS[3], 40, 10), p};
    two[1].pg.def_level_encoding = KN_ENC_BIT_PACKED;
    uint64_t at[2] = {0, 64};
    uint8_t vals[128 * 8], valid[32];
    int32_t status[2];
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(device_decode(two, 2, at, 128, 8, vals, valid, status, &e), PA_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "page 1 of the batch"));
    assert_int_equal(status[0], PA_OK);
    assert_int_equal(status[1], PA_EUNSUPPORTED);
    pa_err_close(&e);
    free_hpage(&two[0]);
    free_hpage(&p);
}

/* ------------------------------------------------------------- strings
 *
 * VARCHAR pages (BYTE_ARRAY PLAIN, DELTA_LENGTH_BYTE_ARRAY, dictionary) decode into offsets and
 * bytes: the pages of one output one after the other, the first at a start
 * byte the caller put in the offsets, each later one where the one before
 * ended, as the host decoder gives them decoding the pages in order. */

typedef struct spage {
    int maxd;
    kn_page pg;
    uint8_t *bytes;
    size_t size;
    int32_t *doff;      /* dictionary pages: the dictionary's strings */
    uint8_t *dbytes;
    uint64_t dict_n;
} spage;

static void free_spage(spage *p)
{
    free(p->bytes);
    free(p->doff);
    free(p->dbytes);
}

static uint32_t str_len(void) { return rnd() % 10 == 0 ? rnd() % 400 : rnd() % 24; }

static void str_fill(uint8_t *b, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        b[i] = rnd() % 4 ? (uint8_t)('a' + rnd() % 26) : (uint8_t)rnd();
}

enum { S_PLAIN, S_DICT, S_DLBA };

static spage make_spage(int version, int enc, int maxd, int n, int null_pct)
{
    bool dict = enc == S_DICT;
    spage p;
    memset(&p, 0, sizeof p);
    p.maxd = maxd;
    size_t lcap = (size_t)n + 64, vcap = (size_t)n * 410 + 2048, lsize = 0, vsize = 0;
    uint8_t *lv = malloc(lcap), *vals = malloc(vcap);
    int m = page_levels(version, maxd, n, null_pct, lv, lcap, &lsize);
    if (dict) {
        p.dict_n = 1 + rnd() % (rnd() % 2 ? 4 : 200);
        p.doff = malloc((p.dict_n + 1) * 4);
        p.dbytes = malloc(p.dict_n * 400 + 1);
        p.doff[0] = 0;
        for (uint64_t d = 0; d < p.dict_n; d++) {
            uint32_t len = str_len();
            str_fill(p.dbytes + p.doff[d], len);
            p.doff[d + 1] = p.doff[d] + (int32_t)len;
        }
        dict_indices(p.dict_n, m, vals, vcap, &vsize);
    } else if (enc == S_DLBA) {   /* the project's encoder: lengths DELTA_BINARY_PACKED, then the bytes */
        int32_t *off = malloc(((size_t)m + 1) * 4);
        uint8_t *sb = malloc((size_t)m * 400 + 1);
        off[0] = 0;
        for (int i = 0; i < m; i++) {
            uint32_t len = str_len();
            str_fill(sb + off[i], len);
            off[i + 1] = off[i] + (int32_t)len;
        }
        kn_column col = {KN_PT_BYTE_ARRAY, 0, {PA_TYPE_VARCHAR, 0, 0}, 0, 0};
        kn_values in = {NULL, off, sb, (uint64_t)m};
        size_t cap = kn_encode_bound(KN_ENC_DELTA_LENGTH_BYTE_ARRAY, &col, &in, NULL, (size_t)m);
        assert_true(cap > 0 && cap <= vcap);
        assert_int_equal(kn_encode_values(KN_ENC_DELTA_LENGTH_BYTE_ARRAY, &col, &in, NULL, (size_t)m, vals, vcap,
                                          &vsize, NULL), PA_OK);
        free(off);
        free(sb);
    } else {
        for (int i = 0; i < m; i++) {
            uint32_t len = str_len();
            memcpy(vals + vsize, &len, 4);
            str_fill(vals + vsize + 4, len);
            vsize += 4 + (size_t)len;
        }
    }
    int32_t e = dict ? (rnd() % 2 ? KN_ENC_RLE_DICTIONARY : KN_ENC_PLAIN_DICTIONARY)
                : enc == S_DLBA ? KN_ENC_DELTA_LENGTH_BYTE_ARRAY
                                : KN_ENC_PLAIN;
    p.bytes = page_finish(&p.pg, version, e, n, m, lv, lsize, vals, vsize, &p.size);
    free(lv);
    free(vals);
    return p;
}

static kn_column str_column(int maxd) { return (kn_column){KN_PT_BYTE_ARRAY, 0, {PA_TYPE_VARCHAR, 0, 0}, (int16_t)maxd, 0}; }

/* One output of a batch: its pages [first, first + n) of the batch, rows
 * from `at`, strings from byte `start`. */
typedef struct sgroup {
    int first, n, maxd;
    uint64_t at, cap, bcap;
    int32_t start;
    int32_t *offsets;   /* cap + 1 */
    uint8_t *bytes;     /* bcap */
    uint8_t *validity;  /* whole words */
} sgroup;

static void sgroup_alloc(sgroup *g)
{
    g->offsets = malloc((g->cap + 1) * 4);
    g->bytes = malloc(g->bcap + 1);
    g->validity = malloc((g->cap + 31) / 32 * 4 + 4);
    memset(g->offsets, 0xa5, (g->cap + 1) * 4);
    memset(g->bytes, 0xa5, g->bcap + 1);
    memset(g->validity, 0xa5, (g->cap + 31) / 32 * 4 + 4);
    g->offsets[g->at] = g->start;
}

/* The host's answer: the group's pages decoded in order, a page after a
 * refused one refused as kn_decode_pages does; the statuses in want. */
static void host_strings(spage *pages, sgroup *g, int32_t *want)
{
    bool ok = true;
    uint64_t at = g->at;
    for (int i = g->first; i < g->first + g->n; i++) {
        spage *p = &pages[i];
        if (!ok) {
            want[i] = PA_EINVAL;
            at += (uint64_t)(p->pg.num_values > 0 ? p->pg.num_values : 0);
            continue;
        }
        kn_page_job j;
        memset(&j, 0, sizeof j);
        j.src = p->bytes;
        j.src_size = p->size;
        j.uncompressed_size = p->size;
        j.codec = KN_CODEC_UNCOMPRESSED;
        j.page = p->pg;
        j.col = str_column(g->maxd);
        if (p->doff)
            j.dict = (kn_dict){NULL, p->doff, p->dbytes, p->dict_n};
        j.out = (kn_out){NULL, g->offsets, g->bytes, g->validity, g->cap, g->bcap};
        j.row_offset = at;
        pa_err e;
        pa_err_init(&e);
        want[i] = kn_page_job_run(&j, &e);
        pa_err_close(&e);
        ok = want[i] == PA_OK;
        at += (uint64_t)(p->pg.num_values > 0 ? p->pg.num_values : 0);
    }
}

/* The groups' pages as one batch on the device; the outputs into each
 * group's (device) copies, statuses into status. */
static int device_strings(spage *pages, int np, sgroup *hg, sgroup *dg, int ng, int32_t *status, pa_err *err)
{
    kn_page_job *jobs = calloc((size_t)np, sizeof *jobs);
    void **bufs = calloc((size_t)np * 3 + (size_t)ng * 3, sizeof *bufs);
    for (int gi = 0; gi < ng; gi++) {
        sgroup *g = &dg[gi];
        *g = hg[gi];
        g->offsets = NULL, g->bytes = NULL, g->validity = NULL;
        sgroup_alloc(g);   /* poisoned, the start set */
        void **b = &bufs[(size_t)np * 3 + (size_t)gi * 3];
        size_t ob = (g->cap + 1) * 4, vb = (g->cap + 31) / 32 * 4 + 4;
        assert_int_equal(dv_alloc(dev, ob, &b[0], NULL), PA_OK);
        assert_int_equal(dv_alloc(dev, g->bcap + 1, &b[1], NULL), PA_OK);
        assert_int_equal(dv_alloc(dev, vb, &b[2], NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, b[0], g->offsets, ob, DV_COPY_H2D, NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, b[1], g->bytes, g->bcap + 1, DV_COPY_H2D, NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, b[2], g->validity, vb, DV_COPY_H2D, NULL), PA_OK);
        uint64_t at = g->at;
        for (int i = g->first; i < g->first + g->n; i++) {
            spage *p = &pages[i];
            kn_page_job *j = &jobs[i];
            assert_int_equal(dv_alloc(dev, p->size + 1, &bufs[3 * i], NULL), PA_OK);
            assert_int_equal(dv_copy_async(stream, bufs[3 * i], p->bytes, p->size + 1, DV_COPY_H2D, NULL), PA_OK);
            j->src = bufs[3 * i];
            j->src_size = p->size;
            j->uncompressed_size = p->size;
            j->codec = KN_CODEC_UNCOMPRESSED;
            j->page = p->pg;
            j->col = str_column(g->maxd);
            if (p->doff) {
                size_t db = (p->dict_n + 1) * 4 + (size_t)p->doff[p->dict_n];
                uint8_t *h = malloc(db + 1);
                memcpy(h, p->doff, (p->dict_n + 1) * 4);
                memcpy(h + (p->dict_n + 1) * 4, p->dbytes, (size_t)p->doff[p->dict_n]);
                assert_int_equal(dv_alloc(dev, db + 1, &bufs[3 * i + 1], NULL), PA_OK);
                assert_int_equal(dv_copy_async(stream, bufs[3 * i + 1], h, db, DV_COPY_H2D, NULL), PA_OK);
                assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
                free(h);
                j->dict = (kn_dict){NULL, bufs[3 * i + 1], (uint8_t *)bufs[3 * i + 1] + (p->dict_n + 1) * 4,
                                    p->dict_n};
            }
            size_t sb = ((size_t)(p->pg.num_values > 0 ? p->pg.num_values : 0) + 1) * 12;
            assert_int_equal(dv_alloc(dev, sb, &bufs[3 * i + 2], NULL), PA_OK);
            j->scratch = bufs[3 * i + 2];
            j->scratch_size = sb;
            j->out = (kn_out){NULL, b[0], b[1], g->maxd > 0 || rnd() % 2 ? b[2] : NULL, g->cap, g->bcap};
            j->row_offset = at;
            j->status = -12345;
            at += (uint64_t)(p->pg.num_values > 0 ? p->pg.num_values : 0);
        }
    }
    kn_page_job *djobs = NULL;
    assert_int_equal(dv_alloc(dev, (size_t)np * sizeof *jobs + 1, (void **)&djobs, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, djobs, jobs, (size_t)np * sizeof *jobs, DV_COPY_H2D, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    kn_ctx kn = {dev, stream};
    int rc = kn_decode_pages(&kn, djobs, np, err);
    int rs = dv_stream_sync(stream, rc == PA_OK ? err : NULL);
    if (rc == PA_OK)
        rc = rs;
    dv_clear_fault(dev);
    assert_int_equal(dv_copy_async(stream, jobs, djobs, (size_t)np * sizeof *jobs, DV_COPY_D2H, NULL), PA_OK);
    for (int gi = 0; gi < ng; gi++) {
        sgroup *g = &dg[gi];
        void **b = &bufs[(size_t)np * 3 + (size_t)gi * 3];
        assert_int_equal(dv_copy_async(stream, g->offsets, b[0], (g->cap + 1) * 4, DV_COPY_D2H, NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, g->bytes, b[1], g->bcap + 1, DV_COPY_D2H, NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, g->validity, b[2], (g->cap + 31) / 32 * 4 + 4, DV_COPY_D2H, NULL),
                         PA_OK);
    }
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    for (int i = 0; i < np; i++)
        status[i] = jobs[i].status;
    for (int i = 0; i < np * 3 + ng * 3; i++)
        if (bufs[i])
            dv_free(dev, bufs[i]);
    dv_free(dev, djobs);
    free(jobs);
    free(bufs);
    return rc;
}

/* Page i of group g (rows from `at`) decoded alike on both sides. */
static void same_strings(const spage *p, int i, const sgroup *h, const sgroup *d, uint64_t at)
{
    uint64_t n = (uint64_t)p->pg.num_values;
    for (uint64_t r = at; r <= at + n; r++)
        if (h->offsets[r] != d->offsets[r])
            fail_msg("string page %d (v%d, enc %d, maxd %d, %llu rows): offset %llu is %d, host %d", i, p->pg.version,
                     p->pg.encoding, p->maxd, (unsigned long long)n, (unsigned long long)(r - at), d->offsets[r],
                     h->offsets[r]);
    for (uint64_t r = at; r < at + n; r++)
        if (h->maxd > 0 && bit(h->validity, r) != bit(d->validity, r))
            fail_msg("string page %d: row %llu validity %d, host %d", i, (unsigned long long)(r - at),
                     bit(d->validity, r), bit(h->validity, r));
    int32_t a = h->offsets[at], b = h->offsets[at + n];
    if (b > a && memcmp(h->bytes + a, d->bytes + a, (size_t)(b - a)) != 0)
        fail_msg("string page %d (v%d, enc %d, maxd %d): string bytes differ", i, p->pg.version, p->pg.encoding,
                 p->maxd);
}

/* Random string pages in up to three outputs of one batch, damaged or not;
 * the device's statuses and outputs are the host's. */
static void string_rounds(int rounds, bool damaged, int *refused, int *total)
{
    for (int round = 0; round < rounds; round++) {
        int ng = 1 + (int)(rnd() % 3), np = 0;
        sgroup hg[3], dg[3];
        spage pages[64];
        for (int gi = 0; gi < ng; gi++) {
            sgroup *g = &hg[gi];
            memset(g, 0, sizeof *g);
            g->first = np;
            g->n = 1 + (int)(rnd() % (damaged ? 20 : 12));
            g->maxd = (int)(rnd() % 2);
            g->at = rnd() % 5;
            g->start = (int32_t)(rnd() % 3 ? 0 : rnd() % 100);
            uint64_t rows = 0, bytes = 0;
            for (int i = 0; i < g->n; i++) {
                int n = rnd() % 8 == 0 ? (int)(rnd() % 3) : (int)(rnd() % (damaged ? 300 : 2500));
                spage *p = &pages[np++];
                *p = make_spage(1 + (int)(rnd() % 2), (int)(rnd() % 3), g->maxd, n, (int)(rnd() % 5) * 25);
                if (damaged && rnd() % 3 == 0) {
                    hpage hp = {.pg = p->pg, .bytes = p->bytes, .size = p->size};
                    damage(&hp);
                    p->pg = hp.pg;
                    p->size = hp.size;
                }
                rows += (uint64_t)n + 1;   /* room for a num_values one larger */
                bytes += p->size + (uint64_t)n * 400;
            }
            g->cap = g->at + rows + rnd() % 40;
            g->bcap = (uint64_t)g->start + bytes;
            sgroup_alloc(g);
        }
        int32_t want[64], status[64];
        for (int gi = 0; gi < ng; gi++)
            host_strings(pages, &hg[gi], want);
        pa_err e;
        pa_err_init(&e);
        int rc = device_strings(pages, np, hg, dg, ng, status, &e);
        bool any = false;
        for (int gi = 0; gi < ng; gi++) {
            uint64_t at = hg[gi].at;
            for (int i = hg[gi].first; i < hg[gi].first + hg[gi].n; i++) {
                (*total)++;
                if (status[i] != want[i])
                    fail_msg("round %d page %d (v%d, enc %d, maxd %d): device status %d, host %d (%s)", round, i,
                             pages[i].pg.version, pages[i].pg.encoding, hg[gi].maxd, status[i], want[i], e.msg);
                if (want[i] == PA_OK)
                    same_strings(&pages[i], i, &hg[gi], &dg[gi], at);
                else
                    (*refused)++, any = true;
                at += (uint64_t)(pages[i].pg.num_values > 0 ? pages[i].pg.num_values : 0);
            }
        }
        if (any) {
            assert_int_not_equal(rc, PA_OK);
            assert_non_null(strstr(e.msg, "of the batch"));
        } else if (rc != PA_OK) {
            fail_msg("round %d: the device refused the batch: %s", round, e.msg);
        }
        pa_err_close(&e);
        for (int gi = 0; gi < ng; gi++) {
            free(hg[gi].offsets), free(hg[gi].bytes), free(hg[gi].validity);
            free(dg[gi].offsets), free(dg[gi].bytes), free(dg[gi].validity);
        }
        for (int i = 0; i < np; i++)
            free_spage(&pages[i]);
    }
}

static void test_strings(void **state)
{
    (void)state;
    int refused = 0, total = 0;
    string_rounds(24, false, &refused, &total);
    assert_int_equal(refused, 0);
}

static void test_strings_damaged(void **state)
{
    (void)state;
    int refused = 0, total = 0;
    string_rounds(40, true, &refused, &total);
    assert_true(refused > total / 10);
    assert_true(refused < total * 9 / 10);
}

/* The contract's refusals: a string page after a refused page of its
 * output, and too small a byte capacity. */
static void test_strings_contract(void **state)
{
    (void)state;
    spage pages[2] = {make_spage(1, S_PLAIN, 0, 100, 0), make_spage(2, S_DICT, 0, 50, 0)};
    sgroup hg = {.first = 0, .n = 2, .maxd = 0, .at = 0, .cap = 400, .bcap = 100000, .start = 0}, dg;
    sgroup_alloc(&hg);
    int32_t status[2];
    pa_err e;
    pa_err_init(&e);
    pages[0].pg.num_values = 99;   /* the page now has bytes left over: refused as corrupt */
    assert_int_not_equal(device_strings(pages, 2, &hg, &dg, 1, status, &e), PA_OK);
    assert_int_equal(status[0], PA_ECORRUPT);
    assert_int_equal(status[1], PA_EINVAL);   /* after a refused page */
    pa_err_close(&e);
    free(dg.offsets), free(dg.bytes), free(dg.validity);
    pages[0].pg.num_values = 100;
    hg.bcap = 10;   /* the strings need more bytes than the output has */
    pa_err_init(&e);
    assert_int_equal(device_strings(pages, 2, &hg, &dg, 1, status, &e), PA_EINVAL);
    assert_int_equal(status[0], PA_EINVAL);
    assert_int_equal(status[1], PA_EINVAL);
    assert_non_null(strstr(e.msg, "page 0 of the batch"));
    pa_err_close(&e);
    free(dg.offsets), free(dg.bytes), free(dg.validity);
    free(hg.offsets), free(hg.bytes), free(hg.validity);
    free_spage(&pages[0]);
    free_spage(&pages[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_strings_damaged),
        cmocka_unit_test(test_strings_contract),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

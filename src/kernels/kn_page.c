/*
 * kn_page.c - the page-level API: split a data page (v1 or v2) into its
 * definition levels and values, turn the levels into the validity bitmap,
 * decode the values densely and spread them to their rows (kernels_int.h,
 * design notes). Also the value-encoding dispatch and the batch of page jobs.
 */
#include "kernels/kernels_int.h"

#define CHUNK 1024

int kn_measure_values(int encoding, const kn_column *col, const kn_dict *dict, const uint8_t *p,
                      size_t size, uint64_t n, uint64_t *string_bytes, pa_err *err)
{
    kn__colinfo ci;
    int rc = kn__colinfo_get(col, &ci, err);
    *string_bytes = 0;
    if (rc != PA_OK || !ci.is_string)
        return rc;
    switch (encoding) {
    case KN_ENC_PLAIN: return kn__plain_measure(&ci, col, p, size, n, string_bytes, err);
    case KN_ENC_PLAIN_DICTIONARY:
    case KN_ENC_RLE_DICTIONARY: return kn__dict_measure(&ci, dict, p, size, n, string_bytes, err);
    case KN_ENC_DELTA_LENGTH_BYTE_ARRAY: return kn__dlba_measure(p, size, n, string_bytes, err);
    case KN_ENC_DELTA_BYTE_ARRAY: return kn__dba_measure(p, size, n, string_bytes, err);
    case KN_ENC_BYTE_STREAM_SPLIT:
        *string_bytes = n * (uint64_t)ci.phys_width;
        return PA_OK;
    default:
        return pa_error(err, PA_EUNSUPPORTED, "encoding %s (%d) for a %s column",
                        kn_encoding_name(encoding), encoding, kn_ptype_name(col->ptype));
    }
}

static int decode_values(int encoding, const kn__colinfo *ci, const kn_column *col,
                         const kn_dict *dict, const uint8_t *p, size_t size, uint64_t n,
                         kn_out *out, uint64_t at, size_t *consumed, pa_err *err)
{
    switch (encoding) {
    case KN_ENC_PLAIN: return kn__plain_decode(ci, col, p, size, n, out, at, consumed, err);
    case KN_ENC_PLAIN_DICTIONARY:
    case KN_ENC_RLE_DICTIONARY: return kn__dict_decode(ci, dict, p, size, n, out, at, consumed, err);
    case KN_ENC_DELTA_BINARY_PACKED: return kn__delta_decode(ci, p, size, n, out, at, consumed, err);
    case KN_ENC_DELTA_LENGTH_BYTE_ARRAY: return kn__dlba_decode(ci, p, size, n, out, at, consumed, err);
    case KN_ENC_DELTA_BYTE_ARRAY: return kn__dba_decode(ci, p, size, n, out, at, consumed, err);
    case KN_ENC_BYTE_STREAM_SPLIT: return kn__bss_decode(ci, col, p, size, n, out, at, consumed, err);
    case KN_ENC_RLE:
        if (ci->conv == KN__CV_BOOL) {
            int rc = kn__check_out(ci, out, at, n, "RLE", err);
            return rc ? rc : kn__bool_rle_decode(p, size, n, out, at, consumed, err);
        }
        __attribute__((fallthrough));
    default:
        return pa_error(err, PA_EUNSUPPORTED, "encoding %s (%d) for a %s column",
                        kn_encoding_name(encoding), encoding, kn_ptype_name(col->ptype));
    }
}

int kn_decode_values(int encoding, const kn_column *col, const kn_dict *dict, const uint8_t *p,
                     size_t size, uint64_t n, kn_out *out, uint64_t at, size_t *consumed,
                     pa_err *err)
{
    kn__colinfo ci;
    int rc = kn__colinfo_get(col, &ci, err);
    if (rc != PA_OK)
        return rc;
    return decode_values(encoding, &ci, col, dict, p, size, n, out, at, consumed, err);
}

/* ------------------------------------------------------------------ pages */

typedef struct parts {
    const uint8_t *def;     /* definition levels (NULL for REQUIRED) */
    size_t def_size;
    bool msb_packed;        /* deprecated BIT_PACKED levels */
    int def_width;
    const uint8_t *values;
    size_t values_size;
} parts;

static int split_page(const kn_page *pg, const kn_column *col, parts *pt, pa_err *err)
{
    memset(pt, 0, sizeof *pt);
    if (pg->num_values < 0)
        return KN__CORRUPT(err, "data page", "negative value count %d", pg->num_values);
    if (!pg->data && pg->size)
        return pa_error(err, PA_EINVAL, "data page without data");
    int maxd = col->max_def_level;
    pt->def_width = kn__bits64((uint64_t)maxd);
    if (pg->version == 2) {
        /* v2 headers say what the levels are: a page that disagrees with
         * the schema (a REQUIRED column turned OPTIONAL in the footer, or
         * back) would otherwise decode as shifted values. */
        if (maxd == 0 && (pg->def_levels_size > 0 || pg->num_nulls > 0))
            return KN__CORRUPT(err, "data page v2", "%u bytes of definition levels and %d NULLs, but the "
                               "schema says the column is REQUIRED: definition levels do not match the schema",
                               pg->def_levels_size, pg->num_nulls);
        if (maxd > 0 && pg->def_levels_size == 0 && pg->num_values > 0)
            return KN__CORRUPT(err, "data page v2", "no definition levels, but the schema says the column "
                               "is OPTIONAL: definition levels do not match the schema");
        if (maxd > 0) {
            if (!pg->levels && pg->def_levels_size)
                return pa_error(err, PA_EINVAL, "data page v2 without its levels");
            pt->def = pg->levels ? pg->levels + pg->rep_levels_size : NULL;
            pt->def_size = pg->def_levels_size;
        }
        pt->values = pg->data;
        pt->values_size = (size_t)pg->size;
        return PA_OK;
    }
    if (pg->version != 1)
        return pa_error(err, PA_EINVAL, "data page version %d", pg->version);
    const uint8_t *p = pg->data;
    size_t size = (size_t)pg->size;
    if (maxd > 0) {
        if (pg->def_level_encoding == KN_ENC_RLE) {
            if (size < 4)
                return KN__CORRUPT(err, "RLE definition levels", "4-byte length prefix missing");
            uint32_t len = kn__ld32(p);
            if (len > size - 4)
                return KN__CORRUPT(err, "RLE definition levels", "length %u runs past the page end", len);
            pt->def = p + 4;
            pt->def_size = len;
            p += 4 + len;
            size -= 4 + (size_t)len;
        } else if (pg->def_level_encoding == KN_ENC_BIT_PACKED) {
            size_t len = ((size_t)pg->num_values * (size_t)pt->def_width + 7) / 8;
            if (len > size)
                return KN__CORRUPT(err, "BIT_PACKED definition levels", "truncated");
            pt->def = p;
            pt->def_size = len;
            pt->msb_packed = true;
            p += len;
            size -= len;
        } else {
            return pa_error(err, PA_EUNSUPPORTED, "definition level encoding %s (%d)",
                            kn_encoding_name(pg->def_level_encoding), pg->def_level_encoding);
        }
    }
    pt->values = p;
    pt->values_size = size;
    return PA_OK;
}

/* Levels -> validity bits [at, at+n) (when validity != NULL) and the count
 * of valid rows. */
static int decode_levels(const parts *pt, const kn_column *col, uint64_t n, uint8_t *validity,
                         uint64_t at, uint64_t *non_null, pa_err *err)
{
    uint32_t maxd = (uint32_t)col->max_def_level;
    uint64_t valid = 0;
    if (maxd == 0) {
        if (validity)
            kn__bits_fill(validity, at, n, true);
        *non_null = n;
        return PA_OK;
    }
    if (pt->msb_packed) {
        int w = pt->def_width;
        for (uint64_t i = 0; i < n; i++) {
            uint32_t lv = 0;
            for (int b = 0; b < w; b++) {
                uint64_t bit = i * (uint64_t)w + (uint64_t)b;
                lv = (lv << 1) | ((pt->def[bit >> 3] >> (7 - (bit & 7))) & 1);
            }
            bool ok = lv == maxd;
            if (validity)
                kn__bits_fill(validity, at + i, 1, ok);
            valid += ok;
        }
        *non_null = valid;
        return PA_OK;
    }
    kn__rle r;
    kn__rle_init(&r, pt->def, pt->def_size, pt->def_width, "RLE definition levels");
    uint32_t buf[CHUNK];
    uint64_t i = 0;
    while (i < n) {
        int rc = kn__rle_next_run(&r, err);
        if (rc != PA_OK)
            return rc;
        if (!r.packed) {
            uint64_t c = r.left < n - i ? r.left : n - i;
            bool ok = r.value == maxd;
            if (r.value > maxd)
                return KN__CORRUPT(err, r.what, "level %u above the maximum %u", r.value, maxd);
            if (validity)
                kn__bits_fill(validity, at + i, c, ok);
            valid += ok ? c : 0;
            r.left -= c;
            i += c;
            continue;
        }
        size_t c = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if ((rc = kn__rle_get(&r, buf, c, err)) != PA_OK)
            return rc;
        size_t k = 0;
        if (((at + i) & 7) == 0) {
            /* Byte-aligned: assemble 8 validity bits at a time. */
            for (; k + 8 <= c; k += 8) {
                unsigned byte = 0;
                for (int b = 0; b < 8; b++) {
                    if (buf[k + b] > maxd)
                        return KN__CORRUPT(err, r.what, "level %u above the maximum %u", buf[k + b], maxd);
                    byte |= (unsigned)(buf[k + b] == maxd) << b;
                }
                valid += (uint64_t)__builtin_popcount(byte);
                if (validity)
                    validity[(at + i + k) >> 3] = (uint8_t)byte;
            }
        }
        for (; k < c; k++) {
            if (buf[k] > maxd)
                return KN__CORRUPT(err, r.what, "level %u above the maximum %u", buf[k], maxd);
            bool ok = buf[k] == maxd;
            valid += ok;
            if (validity) {
                uint64_t b = at + i + k;
                validity[b >> 3] = (uint8_t)((validity[b >> 3] & ~(1u << (b & 7))) | ((unsigned)ok << (b & 7)));
            }
        }
        i += c;
    }
    /* Levels left over (beyond the padding of a bit-packed group) mean the
     * stream is not this page's levels, e.g. the schema made a REQUIRED
     * column OPTIONAL and values were read as levels. */
    if ((!r.packed && r.left > 0) || r.p != r.end)
        return KN__CORRUPT(err, r.what, "the levels hold more than the page's %llu values: "
                           "definition levels do not match the schema", (unsigned long long)n);
    *non_null = valid;
    return PA_OK;
}

/* The 8 validity bits starting at bit b (all inside the bitmap's rows). */
static inline unsigned byte_at(const uint8_t *v, uint64_t b)
{
    unsigned x = v[b >> 3] >> (b & 7);
    if (b & 7)
        x |= (unsigned)v[(b >> 3) + 1] << (8 - (b & 7));
    return x & 0xff;
}

/* Move dense values [at, at+m) to their rows in [at, at+n) (see the notes). */
static void spread(const kn__colinfo *ci, kn_out *out, uint64_t at, uint64_t n, uint64_t m)
{
    const uint8_t *v = out->validity;
    if (m == n)
        return;
    if (ci->is_string) {
        int32_t *o = out->offsets;
        uint64_t c = m;
        /* o[at+n] is also the next page's start offset, which a task
         * decoding that page may be reading: it already holds the right
         * value when the page's size was measured, so store it only when
         * it differs. */
        if (o[at + n] != o[at + m])
            o[at + n] = o[at + m];
        c -= kn__bit_get(v, at + n - 1);
        for (uint64_t i = n - 1; i-- > 0;) {
            o[at + i + 1] = o[at + c];
            c -= kn__bit_get(v, at + i);
        }
        return;
    }
    uint64_t j = m;
    /* Whole bytes of validity (8 rows) move or clear at once; once j == i
     * every remaining row is valid and already in place. */
    switch (ci->out_width) {
#define KN__SPREAD(T)                                                                     \
    {                                                                                     \
        T *o = (T *)out->values + at;                                                     \
        for (uint64_t i = n; i > 0 && j < i;) {                                           \
            if (i >= 8) {                                                                 \
                unsigned byte = byte_at(v, at + i - 8);                                   \
                if (byte == 0xff) {                                                       \
                    memmove(o + i - 8, o + j - 8, 8 * sizeof(T));                         \
                    i -= 8, j -= 8;                                                       \
                    continue;                                                             \
                }                                                                         \
                if (byte == 0) {                                                          \
                    memset(o + i - 8, 0, 8 * sizeof(T));                                  \
                    i -= 8;                                                               \
                    continue;                                                             \
                }                                                                         \
            }                                                                             \
            i--;                                                                          \
            o[i] = kn__bit_get(v, at + i) ? o[--j] : (T)0;                                \
        }                                                                                 \
        break;                                                                            \
    }
    case 1: KN__SPREAD(uint8_t)
    case 4: KN__SPREAD(uint32_t)
    case 16: KN__SPREAD(unsigned __int128)
    default: KN__SPREAD(uint64_t)
#undef KN__SPREAD
    }
}

int kn_page_measure(const kn_page *pg, const kn_column *col, const kn_dict *dict,
                    kn_page_info *info, pa_err *err)
{
    kn__colinfo ci;
    parts pt;
    uint64_t m = 0;
    int rc;
    memset(info, 0, sizeof *info);
    if ((rc = kn__colinfo_get(col, &ci, err)) != PA_OK || (rc = split_page(pg, col, &pt, err)) != PA_OK ||
        (rc = decode_levels(&pt, col, (uint64_t)pg->num_values, NULL, 0, &m, err)) != PA_OK)
        return rc;
    info->rows = (uint64_t)pg->num_values;
    info->non_null = m;
    return kn_measure_values(pg->encoding, col, dict, pt.values, pt.values_size, m,
                             &info->string_bytes, err);
}

/* A PLAIN page with bytes left after its m values. */
static int plain_left(pa_err *err, const char *enc, size_t left, uint64_t m)
{
    return KN__CORRUPT(err, enc, "%zu bytes after the page's %llu values: the page does not match the schema "
                       "(definition levels?)", left, (unsigned long long)m);
}

int kn_page_decode(const kn_page *pg, const kn_column *col, const kn_dict *dict, kn_out *out,
                   uint64_t row_offset, pa_err *err)
{
    kn__colinfo ci;
    parts pt;
    uint64_t n = (uint64_t)(pg->num_values < 0 ? 0 : pg->num_values), m = 0;
    int rc;
    const char *enc = kn_encoding_name(pg->encoding);
    if ((rc = kn__colinfo_get(col, &ci, err)) != PA_OK || (rc = split_page(pg, col, &pt, err)) != PA_OK ||
        (rc = kn__check_out(&ci, out, row_offset, n, enc, err)) != PA_OK)
        return rc;
    if (col->max_def_level > 0 && !out->validity)
        return pa_error(err, PA_EINVAL, "OPTIONAL column decoded without a validity bitmap");
    if ((rc = decode_levels(&pt, col, n, out->validity, row_offset, &m, err)) != PA_OK)
        return rc;
    if (pg->version == 2 && col->max_def_level > 0 && (uint64_t)pg->num_nulls != n - m)
        return KN__CORRUPT(err, "data page v2", "header says %d NULLs, levels say %llu",
                           pg->num_nulls, (unsigned long long)(n - m));
    /* PLAIN values fill the page exactly: bytes left over are levels the
     * schema does not expect (an OPTIONAL column made REQUIRED in the
     * footer) or values it does not count. Fixed-width values are checked
     * before they are decoded, as the device decoder does, so a page with
     * bytes left over is corrupt whatever its values hold (an INT96 out of
     * range would be "unsupported"). */
    size_t fixed = (size_t)(m * (uint64_t)ci.phys_width), used = 0;
    if (pg->encoding == KN_ENC_PLAIN && ci.phys_width > 0 && fixed < pt.values_size)
        return plain_left(err, enc, pt.values_size - fixed, m);
    if ((rc = decode_values(pg->encoding, &ci, col, dict, pt.values, pt.values_size, m, out,
                            row_offset, &used, err)) != PA_OK)
        return rc;
    if (pg->encoding == KN_ENC_BYTE_STREAM_SPLIT && used != pt.values_size)
        return KN__CORRUPT(err, enc, "%zu bytes for %llu values of %d bytes", pt.values_size,
                           (unsigned long long)m, ci.phys_width);
    if (pg->encoding == KN_ENC_PLAIN && used != pt.values_size)   /* (strings and BOOLEANs: after) */
        return plain_left(err, enc, pt.values_size - used, m);
    spread(&ci, out, row_offset, n, m);
    return PA_OK;
}

/* ------------------------------------------------------------------- jobs */

int kn_page_job_run(kn_page_job *job, pa_err *err)
{
    kn_page pg = job->page;
    int rc = PA_OK;
    bool compressed = job->codec != KN_CODEC_UNCOMPRESSED;
    uint64_t lv = 0;
    const uint8_t *src = job->src;
    uint64_t src_size = job->src_size, raw = job->uncompressed_size;
    if (pg.version == 2) {
        lv = (uint64_t)pg.rep_levels_size + pg.def_levels_size;
        if (lv > src_size || lv > raw) {
            rc = KN__CORRUPT(err, "data page v2", "level sizes %llu exceed the page",
                             (unsigned long long)lv);
            goto done;
        }
        pg.levels = src;
        src += lv;
        src_size -= lv;
        raw -= lv;
        compressed = compressed && job->v2_is_compressed;
    }
    if (compressed) {
        if (!job->scratch || job->scratch_size < raw) {
            rc = pa_error(err, PA_EINVAL, "page job: scratch of %llu bytes, need %llu",
                          (unsigned long long)job->scratch_size, (unsigned long long)raw);
            goto done;
        }
        if ((rc = kn_decompress(job->codec, src, (size_t)src_size, job->scratch, (size_t)raw, err)) != PA_OK)
            goto done;
        pg.data = job->scratch;
        pg.size = raw;
    } else {
        if (src_size != raw) {
            rc = KN__CORRUPT(err, "data page", "%llu bytes stored, header says %llu uncompressed",
                             (unsigned long long)src_size, (unsigned long long)raw);
            goto done;
        }
        pg.data = src;
        pg.size = src_size;
    }
    const kn_dict *dict = (job->dict.values || job->dict.offsets) ? &job->dict : NULL;
    rc = kn_page_decode(&pg, &job->col, dict, &job->out, job->row_offset, err);
done:
    job->status = rc;
    return rc;
}

static void run_page_job(void *ctx, size_t i)
{
    void **a = ctx;
    kn_page_job *jobs = a[0];
    kn_page_job_run(&jobs[i], a[1]);
}

int kn_page_decode_batch(kn_page_job *jobs, size_t n, pa_threadpool *tp, pa_err *err)
{
    void *ctx[2] = {jobs, err};
    pa_parallel_for(tp, n, run_page_job, ctx);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].status != PA_OK)
            return jobs[i].status;
    return PA_OK;
}

/* ------------------------------------------------------ kn_decode_pages */

bool kn_decode_pages_supported(const kn_page_job *j)
{
    kn__colinfo ci;
    pa_err e;
    pa_err_init(&e);
    bool ok = kn__colinfo_get(&j->col, &ci, &e) == PA_OK;
    pa_err_close(&e);
    if (!ok || j->codec != KN_CODEC_UNCOMPRESSED || (j->page.version != 1 && j->page.version != 2) ||
        (j->page.version == 1 && j->col.max_def_level > 0 && j->page.def_level_encoding != KN_ENC_RLE))
        return false;
    switch (j->page.encoding) {
    case KN_ENC_PLAIN:
        return ci.conv == KN__CV_I32 || ci.conv == KN__CV_I32_I64 || ci.conv == KN__CV_I64 ||
               ci.conv == KN__CV_F32_F64 || ci.conv == KN__CV_F64 || ci.conv == KN__CV_BOOL ||
               ci.conv == KN__CV_BA_STR || ci.conv == KN__CV_I96_NS;
    case KN_ENC_DELTA_BINARY_PACKED:
        return ci.conv == KN__CV_I32 || ci.conv == KN__CV_I32_I64 || ci.conv == KN__CV_I64;
    case KN_ENC_BYTE_STREAM_SPLIT:
        return ci.conv == KN__CV_I32 || ci.conv == KN__CV_I32_I64 || ci.conv == KN__CV_I64 ||
               ci.conv == KN__CV_F32_F64 || ci.conv == KN__CV_F64;
    case KN_ENC_RLE: return ci.conv == KN__CV_BOOL;
    case KN_ENC_DELTA_LENGTH_BYTE_ARRAY: return ci.conv == KN__CV_BA_STR;
    case KN_ENC_PLAIN_DICTIONARY:
    case KN_ENC_RLE_DICTIONARY: return ci.conv != KN__CV_BOOL && ci.out_width <= 8;   /* 16-byte decimals: host */
    default: return false;
    }
}

/* The cpu device's loop: the jobs the device decodes, every page tried, the
 * first failure reported with its page as the GPU kernels word it. String
 * pages run in batch order, each continuing where the page of its output
 * before it ended (kn_page_decode writes offsets[row_offset + num_values]),
 * under the same rules as the GPU's start_k. */
int kn__cpu_decode_pages(const kn_ctx *ctx, kn_page_job *jobs, int64_t n, pa_err *err)
{
    (void)ctx;
    if (n < 0)
        return pa_error(err, PA_EINVAL, "kn_decode_pages: %lld pages", (long long)n);
    int first = PA_OK;
    const int32_t *prev = NULL;   /* the last string page's output, */
    uint64_t next_row = 0;        /* the row after it */
    bool prev_ok = false;         /* and whether it decoded */
    for (int64_t i = 0; i < n; i++) {
        kn_page_job *j = &jobs[i];
        kn__colinfo ci;
        bool str = kn__colinfo_get(&j->col, &ci, NULL) == PA_OK && ci.is_string;
        pa_err e;
        pa_err_init(&e);
        int rc;
        bool cont = str && j->out.offsets && j->out.offsets == prev;
        bool dict = j->page.encoding == KN_ENC_PLAIN_DICTIONARY || j->page.encoding == KN_ENC_RLE_DICTIONARY;
        if (cont && j->row_offset != next_row)
            rc = pa_error(&e, PA_EINVAL, "a string page that does not follow the page before it in its output");
        else if (cont && !prev_ok)
            rc = pa_error(&e, PA_EINVAL, "a string page after a refused page of its output");
        else if (!kn_decode_pages_supported(j))
            rc = pa_error(&e, PA_EUNSUPPORTED,
                          "the page's encoding, levels or column type are not decoded on the device");
        else if (dict && (str ? !j->dict.offsets : !j->dict.values))
            rc = pa_error(&e, PA_EINVAL, "a dictionary page job without its dictionary");
        else
            rc = kn_page_job_run(j, &e);
        j->status = rc;
        if (str) {
            prev = j->out.offsets;
            next_row = j->row_offset + (uint64_t)(j->page.num_values < 0 ? 0 : j->page.num_values);
            prev_ok = rc == PA_OK;
        }
        if (rc != PA_OK && first == PA_OK) {
            first = rc;
            kn__batch_error(err, rc, j->where, i, e.msg);
        }
        pa_err_close(&e);
    }
    return first;
}
